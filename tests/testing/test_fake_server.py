"""The fake LLM server, driven by the real litellm and by raw HTTP clients.

These tests also pin down how litellm reacts to each fault, which the engine's
retry and error handling rely on.
"""

from __future__ import annotations

import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # before litellm: no price-table download

import asyncio
import http.client
import json
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import litellm
import pytest
from litellm.exceptions import MidStreamFallbackError

from debate_tui.testing.fake_server import FakeLLMServer, approx_tokens
from tests.helpers import REPO

litellm.suppress_debug_info = True

KEY = "sk-test-fake"
MESSAGES = [{"role": "user", "content": "Rate this essay about rivers."}]


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(retry_after=0.05) as running:
        yield running


async def ask(server: FakeLLMServer, content: str = MESSAGES[0]["content"], *,
              model: str = "openai/fake-model", **kwargs: Any) -> Any:
    kwargs.setdefault("num_retries", 0)
    return await litellm.acompletion(model=model, api_base=server.base_url, api_key=KEY,
                                     messages=[{"role": "user", "content": content}], **kwargs)


async def ask_streamed(server: FakeLLMServer, parts: list[str], **kwargs: Any) -> Any:
    """Collect streamed text into `parts` as it arrives, so it survives a mid-stream failure."""
    response = await ask(server, stream=True, **kwargs)
    usage = None
    async for chunk in response:
        if chunk.choices and chunk.choices[0].delta.content:
            parts.append(chunk.choices[0].delta.content)
        usage = getattr(chunk, "usage", None) or usage
    return usage


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    """One client for the raw tests: a new one per request costs 40 ms of TLS set-up."""
    with httpx.Client(timeout=5) as shared:
        yield shared


def post(client: httpx.Client, server: FakeLLMServer, **body: Any) -> httpx.Response:
    payload = {"model": "fake-model", "messages": MESSAGES} | body
    return client.post(f"{server.base_url}/chat/completions", json=payload)


def sse_events(client: httpx.Client, server: FakeLLMServer, **body: Any) -> list[str]:
    payload = {"model": "fake-model", "messages": MESSAGES, "stream": True} | body
    with client.stream("POST", f"{server.base_url}/chat/completions", json=payload) as response:
        assert response.headers["content-type"] == "text/event-stream"
        return [line.removeprefix("data: ") for line in response.iter_lines() if line]


# -- litellm: the happy paths ------------------------------------------------

async def test_json_reply_and_usage(server: FakeLLMServer) -> None:
    server.default_reply = "A clear essay. Score: 4"
    response = await ask(server)
    assert response.choices[0].message.content == "A clear essay. Score: 4"
    prompt, completion = approx_tokens(MESSAGES[0]["content"]), approx_tokens("A clear essay. Score: 4")
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (prompt, completion)
    assert response.usage.total_tokens == prompt + completion


async def test_stream_reassembles_reply_and_reports_usage(server: FakeLLMServer) -> None:
    server.default_reply = "The argument holds, though the ending rushes. Score: 4"
    parts: list[str] = []
    usage = await ask_streamed(server, parts, stream_options={"include_usage": True})
    assert "".join(parts) == server.default_reply
    assert len(parts) > 1
    assert usage.completion_tokens == approx_tokens(server.default_reply)
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


async def test_stream_without_stream_options_tolerates_the_usage_chunk(server: FakeLLMServer) -> None:
    parts: list[str] = []
    await ask_streamed(server, parts)
    assert "".join(parts) == "Score: 3"


def test_sync_litellm_json_and_stream(server: FakeLLMServer) -> None:
    """The sync path runs on httpx; the async one on litellm's aiohttp transport."""
    kwargs: dict[str, Any] = dict(model="openai/fake-model", api_base=server.base_url, api_key=KEY,
                                  messages=MESSAGES, num_retries=0)
    assert litellm.completion(**kwargs).choices[0].message.content == "Score: 3"
    chunks = litellm.completion(stream=True, **kwargs)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Score: 3"


