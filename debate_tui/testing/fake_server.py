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
import http
import itertools
import json
import math
import random
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from debate_tui.testing.fake_batches import FakeBatches
from debate_tui.testing.hostile_replies import HOSTILE_FAULTS, send_hostile

Request = dict[str, Any]
"""The JSON body of a chat completion request, as the client sent it."""
Reply = str | Callable[[Request], str]
Match = str | re.Pattern[str] | Callable[[Request], bool]

FAULTS = ("429", "500", "hang", "disconnect", "malformed", "empty", "401", "400",
          "endless", "cut", "length", "error200", "error_midstream", "overflow", *HOSTILE_FAULTS)
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
MODEL_PATHS = ("/v1/models", "/models")
BATCH_LINE_PATH = "batch:/v1/chat/completions"
"""The path recorded for a request answered inside a batch job (see fake_batches)."""
MALFORMED = '{"id": "chatcmpl-fake", "choices": [{"delta": {"content": '
"""Cut-off JSON: what a proxy that truncates a body would deliver."""
_TOKEN = re.compile(r"\d+|[^\W\d_]+|\s+|\S")
OVERFLOW = "Requested tokens ({tokens}) exceed context window of {window}"
"""llama.cpp's words for a prompt and max_tokens over its window."""
ERROR_IN_200 = "the model failed while generating"


def approx_tokens(text: str) -> int:
    """Deterministic stand-in for a tokenizer: about 4 tokens per 3 words."""
    return math.ceil(len(text.split()) * 4 / 3)


def prompt_text(request: Request) -> str:
    """All message contents joined, including the text parts of multimodal messages."""
    parts: list[str] = []
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "\n".join(parts)


def fake_tokens(text: str) -> list[str]:
    """The fake's tokenizer: runs of digits, of letters, of spaces, and single other characters.

    Joined, the tokens give the text back. A number is its own token, without
    the leading space a real BPE tokenizer would attach, which keeps scripted
    alternatives ("3", "4") and the generated token spelled alike.
    """
    return _TOKEN.findall(text)


def _fault_name(kind: str | int) -> str:
    """Accept 429 as well as "429", and reject typos before a test silently passes."""
    if str(kind) not in FAULTS:
        raise ValueError(f"unknown fault {kind!r}; expected one of {', '.join(FAULTS)}")
    return str(kind)


@dataclass
class Rule:
    """One scripted answer: the first rule whose conditions all hold replies."""

    reply: Reply | None = None
    """None falls back to the server's default reply (useful for fault-only rules)."""
    match: Match | None = None
    """Regex searched in the joined message contents, or a predicate on the request."""
    model: str | None = None
    """Exact model name as sent on the wire: litellm strips the `openai/` prefix."""
    times: int | None = None
    fault: str | None = None
    latency: float | None = None
    """Overrides the server's latency for this rule."""
    logprobs: dict[str, float] | None = None
    """Alternatives at the reply's last number token (token -> log-probability), sent when asked for."""
    chunk_delay: float | None = None
    """Overrides the server's delay between streamed chunks: a slow stream."""
    error: tuple[int, str] | None = None
    """An HTTP status and message sent instead of a reply, in OpenAI's error shape (a provider's odd errors)."""
    hits: int = 0

    def __post_init__(self) -> None:
        if self.fault is not None:
            self.fault = _fault_name(self.fault)
        if isinstance(self.match, str):
            self.match = re.compile(self.match)

    def applies(self, request: Request) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if self.model is not None and request.get("model") != self.model:
            return False
        if isinstance(self.match, re.Pattern):
            return self.match.search(prompt_text(request)) is not None
        return self.match is None or (callable(self.match) and bool(self.match(request)))


@dataclass(frozen=True)
class RequestRecord:
    """What the server saw. The API key is never kept, only whether one was sent."""

    method: str
    path: str
    model: str | None
    messages: list[dict[str, Any]]
    stream: bool
    body: Request
    has_auth: bool
    fault: str | None
    at: float
    """time.monotonic() on arrival, so tests can measure overlap."""


@dataclass
class _Plan:
    ident: str
    request: Request
    rule: Rule | None
    fault: str | None
    latency: float
    chunk_delay: float
    admitted: bool = False
    """Counted in flight until answered (see `max_in_flight`)."""


