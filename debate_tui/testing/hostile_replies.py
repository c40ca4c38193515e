"""Replies a broken or hostile server sends, for the fake server's faults of that name.

Kept out of fake_server.py, which scripts ordinary replies: each of these is one
way a body can hurt the client that reads it, by size or by shape.

- "gzip_bomb": a gzip body of a few MB that inflates to GBs (Content-Encoding: gzip).
- "huge": a plain JSON reply that is 1 GB long (written piece by piece: the server never holds it).
- "endless_line": an SSE stream whose first `data:` line never ends.
- "html": a web server's 200 page instead of OpenAI's JSON (a wrong api_base).
- "no_choices": a well-formed completion with `choices: []`.
- "odd_shapes": a completion whose fields have the wrong types, carrying `ODD_VALUE` (the provider's input
  that a library's warning would print); "odd_stream": the same in a stream's chunks (a list for the text,
  a string for the usage), which litellm passes on as they are.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from functools import cache
from typing import Any

HOSTILE_FAULTS = ("gzip_bomb", "huge", "endless_line", "html", "no_choices", "odd_shapes", "odd_stream")
ODD_VALUE = "provider-said-this-7f3a"
BOMB_INFLATED_BYTES = 2 * 1024**3
"""What the gzip bomb inflates to: 2 GiB of spaces (legal JSON whitespace), from a body of about 2 MB."""
HUGE_BYTES = 1024**3
"""The length of the "huge" plain reply."""
PIECE = 1024 * 1024
HTML_PAGE = (b"<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head>\n"
             b"<body><h1>Welcome to nginx!</h1><p>If you see this page, the web server works.</p></body></html>\n")


@cache
def _bomb_segments() -> tuple[bytes, bytes, int]:
    """The bomb's head (gzip header + first MiB) and a repeatable segment (one more MiB), and how many repeat.

    After a full flush deflate keeps no reference to what came before, so one compressed MiB of spaces can
    be sent again and again: the body is valid deflate all along (its final checksum is never reached)."""
    spaces = b" " * PIECE
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = packer.compress(b'{"id": "chatcmpl-bomb", "choices": [' + spaces[:-36]) + packer.flush(zlib.Z_FULL_FLUSH)
    segment = packer.compress(spaces) + packer.flush(zlib.Z_FULL_FLUSH)
    return head, segment, BOMB_INFLATED_BYTES // PIECE - 1


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}", *(f"{k}: {v}" for k, v in headers.items()),
             "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _write(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(data)
    await writer.drain()


async def send_hostile(fault: str, writer: asyncio.StreamWriter, envelope: dict[str, Any], stream: bool) -> bool:
    """Answer with `fault`'s body; the connection is closed after it (False: not kept alive).

    A client that stops reading makes `drain` raise ConnectionError, which ends the reply."""
    if fault == "html":
        await _write(writer, _head(200, {"Content-Type": "text/html", "Content-Length": str(len(HTML_PAGE))})
                     + HTML_PAGE)
    elif fault in ("no_choices", "odd_shapes"):
        body = json.dumps(envelope | {"object": "chat.completion", "choices": [],
                                      "usage": {"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1}}
                          if fault == "no_choices" else envelope | {
                              "object": "chat.completion", "created": ODD_VALUE,
                              "choices": [{"index": 0, "message": {"role": "assistant", "content": [ODD_VALUE]},
                                           "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": ODD_VALUE, "completion_tokens": 1, "total_tokens": 2}})
        await _write(writer, _head(200, {"Content-Type": "application/json", "Content-Length": str(len(body))})
                     + body.encode())
    elif fault == "gzip_bomb":
        head, segment, repeats = _bomb_segments()
        length = len(head) + len(segment) * repeats
        await _write(writer, _head(200, {"Content-Type": "text/event-stream" if stream else "application/json",
                                         "Content-Encoding": "gzip", "Content-Length": str(length)}) + head)
        for _ in range(repeats):
            await _write(writer, segment)
    elif fault == "huge":
        opening = json.dumps(envelope | {"object": "chat.completion"})[:-1] + ', "choices": [{"index": 0, ' \
            '"message": {"role": "assistant", "content": "'
        await _write(writer, _head(200, {"Content-Type": "application/json", "Content-Length": str(HUGE_BYTES)})
                     + opening.encode())
        for _ in range(HUGE_BYTES // PIECE - 1):
            await _write(writer, b"a" * PIECE)
    elif fault == "odd_stream":
        odd = envelope | {"object": "chat.completion.chunk", "created": ODD_VALUE}
        events = [odd | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": [ODD_VALUE]},
                                      "finish_reason": None}]},
                  odd | {"choices": [], "usage": {"prompt_tokens": ODD_VALUE, "completion_tokens": [1]}}]
        sse = b"".join(b"data: %s\n\n" % json.dumps(event).encode() for event in events) + b"data: [DONE]\n\n"
        await _write(writer, _head(200, {"Content-Type": "text/event-stream", "Content-Length": str(len(sse))})
                     + sse)
    elif fault == "endless_line":
        chunk = json.dumps(envelope | {"object": "chat.completion.chunk"})[:-1] + ', "choices": [{"index": 0, ' \
            '"delta": {"content": "'
        await _write(writer, _head(200, {"Content-Type": "text/event-stream"}) + b"data: " + chunk.encode())
        while True:
            await _write(writer, b"a" * PIECE)
    else:
        raise ValueError(f"not a hostile fault: {fault}")
    return False