# -- rules ---------------------------------------------------------------------

async def test_rules_by_regex_model_and_times(server: FakeLLMServer) -> None:
    server.add_rule("Objection: too short.", match=r"\bcritic\b", times=1)
    server.add_rule("Judge says 5", model="fake-judge")
    server.add_rule("Critic agrees.", match=r"critic")

    first = await ask(server, "You are the critic.")
    second = await ask(server, "You are the critic.")
    judged = await ask(server, "You are the critic.", model="openai/fake-judge")
    plain = await ask(server, "Anything else")

    assert first.choices[0].message.content == "Objection: too short."  # first match wins
    assert second.choices[0].message.content == "Critic agrees."  # the first rule is used up
    assert judged.choices[0].message.content == "Judge says 5"  # litellm sends the name without "openai/"
    assert plain.choices[0].message.content == "Score: 3"
    assert [r.model for r in server.requests] == ["fake-model", "fake-model", "fake-judge", "fake-model"]


def test_model_rule_and_callables(client: httpx.Client, server: FakeLLMServer) -> None:
    server.add_rule("from the judge", model="fake-judge")
    server.add_rule(lambda request: f"{len(request['messages'])} messages",
                    match=lambda request: request.get("temperature") == 0)
    def content(**body: Any) -> str:
        return post(client, server, **body).json()["choices"][0]["message"]["content"]

    assert content(model="fake-judge") == "from the judge"
    assert content(temperature=0) == "1 messages"
    assert content() == "Score: 3"


def test_replies_in_order_then_default(client: httpx.Client, server: FakeLLMServer) -> None:
    server.replies_in_order("fake-model", ["first", "second"])
    replies = [post(client, server).json()["choices"][0]["message"]["content"] for _ in range(3)]
    assert replies == ["first", "second", "Score: 3"]


def test_a_failing_reply_callable_is_a_500_not_a_hang(client: httpx.Client, server: FakeLLMServer) -> None:
    server.add_rule(lambda request: request["missing"])
    response = post(client, server)
    assert response.status_code == 500
    assert "KeyError" in response.json()["error"]["message"]


def test_unknown_fault_is_rejected() -> None:
    server = FakeLLMServer()
    with pytest.raises(ValueError, match="unknown fault"):
        server.add_rule(fault="503")
    with pytest.raises(ValueError, match="unknown fault"):
        server.fault_kinds = ["timeout"]


def test_reset_forgets_rules_records_and_settings(client: httpx.Client, server: FakeLLMServer) -> None:
    server.add_rule("scripted")
    post(client, server)
    server.fault_rate, server.latency = 1.0, 0.5
    server.reset()
    assert (server.calls, server.fault_rate, server.latency, server.retry_after) == (0, 0.0, 0.0, 0.05)
    assert post(client, server).json()["choices"][0]["message"]["content"] == "Score: 3"


# -- faults, as litellm sees them ---------------------------------------------

async def test_429_is_a_rate_limit_error_without_retries(server: FakeLLMServer) -> None:
    server.add_rule(fault="429")
    with pytest.raises(litellm.RateLimitError):
        await ask(server)
    assert server.calls == 1


@pytest.mark.serial
async def test_litellm_honours_retry_after_when_asked_to_retry(server: FakeLLMServer) -> None:
    server.add_rule(fault=429, times=1)
    started = time.perf_counter()
    response = await ask(server, num_retries=1)
    elapsed = time.perf_counter() - started
    assert response.choices[0].message.content == "Score: 3"
    assert server.calls == 2
    assert elapsed < 0.3  # the 50 ms asked for, not the SDK's own backoff of at least 0.375 s


async def test_litellm_retries_twice_by_default(server: FakeLLMServer) -> None:
    """Without num_retries the openai SDK underneath retries twice: three requests per call."""
    server.add_rule(fault="429")
    with pytest.raises(litellm.RateLimitError):
        await ask(server, num_retries=None)
    assert server.calls == 3