@dataclass
class _Line:
    """One client connection, both ways: the server notices a client that hangs up while it is still answering."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    async def hung_up_within(self, seconds: float) -> bool:
        """Wait `seconds`, or less when the client closes its side first (True then)."""
        try:
            async with asyncio.timeout(seconds):
                while not self.reader.at_eof():
                    if await self.reader.read(1024) == b"":
                        return True
        except TimeoutError:
            return False
        return True


@dataclass
class _HttpRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    keep_alive: bool
    query: str = ""


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
        checked = tuple(_fault_name(kind) for kind in kinds)
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
                    fault=None if fault is None else _fault_name(fault), latency=latency, logprobs=logprobs,
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
            while (request := await _read_request(reader)) is not None:
                if not await self._respond(request, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # a client that goes away or speaks nonsense just loses its connection
        except asyncio.CancelledError:
            pass  # stop() ends us; Python 3.11's start_server logs a traceback for a task left cancelled
        finally:
            writer.close()

    async def _respond(self, request: _HttpRequest, reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False means the connection must be closed."""
        if request.path not in CHAT_PATHS and (answer := self.batches.respond(
                request.method, request.path, request.headers, request.body, request.query)) is not None:
            self._record(request, {}, None)
            return await _send(writer, *answer, request.keep_alive)
        if request.method != "POST" or request.path not in CHAT_PATHS:
            self._record(request, {}, None)  # recorded too: a doubled /v1 in a base URL shows up here
            if request.method == "GET" and request.path in MODEL_PATHS:
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models]
                return await _send_json(writer, 200, {"object": "list", "data": data}, request.keep_alive)
            return await _send_error(writer, 404, f"no route for {request.method} {request.path}",
                                     request.keep_alive)
        try:
            body = json.loads(request.body)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._record(request, {}, None)
            return await _send_error(writer, 400, "body must be a JSON object", request.keep_alive)
        try:
            plan = self._plan(request, body)
        except Exception as exc:  # a broken test callable should be visible, not a dropped connection
            return await _send_error(writer, 500, f"rule match failed: {exc!r}", request.keep_alive)
        try:
            return await self._answer(request, body, plan, _Line(reader, writer))
        finally:
            if plan.admitted:
                with self._lock:
                    self._in_flight -= 1

    async def _answer(self, request: _HttpRequest, body: Request, plan: _Plan, line: _Line) -> bool:
        writer = line.writer
        if plan.fault == "hang":
            if await line.hung_up_within(self.hang_seconds):
                self._hung_up()
            return False
        if plan.latency > 0:
            await asyncio.sleep(plan.latency)
        if plan.rule is not None and plan.rule.error is not None:
            status, message = plan.rule.error
            return await _send_error(writer, status, message, request.keep_alive)
        if plan.fault in HOSTILE_FAULTS:
            return await send_hostile(plan.fault, writer, self._envelope(plan, ""), bool(body.get("stream")))
        if plan.fault == "429":
            headers = {"Retry-After": str(math.ceil(self.retry_after)),
                       "retry-after-ms": str(round(self.retry_after * 1000))}
            return await _send_error(writer, 429, "fake rate limit", request.keep_alive, headers)
        if plan.fault == "500":
            return await _send_error(writer, 500, "fake server error", request.keep_alive)
        if plan.fault == "401":
            echoed = request.headers.get("authorization", "(none)")
            return await _send_error(writer, 401, f"Incorrect API key provided. You sent Authorization: {echoed}",
                                     request.keep_alive)
        if plan.fault == "400":
            return await _send_error(writer, 400, "fake bad request: unsupported parameter", request.keep_alive)
        if plan.fault == "disconnect" and not body.get("stream"):
            writer.transport.abort()
            return False
        if plan.fault == "overflow" and not body.get("stream"):
            return await _send_error(writer, 400, self._overflow_message(body), request.keep_alive)
        if plan.fault in ("error200", "error_midstream") and not body.get("stream"):
            return await _send_json(writer, 200, _error_object(ERROR_IN_200, 500), request.keep_alive)
        try:
            text = self._reply_text(plan)
        except Exception as exc:
            return await _send_error(writer, 500, f"reply callable failed: {exc!r}", request.keep_alive)
        if body.get("stream"):
            return await self._stream(line, plan, text, request.keep_alive)
        return await self._send_completion(writer, plan, text, request.keep_alive)

    def _plan(self, request: _HttpRequest, body: Request) -> _Plan:
        """Pick rule and fault and record the request, atomically, so counts stay consistent."""
        with self._lock:
            rule = next((r for r in self._rules if r.applies(body)), None)
            if rule is not None:
                rule.hits += 1
            fault = rule.fault if rule is not None else None
            if fault is None and self.fault_rate > 0 and self._rng.random() < self.fault_rate:
                fault = self._rng.choice(self.fault_kinds)
            if fault is None and self._requested_tokens(body) > (self.context_window or math.inf):
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
        return _Plan(ident, body, rule, fault, latency, chunk_delay, admitted)

    def _answer_line(self, body: Request) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """One request of a batch job, answered by the rules: (completion payload, None) or (None, error)."""
        plan = self._plan(_HttpRequest("POST", BATCH_LINE_PATH, {}, b"", True), body)
        if plan.rule is not None and plan.rule.error is not None:
            status, message = plan.rule.error
            return None, _error_object(message, status)["error"]
        if plan.fault is not None and plan.fault != "length":
            return None, _error_object(f"fake {plan.fault}", 500)["error"]
        try:
            return self._completion_payload(plan, self._reply_text(plan)), None
        except Exception as exc:
            return None, _error_object(f"reply callable failed: {exc!r}", 500)["error"]

    def _requested_tokens(self, body: Request) -> int:
        return len(fake_tokens(prompt_text(body))) + int(body.get("max_tokens") or 0)

    def _overflow_message(self, body: Request) -> str:
        return OVERFLOW.format(tokens=self._requested_tokens(body), window=self.context_window or 8192)

    def _record(self, request: _HttpRequest, body: Request, fault: str | None) -> None:
        with self._lock:
            self._record_locked(request, body, fault)

    def _record_locked(self, request: _HttpRequest, body: Request, fault: str | None) -> None:
        self._records.append(RequestRecord(
            method=request.method, path=request.path, model=body.get("model"),
            messages=list(body.get("messages") or []), stream=bool(body.get("stream")), body=body,
            has_auth="authorization" in request.headers or "api-key" in request.headers, fault=fault,
            at=time.monotonic(),
        ))

    def _reply_text(self, plan: _Plan) -> str:
        if plan.fault == "empty":
            return ""
        reply = plan.rule.reply if plan.rule is not None else None
        if reply is None:
            reply = self.default_reply
        return reply(plan.request) if callable(reply) else reply

    def _envelope(self, plan: _Plan, kind: str) -> dict[str, Any]:
        return {"id": plan.ident, "object": kind, "created": int(time.time()),
                "model": self.reply_model or plan.request.get("model") or self.models[0], "system_fingerprint": None}

    def _token_logprobs(self, plan: _Plan, text: str) -> list[dict[str, Any]] | None:
        """OpenAI's `logprobs.content` for the reply, or None when not asked for (or switched off)."""
        if not plan.request.get("logprobs") or not self.logprobs:
            return None
        tokens = fake_tokens(text)
        scripted = plan.rule.logprobs if plan.rule is not None else None
        numbers = [i for i, token in enumerate(tokens) if token.isdigit()]
        at = numbers[-1] if scripted and numbers else None
        k = int(plan.request.get("top_logprobs") or 0)
        entries = []
        for i, token in enumerate(tokens):
            alternatives = scripted if i == at and scripted else {token: 0.0}
            top = sorted(alternatives.items(), key=lambda item: -item[1])[:k]
            entries.append({
                "token": token, "logprob": alternatives.get(token, -9999.0), "bytes": list(token.encode()),
                "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top],
            })
        return entries

    def _usage(self, plan: _Plan, text: str) -> dict[str, int]:
        if self.usage is not None:
            return dict(self.usage)
        prompt, completion = approx_tokens(prompt_text(plan.request)), approx_tokens(text)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _capped(self, plan: _Plan, text: str) -> tuple[str, str]:
        """The reply cut at the request's max_tokens (fake tokens), and its finish reason."""
        limit = plan.request.get("max_tokens")
        tokens = fake_tokens(text)
        if isinstance(limit, int) and 0 < limit < len(tokens):
            return "".join(tokens[:limit]), "length"
        return text, "length" if plan.fault == "length" else "stop"

    async def _send_completion(self, writer: asyncio.StreamWriter, plan: _Plan, text: str,
                               keep_alive: bool) -> bool:
        if plan.fault == "malformed":
            return await _send(writer, 200, MALFORMED.encode(), "application/json", keep_alive)
        return await _send_json(writer, 200, self._completion_payload(plan, text), keep_alive)

    def _completion_payload(self, plan: _Plan, text: str) -> dict[str, Any]:
        text, finish = self._capped(plan, text)
        content = self._token_logprobs(plan, text)
        logprobs = {"content": content, "refusal": None} if content is not None else None
        return self._envelope(plan, "chat.completion") | {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "logprobs": logprobs, "finish_reason": finish}],
            "usage": self._usage(plan, text),
        }

    def _hung_up(self) -> None:
        with self._lock:
            self.hangups.append(time.monotonic())

    async def _stream(self, line: _Line, plan: _Plan, text: str, keep_alive: bool) -> bool:
        """SSE over chunked transfer encoding, so the connection can be kept alive."""
        writer = line.writer
        writer.write(_head(200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                 "Transfer-Encoding": "chunked"}, keep_alive))
        first = True
        for event in self._events(plan, text):
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

    def _events(self, plan: _Plan, text: str) -> Iterator[str]:
        """The stream's SSE payloads in order; endless for the "endless" fault."""
        head = self._envelope(plan, "chat.completion.chunk")

        def chunk(delta: dict[str, str], finish: str | None = None, logprobs: Any = None) -> str:
            choice = {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
            return json.dumps(head | {"choices": [choice], "usage": None})

        if plan.fault == "overflow":
            yield json.dumps(_error_object(self._overflow_message(plan.request), 400))
            return
        if plan.fault == "error200":
            yield json.dumps(_error_object(ERROR_IN_200, 500))
            return
        yield chunk({"role": "assistant", "content": ""})
        if plan.fault == "endless":  # ever new text: litellm stops a stream that repeats one chunk
            for number in itertools.count(1):
                yield chunk({"content": f"and then the judge went on about paragraph {number} "})
        text, finish = self._capped(plan, text)
        content = self._token_logprobs(plan, text)
        if content is not None:  # one token per chunk, each with its own log-probabilities
            pieces = [entry["token"] for entry in content]
            logprobs: list[dict[str, Any] | None] = [{"content": [entry], "refusal": None} for entry in content]
        else:
            size = max(1, self.chunk_size)
            pieces = [text[i:i + size] for i in range(0, len(text), size)]
            logprobs = [None] * len(pieces)
        cut = (len(pieces) + 1) // 2
        for index in range(len(pieces) + 1):
            if index == cut:
                if plan.fault == "disconnect":
                    return
                if plan.fault == "malformed":
                    yield MALFORMED
                if plan.fault == "error_midstream":
                    yield json.dumps(_error_object(ERROR_IN_200, 500))
                    return
            if index < len(pieces):
                yield chunk({"content": pieces[index]}, logprobs=logprobs[index])
        if plan.fault == "cut":
            return
        yield chunk({}, finish)
        yield json.dumps(head | {"choices": [], "usage": self._usage(plan, text)})
        yield "[DONE]"


async def _read_request(reader: asyncio.StreamReader) -> _HttpRequest | None:
    """Parse one HTTP/1.1 request with a Content-Length body; None when the client hung up."""
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise
        return None
    request_line, *header_lines = raw.decode("latin-1").rstrip("\r\n").split("\r\n")
    method, target, version = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise ValueError("chunked request bodies are not supported")
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    keep_alive = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
    path, _, query = target.partition("?")
    return _HttpRequest(method.upper(), path, headers, body, keep_alive, query)


def _head(status: int, headers: dict[str, str], keep_alive: bool) -> bytes:
    lines = [f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines.append(f"Connection: {'keep-alive' if keep_alive else 'close'}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _send(writer: asyncio.StreamWriter, status: int, body: bytes, content_type: str,
                keep_alive: bool, headers: dict[str, str] | None = None) -> bool:
    all_headers = {"Content-Type": content_type, "Content-Length": str(len(body))} | (headers or {})
    writer.write(_head(status, all_headers, keep_alive) + body)
    await writer.drain()
    return keep_alive


async def _send_json(writer: asyncio.StreamWriter, status: int, payload: Any, keep_alive: bool,
                     headers: dict[str, str] | None = None) -> bool:
    return await _send(writer, status, json.dumps(payload).encode(), "application/json", keep_alive, headers)


def _error_object(message: str, status: int) -> dict[str, Any]:
    """An error shaped like OpenAI's, so SDKs surface the message."""
    kinds = {401: "authentication_error", 429: "rate_limit_error", 500: "server_error"}
    kind = kinds.get(status, "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": str(status)}}


async def _send_error(writer: asyncio.StreamWriter, status: int, message: str, keep_alive: bool,
                      headers: dict[str, str] | None = None) -> bool:
    return await _send_json(writer, status, _error_object(message, status), keep_alive, headers)


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
