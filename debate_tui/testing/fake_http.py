"""The fake server's side of HTTP/1.1: one request read, one response written, errors in OpenAI's shape.

Real HTTP (keep-alive, Content-Length bodies, chunked streams written by the server) is what lets litellm,
the openai SDK and httpx run their whole code path against the fake.
"""

from __future__ import annotations

import asyncio
import http
import json
from dataclasses import dataclass
from typing import Any


@dataclass
class Line:
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
class HttpRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    keep_alive: bool
    query: str = ""


async def read_request(reader: asyncio.StreamReader) -> HttpRequest | None:
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
    return HttpRequest(method.upper(), path, headers, body, keep_alive, query)


def head(status: int, headers: dict[str, str], keep_alive: bool) -> bytes:
    lines = [f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines.append(f"Connection: {'keep-alive' if keep_alive else 'close'}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def send(writer: asyncio.StreamWriter, status: int, body: bytes, content_type: str,
                keep_alive: bool, headers: dict[str, str] | None = None) -> bool:
    all_headers = {"Content-Type": content_type, "Content-Length": str(len(body))} | (headers or {})
    writer.write(head(status, all_headers, keep_alive) + body)
    await writer.drain()
    return keep_alive


async def send_json(writer: asyncio.StreamWriter, status: int, payload: Any, keep_alive: bool,
                     headers: dict[str, str] | None = None) -> bool:
    return await send(writer, status, json.dumps(payload).encode(), "application/json", keep_alive, headers)


def error_object(message: str, status: int) -> dict[str, Any]:
    """An error shaped like OpenAI's, so SDKs surface the message."""
    kinds = {401: "authentication_error", 429: "rate_limit_error", 500: "server_error"}
    kind = kinds.get(status, "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": str(status)}}


async def send_error(writer: asyncio.StreamWriter, status: int, message: str, keep_alive: bool,
                      headers: dict[str, str] | None = None) -> bool:
    return await send_json(writer, status, error_object(message, status), keep_alive, headers)

