"""A fake OpenAI-compatible chat server on 127.0.0.1, for tests, benchmarks and demos.

A public testing aid, shipped in the package on purpose (docs/configuration.md):
the suite, the benchmarks and your own tests start it; nothing else imports it.

It speaks real HTTP/1.1 so that litellm, the openai SDK and httpx run their
whole code path (connection pooling, retries, SSE parsing) against it. Replies
come from rules a test sets; faults (429, 500, hang, disconnect, malformed,
empty, 401, 400) are injected per rule or at random from a seeded stream.

    with FakeLLMServer(latency=0.2) as server:
        server.add_rule("Score: 4", match="critic", times=1)
        litellm.completion(model="openai/fake-model", api_base=server.base_url, ...)
        assert server.calls == 1

As a pytest fixture::

    @pytest.fixture
    def llm_server():
        with FakeLLMServer() as server:
            yield server

From a shell, `python -m debate_tui.testing.fake_server --latency 0.2` prints
its base URL on the first line of stdout and serves until Ctrl+C.

This module is the server (its settings, routing and pacing) and its command
line; its parts each do one job: `fake_rules` (what a test scripts and what the
server saw), `fake_http` (the HTTP/1.1 wire), `fake_replies` (completions and
stream events in OpenAI's shape), `fake_batches` and `hostile_replies`.

Provider batches: `server.batches` (fake_batches) serves OpenAI's files and
batches endpoints, and Azure's under `/openai`; each line of a job is answered
by the same rules as a live call (recorded with path
`batch:/v1/chat/completions`), a faulted one goes to the job's error file, and
jobs can be made slow, failed or expired.

A concurrency-limited key: with `max_in_flight = N` a chat request that arrives
while N are being answered gets a 429; `peak_in_flight` is the most answered at once.

Retry-After: a 429 carries `Retry-After` (whole seconds, rounded up, as HTTP
says) and `retry-after-ms` (exact). The openai SDK reads `retry-after-ms`
first and honours any delay in (0, 120] seconds; a delay of 0 is ignored and
the SDK falls back to its own backoff of about 0.5 s.

Log-probabilities: a request with `logprobs: true` gets them, per token of a
simple tokenizer (`fake_tokens`), each token certain (log-probability 0) unless
its rule scripts the alternatives at the reply's score token (its last number):

    server.add_rule("Score: 3", logprobs={"3": math.log(0.7), "4": math.log(0.2), "2": math.log(0.1)})

At most `top_logprobs` alternatives are sent, likeliest first; a streamed reply
then comes one token per chunk, each chunk with its token's log-probabilities,
as OpenAI sends them. `server.logprobs = False` plays a provider that ignores
the parameter.

Real models' ways of ending a reply (each a fault, per rule or drawn at random):
"endless" streams new text until the client hangs up (a model that never
stops and a server that ignores `max_tokens`); "cut" ends the stream with
neither a finish reason nor `[DONE]`; "length" stops with finish reason
`length`; "error200" answers 200 with an error object as the body (or as a
stream's first event), "error_midstream" sends one after half the reply;
"overflow" is llama.cpp's "requested tokens exceed context window" inside a
200 stream (a 400 for a plain call). A server `context_window` gives that
overflow to every request whose prompt and `max_tokens` pass it. A request's
`max_tokens` is honoured (`length` once the reply has that many fake tokens).
A rule's `chunk_delay` makes a slow stream: one chunk every few seconds.
Bodies that hurt by size or shape (a gzip bomb, a 1 GB reply, an SSE line that
never ends, an HTML page, `choices: []`) are the faults of hostile_replies.

401 and 400: errors no retry can fix. The 401 body echoes the request's
Authorization header, as some proxies do, so tests can prove that a key in a
provider's error message never reaches a file or the screen.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any

from debate_tui.testing.fake_batches import FakeBatches
from debate_tui.testing.fake_http import (
    HttpRequest,
    Line,
    error_object,
    head,
    read_request,
    send,
    send_error,
    send_json,
)
from debate_tui.testing.fake_replies import (
    ERROR_IN_200,
    MALFORMED,
    OVERFLOW,
    Plan,
    completion_payload,
    envelope,
    events,
)
from debate_tui.testing.fake_rules import FAULTS as FAULTS  # re-exported: tests name the faults from here
from debate_tui.testing.fake_rules import (
    Match,
    Reply,
    Request,
    RequestRecord,
    Rule,
    fake_tokens,
    fault_name,
    prompt_text,
)
from debate_tui.testing.fake_rules import approx_tokens as approx_tokens  # re-exported, as FAULTS
from debate_tui.testing.hostile_replies import HOSTILE_FAULTS, send_hostile

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
MODEL_PATHS = ("/v1/models", "/models")
BATCH_LINE_PATH = "batch:/v1/chat/completions"
"""The path recorded for a request answered inside a batch job (see fake_batches)."""


class FakeLLMServer:
    """The server; settings may be changed while it runs and apply to the next request."""

    def __init__(
        self,
        *,
        port: int = 0,
        default_reply: Reply = "Score: 3",
        latency: float = 0.0,
        chunk_delay: float = 0.0,
        chunk_size: int = 8,
        fault_rate: float = 0.0,
        fault_kinds: Iterable[str] = ("429", "500", "disconnect", "malformed", "empty"),
        seed: int = 0,
        retry_after: float = 1.0,
        hang_seconds: float = 30.0,
        models: Iterable[str] = ("fake-model", "fake-debater", "fake-judge"),
        logprobs: bool = True,
        context_window: int | None = None,
        max_in_flight: int | None = None,
    ) -> None:
        self.host = "127.0.0.1"
        self.port = port
        self.default_reply = default_reply
        self.latency = latency
        """Seconds before the first byte of every response."""
        self.chunk_delay = chunk_delay
        """Seconds between streamed chunks."""
        self.chunk_size = chunk_size
        """Characters of reply text per streamed chunk."""
        self.fault_rate = fault_rate
        self.retry_after = retry_after
        """Seconds a 429 asks the client to wait."""
        self.hang_seconds = hang_seconds
        """How long a hung request stays silent before its connection is dropped."""
        self.models = tuple(models)
        self.logprobs = logprobs
        """Answer `logprobs: true` with log-probabilities; False plays a provider that ignores it."""
        self.context_window = context_window
        """Fake tokens of prompt plus max_tokens a request may ask for; over it: the "overflow" fault."""
        self.max_in_flight = max_in_flight
        """A provider's concurrency limit: a chat request arriving while this many are answered gets a 429."""
        self.peak_in_flight = 0
        """The most chat requests answered at once (429s not counted), since the start or `reset`."""
        self.hangups: list[float] = []
        """time.monotonic() of each client that closed its connection before its reply ended (a streamed reply
        or a hang): how tests see that a client which stops reading stops the server generating."""
        self._in_flight = 0
        self.usage: dict[str, int] | None = None
        """Usage reported instead of the counted one: a provider's odd numbers (negative, huge)."""
        self.reply_model: str | None = None
        """The model replies name instead of the requested one: Azure names the deployment's model."""
        self._lock = threading.RLock()  # reentrant: match callables run under it and may read .requests
        self._rng = random.Random()
        self.fault_kinds = tuple(fault_kinds)
        self.seed = seed
        self._initial: dict[str, Any] = {
            name: getattr(self, name)
            for name in ("default_reply", "latency", "chunk_delay", "chunk_size", "fault_rate",
                         "fault_kinds", "seed", "retry_after", "hang_seconds", "logprobs", "context_window",
                         "usage", "max_in_flight", "peak_in_flight", "reply_model")
        }
        self._rules: list[Rule] = []
        self._records: list[RequestRecord] = []
        self._ids = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self.batches = FakeBatches(self._answer_line)
        """The files and batches endpoints (fake_batches): jobs answered by the same rules."""

    @property
    def seed(self) -> int:
        """Setting the seed restarts the random fault stream, so a run's faults replay."""
        return self._seed

    @seed.setter
    def seed(self, value: int) -> None:
        self._seed = value
        self._rng.seed(value)

    @property
    def fault_kinds(self) -> tuple[str, ...]:
        """Kinds drawn at random.

        Left out by default: "hang" (each costs a client timeout), "401" and "400" (no retry can help).
        """
        return self._fault_kinds

    @fault_kinds.setter
    def fault_kinds(self, kinds: Iterable[str | int]) -> None:
        checked = tuple(fault_name(kind) for kind in kinds)
        if not checked:
            raise ValueError("fault_kinds must name at least one fault")
        self._fault_kinds = checked

    # -- lifecycle -------------------------------------------------------

    def start(self) -> FakeLLMServer:
        """Bind and serve from a background thread with its own event loop."""
        if self._thread is not None:
            raise RuntimeError("FakeLLMServer is already running")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fake-llm-server", daemon=True)
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self._open(), self._loop).result(timeout=5)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Drop every connection, hung ones included, and join the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._close(), loop).result(timeout=5)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            loop.close()
            self._loop = self._thread = self._server = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """Root for OpenAI clients, e.g. http://127.0.0.1:PORT/v1."""
        if self._server is None:
            raise RuntimeError("FakeLLMServer is not running")
        return f"http://{self.host}:{self.port}/v1"

    async def _open(self) -> None:
        self._server = await asyncio.start_server(self._serve_connection, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close(self) -> None:
        """Cancel every task on this loop (all are connections) until none is left.

        Rounds repeat because a connection accepted just before close() only gets
        its task a loop iteration later.
        """
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()
        while True:
            await asyncio.sleep(0)
            tasks = asyncio.all_tasks() - {asyncio.current_task()}
            if not tasks:
                break
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.sleep(0)  # transports release their sockets in connection_lost callbacks

    # -- scripting -------------------------------------------------------

    def add_rule(
        self,
        reply: Reply | None = None,
        match: Match | None = None,
        model: str | None = None,
        times: int | None = None,
        fault: str | int | None = None,
        latency: float | None = None,
        logprobs: dict[str, float] | None = None,
        chunk_delay: float | None = None,
        error: tuple[int, str] | None = None,
    ) -> Rule:
        """Append a rule; rules are tried in the order they were added."""
        rule = Rule(reply=reply, match=match, model=model, times=times,
                    fault=None if fault is None else fault_name(fault), latency=latency, logprobs=logprobs,
                    chunk_delay=chunk_delay, error=error)
        with self._lock:
            self._rules.append(rule)
        return rule

    def replies_in_order(self, model: str | None, replies: Iterable[Reply]) -> list[Rule]:
        """Script a conversation: each reply answers exactly one request, in turn."""
        return [self.add_rule(reply, model=model, times=1) for reply in replies]

    def reset(self) -> None:
        """Forget rules and records and restore the constructor's settings.

        A server shared by several tests must not leak one test's faults into the next.
        """
        with self._lock:
            self._rules.clear()
            self._records.clear()
            self.hangups.clear()
            self.batches.reset()
            for name, value in self._initial.items():
                setattr(self, name, value)

    @property
    def requests(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._records)

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self._records)

    # -- HTTP ------------------------------------------------------------

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (request := await read_request(reader)) is not None:
                if not await self._respond(request, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # a client that goes away or speaks nonsense just loses its connection
        except asyncio.CancelledError:
            pass  # stop() ends us; Python 3.11's start_server logs a traceback for a task left cancelled
        finally:
            writer.close()

    async def _respond(self, request: HttpRequest, reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False means the connection must be closed."""
        if request.path not in CHAT_PATHS and (answer := self.batches.respond(
                request.method, request.path, request.headers, request.body, request.query)) is not None:
            self._record(request, {}, None)
            return await send(writer, *answer, request.keep_alive)
        if request.method != "POST" or request.path not in CHAT_PATHS:
            self._record(request, {}, None)  # recorded too: a doubled /v1 in a base URL shows up here
            if request.method == "GET" and request.path in MODEL_PATHS:
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models]
                return await send_json(writer, 200, {"object": "list", "data": data}, request.keep_alive)
            return await send_error(writer, 404, f"no route for {request.method} {request.path}",
                                     request.keep_alive)
        try:
            body = json.loads(request.body)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._record(request, {}, None)
            return await send_error(writer, 400, "body must be a JSON object", request.keep_alive)
        try:
            plan = self._plan(request, body)
        except Exception as exc:  # a broken test callable should be visible, not a dropped connection
            return await send_error(writer, 500, f"rule match failed: {exc!r}", request.keep_alive)
        try:
            return await self._answer(request, body, plan, Line(reader, writer))
        finally:
            if plan.admitted:
                with self._lock:
                    self._in_flight -= 1

    async def _answer(self, request: HttpRequest, body: Request, plan: Plan, line: Line) -> bool:
        writer = line.writer
        if plan.fault == "hang":
            if await line.hung_up_within(self.hang_seconds):
                self._hung_up()
            return False
        if plan.latency > 0:
            await asyncio.sleep(plan.latency)
        if plan.rule is not None and plan.rule.error is not None:
            status, message = plan.rule.error
            return await send_error(writer, status, message, request.keep_alive)
        if plan.fault in HOSTILE_FAULTS:
            return await send_hostile(plan.fault, writer, envelope(plan, ""), bool(body.get("stream")))
        if plan.fault == "429":
            headers = {"Retry-After": str(math.ceil(self.retry_after)),
                       "retry-after-ms": str(round(self.retry_after * 1000))}
            return await send_error(writer, 429, "fake rate limit", request.keep_alive, headers)
        if plan.fault == "500":
            return await send_error(writer, 500, "fake server error", request.keep_alive)
        if plan.fault == "401":
            echoed = request.headers.get("authorization", "(none)")
            return await send_error(writer, 401, f"Incorrect API key provided. You sent Authorization: {echoed}",
                                     request.keep_alive)
        if plan.fault == "400":
            return await send_error(writer, 400, "fake bad request: unsupported parameter", request.keep_alive)
        if plan.fault == "disconnect" and not body.get("stream"):
            writer.transport.abort()
            return False
        if plan.fault == "overflow" and not body.get("stream"):
            return await send_error(writer, 400, plan.overflow, request.keep_alive)
        if plan.fault in ("error200", "error_midstream") and not body.get("stream"):
            return await send_json(writer, 200, error_object(ERROR_IN_200, 500), request.keep_alive)
        try:
            text = self._reply_text(plan)
        except Exception as exc:
            return await send_error(writer, 500, f"reply callable failed: {exc!r}", request.keep_alive)
        if body.get("stream"):
            return await self._stream(line, plan, text, request.keep_alive)
        return await self._send_completion(writer, plan, text, request.keep_alive)

    def _plan(self, request: HttpRequest, body: Request) -> Plan:
        """Pick rule and fault and record the request, atomically, so counts stay consistent."""
        with self._lock:
            rule = next((r for r in self._rules if r.applies(body)), None)
            if rule is not None:
                rule.hits += 1
            fault = rule.fault if rule is not None else None
            if fault is None and self.fault_rate > 0 and self._rng.random() < self.fault_rate:
                fault = self._rng.choice(self.fault_kinds)
            requested = self._requested_tokens(body)
            if fault is None and requested > (self.context_window or math.inf):
                fault = "overflow"
            live = request.path != BATCH_LINE_PATH
            if fault is None and live and self._in_flight >= (self.max_in_flight or math.inf):
                fault = "429"
            admitted = fault is None and live
            if admitted:
                self._in_flight += 1
                self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
            self._record_locked(request, body, fault)
            self._ids += 1
            ident = f"chatcmpl-fake-{self._ids}"
        latency = rule.latency if rule is not None and rule.latency is not None else self.latency
        chunk_delay = rule.chunk_delay if rule is not None and rule.chunk_delay is not None else self.chunk_delay
        overflow = OVERFLOW.format(tokens=requested, window=self.context_window or 8192)
        return Plan(ident, body, rule, fault, latency, chunk_delay,
                    model=self.reply_model or body.get("model") or self.models[0], logprobs=self.logprobs,
                    usage=self.usage, chunk_size=self.chunk_size, overflow=overflow, admitted=admitted)

    def _answer_line(self, body: Request) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """One request of a batch job, answered by the rules: (completion payload, None) or (None, error)."""
        plan = self._plan(HttpRequest("POST", BATCH_LINE_PATH, {}, b"", True), body)
        if plan.rule is not None and plan.rule.error is not None:
            status, message = plan.rule.error
            return None, error_object(message, status)["error"]
        if plan.fault is not None and plan.fault != "length":
            return None, error_object(f"fake {plan.fault}", 500)["error"]
        try:
            return completion_payload(plan, self._reply_text(plan)), None
        except Exception as exc:
            return None, error_object(f"reply callable failed: {exc!r}", 500)["error"]

    def _requested_tokens(self, body: Request) -> int:
        return len(fake_tokens(prompt_text(body))) + int(body.get("max_tokens") or 0)

    def _record(self, request: HttpRequest, body: Request, fault: str | None) -> None:
        with self._lock:
            self._record_locked(request, body, fault)

    def _record_locked(self, request: HttpRequest, body: Request, fault: str | None) -> None:
        self._records.append(RequestRecord(
            method=request.method, path=request.path, model=body.get("model"),
            messages=list(body.get("messages") or []), stream=bool(body.get("stream")), body=body,
            has_auth="authorization" in request.headers or "api-key" in request.headers, fault=fault,
            at=time.monotonic(),
        ))

    def _reply_text(self, plan: Plan) -> str:
        if plan.fault == "empty":
            return ""
        reply = plan.rule.reply if plan.rule is not None else None
        if reply is None:
            reply = self.default_reply
        return reply(plan.request) if callable(reply) else reply

    async def _send_completion(self, writer: asyncio.StreamWriter, plan: Plan, text: str,
                               keep_alive: bool) -> bool:
        if plan.fault == "malformed":
            return await send(writer, 200, MALFORMED.encode(), "application/json", keep_alive)
        return await send_json(writer, 200, completion_payload(plan, text), keep_alive)

    def _hung_up(self) -> None:
        with self._lock:
            self.hangups.append(time.monotonic())

    async def _stream(self, line: Line, plan: Plan, text: str, keep_alive: bool) -> bool:
        """SSE over chunked transfer encoding, so the connection can be kept alive."""
        writer = line.writer
        writer.write(head(200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                 "Transfer-Encoding": "chunked"}, keep_alive))
        first = True
        for event in events(plan, text):
            if not first and plan.chunk_delay > 0 and await line.hung_up_within(plan.chunk_delay):
                self._hung_up()
                return False
            if writer.transport.is_closing() or line.reader.at_eof():  # the client hung up: drain() would not say so
                self._hung_up()
                return False
            first = False
            data = f"data: {event}\n\n".encode()
            writer.write(b"%x\r\n%s\r\n" % (len(data), data))
            try:
                await writer.drain()
            except ConnectionError:
                self._hung_up()
                raise
        if plan.fault == "disconnect":
            writer.transport.abort()
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return keep_alive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m debate_tui.testing.fake_server",
        description="Fake OpenAI-compatible chat server on 127.0.0.1. "
                    "Prints its base URL, then serves until Ctrl+C.",
    )
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before the first byte")
    parser.add_argument("--chunk-delay", type=float, default=0.0, help="seconds between streamed chunks")
    parser.add_argument("--reply", default="Score: 3", help="reply when no rule matches")
    parser.add_argument("--rules", metavar="FILE.json",
                        help="a JSON file holding a list of rules: {match, model, reply, times, fault, latency, "
                             "logprobs}")
    parser.add_argument("--fault-rate", type=float, default=0.0,
                        help="share of requests given a random fault")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random fault stream")
    parser.add_argument("--max-in-flight", type=int, help="answer 429 to a request beyond this many at once")
    parser.add_argument("--retry-after", type=float, default=1.0, help="seconds a 429 asks the client to wait")
    args = parser.parse_args(argv)

    server = FakeLLMServer(port=args.port, default_reply=args.reply, latency=args.latency,
                           chunk_delay=args.chunk_delay, fault_rate=args.fault_rate, seed=args.seed,
                           max_in_flight=args.max_in_flight, retry_after=args.retry_after)
    if args.rules:
        try:
            with open(args.rules, encoding="utf-8") as handle:
                for spec in json.load(handle):
                    server.add_rule(**spec)
        except (OSError, ValueError, TypeError) as exc:
            parser.error(f"--rules {args.rules}: {exc}")
    server.start()
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