async def test_500_is_an_internal_server_error(server: FakeLLMServer) -> None:
    server.add_rule(fault="500")
    with pytest.raises(litellm.InternalServerError):
        await ask(server)


@pytest.mark.parametrize("stream", [False, True])
async def test_hang_times_out_without_blocking_other_requests(server: FakeLLMServer, stream: bool) -> None:
    server.add_rule(fault="hang", match="hang")
    hung = asyncio.create_task(ask(server, "hang", timeout=0.5, stream=stream))
    await asyncio.sleep(0.1)
    other = await ask(server, "fine")
    assert not hung.done()
    assert other.choices[0].message.content == "Score: 3"
    with pytest.raises(litellm.Timeout):
        await hung


async def test_disconnect_mid_stream_keeps_partial_text(server: FakeLLMServer) -> None:
    server.add_rule("The essay wanders but the facts are right. Score: 3", fault="disconnect")
    parts: list[str] = []
    with pytest.raises(MidStreamFallbackError):
        await ask_streamed(server, parts)
    text = "".join(parts)
    assert text and "The essay wanders but the facts are right. Score: 3".startswith(text)
    assert text != "The essay wanders but the facts are right. Score: 3"


async def test_disconnect_without_stream_is_a_connection_error(server: FakeLLMServer) -> None:
    server.add_rule(fault="disconnect")
    with pytest.raises(litellm.InternalServerError, match="Connection error"):
        await ask(server)


async def test_malformed_json_body_fails(server: FakeLLMServer) -> None:
    server.add_rule(fault="malformed")
    with pytest.raises(litellm.InternalServerError, match="Expecting"):
        await ask(server)


async def test_malformed_stream_chunk_fails_mid_stream(server: FakeLLMServer) -> None:
    server.add_rule("Long enough to be cut in two halves.", fault="malformed")
    parts: list[str] = []
    with pytest.raises(MidStreamFallbackError, match="Expecting"):
        await ask_streamed(server, parts)
    assert "".join(parts) == "Long enough to be cut in"  # 3 of 5 eight-character chunks came first


@pytest.mark.parametrize("stream", [False, True])
async def test_empty_reply(server: FakeLLMServer, stream: bool) -> None:
    server.add_rule("ignored", fault="empty")
    if stream:
        parts: list[str] = []
        await ask_streamed(server, parts)
        assert parts == []
    else:
        assert (await ask(server)).choices[0].message.content == ""


# -- load ----------------------------------------------------------------------

@pytest.mark.serial
async def test_16_concurrent_requests_overlap(server: FakeLLMServer) -> None:
    await ask(server)  # litellm spends about a second on lazy imports on its first call
    server.reset()
    server.latency = 0.2
    started = time.perf_counter()
    responses = await asyncio.gather(*(ask(server, f"essay {i}") for i in range(16)))
    elapsed = time.perf_counter() - started
    print(f"16 concurrent requests with 200 ms latency: {elapsed:.3f} s")
    assert all(r.choices[0].message.content == "Score: 3" for r in responses)
    assert elapsed < 1.6  # serial would take 3.2 s; 0.35 s measured on two idle cores


@pytest.mark.serial
async def test_5_concurrent_streams_overlap(server: FakeLLMServer) -> None:
    server.default_reply = "word " * 20  # 13 chunks
    server.chunk_delay = 0.03
    started = time.perf_counter()
    collected: list[list[str]] = [[] for _ in range(5)]
    await asyncio.gather(*(ask_streamed(server, parts) for parts in collected))
    elapsed = time.perf_counter() - started
    assert all("".join(parts) == server.default_reply for parts in collected)
    assert elapsed < 1.5  # each stream takes about 0.45 s; serial would take 2.2 s


# -- records -------------------------------------------------------------------

