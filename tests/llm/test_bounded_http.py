"""The byte bound under litellm (llm.bounded_http), over a transport that answers a fixed body: what passes,
inflated whole, and what ends the read."""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib

import httpx
import pytest

from debate_tui.llm.bounded_http import BoundedTransport, ReplyRefused, ReplyTooLarge

CHAT = "http://127.0.0.1:9/v1/chat/completions"


def fetch(url: str, body: bytes, headers: dict[str, str], cap: int = 1024 * 1024,
          request_json: dict | None = None) -> tuple[httpx.Response, dict[str, str]]:
    seen: dict[str, str] = {}

    class Server(httpx.AsyncBaseTransport):
        """The body as sent, unread (httpx's MockTransport reads, and so decodes, what it answers)."""

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            seen.update(request.headers)
            return httpx.Response(200, headers=headers, stream=httpx.ByteStream(body))

    async def go() -> httpx.Response:
        transport = BoundedTransport(Server, cap=cap)
        async with httpx.AsyncClient(transport=transport) as client:
            response = await client.post(url, json=request_json or {"model": "m"})
            await response.aread()
            return response

    return asyncio.run(go()), seen


@pytest.mark.parametrize(("encoding", "pack"), [("gzip", gzip.compress), ("deflate", zlib.compress),
                                                ("identity", lambda data: data)])
def test_a_reply_under_the_cap_arrives_whole_and_inflated(encoding, pack):
    body = json.dumps({"choices": [{"message": {"content": "Score: 3 " * 5000}}]}).encode()
    response, seen = fetch(CHAT, pack(body), {"Content-Type": "application/json", "Content-Encoding": encoding})
    assert response.content == body and "content-encoding" not in response.headers
    assert seen["accept-encoding"] == "gzip, deflate"  # never br or zstd, which this client does not inflate


@pytest.mark.parametrize("encoding", ["gzip", "identity"])
def test_a_reply_past_the_cap_ends_the_read_however_it_was_sent(encoding):
    body = b" " * (3 * 1024 * 1024)
    sent = gzip.compress(body) if encoding == "gzip" else body
    with pytest.raises(ReplyTooLarge, match="^the reply passed 1 MB$"):
        fetch(CHAT, sent, {"Content-Type": "application/json", "Content-Encoding": encoding})


def test_an_encoding_not_asked_for_is_refused():
    with pytest.raises(ReplyRefused, match="'br' encoding, which was not asked for"):
        fetch(CHAT, b"x", {"Content-Type": "application/json", "Content-Encoding": "br"})


def test_a_corrupt_compressed_body_is_one_line():
    with pytest.raises(ReplyRefused, match="^the server's compressed reply is corrupt$"):
        fetch(CHAT, b"not gzip at all", {"Content-Type": "application/json", "Content-Encoding": "gzip"})


def test_other_endpoints_than_a_models_reply_are_not_capped():
    """A provider batch's result file may well pass what one reply may take."""
    body = b"{}\n" * (1024 * 1024)
    response, _ = fetch("http://127.0.0.1:9/v1/files/f1/content", body, {"Content-Type": "application/jsonl"})
    assert response.content == body


def test_an_html_page_and_json_to_a_streamed_call_are_not_openai_format():
    with pytest.raises(ReplyRefused, match=r"did not answer in OpenAI's format \(a 200 text/html page"):
        fetch(CHAT, b"<html></html>", {"Content-Type": "text/html; charset=utf-8"})
    with pytest.raises(ReplyRefused, match="a streamed call answered with application/json"):
        fetch(CHAT, b"{}", {"Content-Type": "application/json"}, request_json={"model": "m", "stream": True})
    response, _ = fetch(CHAT, b"{}", {"Content-Type": "application/json"},
                        request_json={"model": "m", "messages": [{"content": '"stream": true'}]})
    assert response.content == b"{}"  # a prompt that quotes the flag asks for no stream