async def test_requests_are_recorded_without_the_key(server: FakeLLMServer) -> None:
    server.add_rule(fault="empty", match="second")
    await ask(server, "first")
    await ask(server, "second", stream=True)
    records = server.requests
    assert server.calls == 2
    assert [(r.path, r.model, r.stream, r.fault) for r in records] == [
        ("/v1/chat/completions", "fake-model", False, None),
        ("/v1/chat/completions", "fake-model", True, "empty"),
    ]
    assert records[0].messages == [{"role": "user", "content": "first"}]
    assert all(r.has_auth for r in records)
    assert KEY not in repr(records)
    assert records[0].at <= records[1].at


def test_records_are_thread_safe(server: FakeLLMServer) -> None:
    server.add_rule("limited", times=10)
    with httpx.Client(timeout=5) as client:
        def worker() -> None:
            for _ in range(5):
                client.post(f"{server.base_url}/chat/completions", json={"model": "m", "messages": MESSAGES})
        threads = [threading.Thread(target=worker) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert server.calls == 40
    assert not any(r.has_auth for r in server.requests)


# -- raw protocol ------------------------------------------------------------

def test_raw_json_response(client: httpx.Client, server: FakeLLMServer) -> None:
    response = post(client, server, model="fake-debater")
    body = response.json()
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert body["object"] == "chat.completion"
    assert body["model"] == "fake-debater"
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "Score: 3"}
    assert body["choices"][0]["finish_reason"] == "stop"
    assert set(body["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}


def test_raw_sse_stream(client: httpx.Client, server: FakeLLMServer) -> None:
    server.default_reply = "Twelve chars and more"
    events = sse_events(client, server)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    contents = [c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]]
    assert "".join(contents) == "Twelve chars and more"
    assert max(map(len, contents)) == server.chunk_size
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["total_tokens"] > 0


def test_keep_alive_across_json_and_stream(server: FakeLLMServer) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        for stream in (False, True, False):
            body = json.dumps({"model": "m", "messages": MESSAGES, "stream": stream})
            connection.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
            if not stream:
                socket_in_use = connection.sock
            response = connection.getresponse()
            assert response.status == 200
            assert b"Score: 3" in response.read()
            assert connection.sock is socket_in_use
    finally:
        connection.close()


def test_raw_faults(client: httpx.Client, server: FakeLLMServer) -> None:
    server.add_rule(fault="429", match="limit")
    server.add_rule(fault="malformed", match="garbled")
    server.add_rule("cut off here please", fault="disconnect", match="cut")

    limited = post(client, server, messages=[{"role": "user", "content": "limit"}])
    assert limited.status_code == 429
    assert (limited.headers["retry-after"], limited.headers["retry-after-ms"]) == ("1", "50")
    assert limited.json()["error"]["type"] == "rate_limit_error"

    with pytest.raises(json.JSONDecodeError):
        post(client, server, messages=[{"role": "user", "content": "garbled"}]).json()
    garbled = sse_events(client, server, messages=[{"role": "user", "content": "garbled"}])
    with pytest.raises(json.JSONDecodeError):
        [json.loads(event) for event in garbled[:-1]]

    with pytest.raises(httpx.RemoteProtocolError):
        post(client, server, messages=[{"role": "user", "content": "cut"}])
    with pytest.raises(httpx.RemoteProtocolError):
        sse_events(client, server, messages=[{"role": "user", "content": "cut"}])


def test_random_faults_replay_from_the_seed(client: httpx.Client, server: FakeLLMServer) -> None:
    server.fault_rate, server.fault_kinds = 0.5, ["429", "500", "empty"]

    def run() -> list[int]:
        server.seed = 1
        return [post(client, server).status_code for _ in range(20)]

    first = run()
    assert first == run()
    faults = [r.fault for r in server.requests]
    assert faults[:20] == faults[20:]
    assert {None, "429", "500", "empty"} == set(faults)
    status = {None: 200, "empty": 200, "429": 429, "500": 500}
    assert [status[fault] for fault in faults[:20]] == first


def test_models_and_bad_requests(client: httpx.Client, server: FakeLLMServer) -> None:
    models = client.get(f"{server.base_url}/models").json()
    assert [m["id"] for m in models["data"]] == ["fake-model", "fake-debater", "fake-judge"]
    assert client.get(f"{server.base_url}/nowhere").status_code == 404
    bad = client.post(f"{server.base_url}/chat/completions", content=b"not json")
    assert bad.status_code == 400
    assert [(r.method, r.path) for r in server.requests] == [
        ("GET", "/v1/models"), ("GET", "/v1/nowhere"), ("POST", "/v1/chat/completions")]


# -- lifecycle -----------------------------------------------------------------

def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.serial
def test_start_stop_is_fast_and_leaks_nothing() -> None:
    FakeLLMServer().start().stop()  # first use pays for lazy imports in asyncio
    unpooled = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))
    threads, descriptors = threading.active_count(), open_descriptors()
    for _ in range(5):
        started = time.perf_counter()
        server = FakeLLMServer(default_reply="x").start()
        startup = time.perf_counter() - started
        assert post(unpooled, server).json()["choices"][0]["message"]["content"] == "x"
        started = time.perf_counter()
        server.stop()
        assert (startup, time.perf_counter() - started) < (0.1, 0.1)
    assert threading.active_count() == threads
    assert open_descriptors() == descriptors
    unpooled.close()


@pytest.mark.serial
def test_stop_releases_a_hung_request_at_once(client: httpx.Client) -> None:
    server = FakeLLMServer().start()
    server.add_rule(fault="hang")
    errors: list[Exception] = []

    def hang() -> None:
        try:
            post(client, server)
        except httpx.HTTPError as exc:
            errors.append(exc)

    waiter = threading.Thread(target=hang)
    waiter.start()
    deadline = time.monotonic() + 5
    while server.calls == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.perf_counter()
    server.stop()
    waiter.join(timeout=2)
    assert time.perf_counter() - started < 0.5
    assert errors and isinstance(errors[0], httpx.RemoteProtocolError)


# -- command line --------------------------------------------------------------

def test_command_line_serves_rules_until_interrupted(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"match": "critic", "reply": "Objection."},
                                 {"model": "m2", "fault": "500"}]))
    process = subprocess.Popen(
        [sys.executable, "-m", "debate_tui.testing.fake_server", "--reply", "Fine.", "--rules", str(rules)],
        cwd=REPO, stdout=subprocess.PIPE, text=True,
    )
    try:
        with selectors.DefaultSelector() as waiting:  # not select(): a worker's descriptors may pass 1024
            waiting.register(process.stdout, selectors.EVENT_READ)
            assert waiting.select(10), "no base URL printed"
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")

        def reply(content: str, model: str = "m") -> httpx.Response:
            return httpx.post(f"{base_url}/chat/completions", timeout=5,
                              json={"model": model, "messages": [{"role": "user", "content": content}]})

        assert reply("the critic speaks").json()["choices"][0]["message"]["content"] == "Objection."
        assert reply("anyone").json()["choices"][0]["message"]["content"] == "Fine."
        assert reply("anyone", "m2").status_code == 500
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=5) == 0
    finally:
        process.kill()
        process.wait()
        process.stdout.close()


def test_command_line_rejects_a_bad_rules_file(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"reply": "x", "when": "always"}]))
    result = subprocess.run(
        [sys.executable, "-m", "debate_tui.testing.fake_server", "--rules", str(rules)],
        cwd=REPO, capture_output=True, text=True, timeout=10,
    )
    assert result.returncode == 2
    assert "when" in result.stderr


def test_command_line_help_says_rules_is_a_file(capsys) -> None:
    """Issue 33 #18: the help said "JSON list of rules" for what is read as a file path."""
    from debate_tui.testing.fake_server import main

    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--rules FILE.json" in help_text and "a JSON file holding a list of rules" in help_text
