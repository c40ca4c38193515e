"""Every reply's body read through a byte bound, plain or streamed, compressed or not.

The token cap (`ReplyMeter`) counts what a stream says; it cannot stop a server
that sends one endless SSE line, a 1 GB plain body (a batch's calls are plain),
or 2 MB of gzip that inflate to GBs: each of those took gigabytes before the
call failed with "OpenAIException -". litellm hands its OpenAI-compatible calls
to the openai SDK over the httpx client in `litellm.aclient_session`; this one
wraps litellm's own transport, counts the bytes after decompression (done here,
in bounded pieces, so httpx never inflates a body itself) and ends the read with
`ReplyTooLarge` at `REPLY_BYTES_CAP`. `classify` finds it in the exception chain
and names the bound.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import weakref
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

MB = 1024 * 1024
REPLY_BYTES_CAP = 16 * MB
"""Bytes one reply may take, decompressed. A streamed reply of 4,096 tokens with 20 log-probabilities each is
about 6 MB, a plain one less; at 16 MB one call peaks at tens of MB."""
PIECE = 64 * 1024
"""Largest piece inflated at once: a bomb is counted as it inflates, never held."""
ACCEPTED = "gzip, deflate"
"""The encodings asked for (httpx would also offer br and zstd when their packages are installed)."""
NOT_OPENAI_FORMAT = "the server did not answer in OpenAI's format"
MARKUP = ("text/html", "application/xhtml+xml")
"""What a web server, a login portal or a proxy's error page answers: never a model's reply."""
BOUNDED_PATHS = ("/chat/completions", "/completions", "/responses")
"""The calls whose replies are a model's: bounded. Other endpoints (a provider batch's result files) are not."""
EVENTS = "text/event-stream"
STREAM_FLAG = re.compile(rb'"stream"\s*:\s*true')
"""A request body asking for a stream (inside a JSON string, a quote is escaped: a prompt cannot fake this)."""
DECODED = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS | 32}
"""Content-Encoding -> zlib's wbits (32: a zlib or gzip header, detected)."""


class ReplyRefused(Exception):
    """A reply this client will not read to its end; the message says why, in one line."""


class ReplyTooLarge(ReplyRefused):
    def __init__(self, cap: int):
        super().__init__(f"the reply passed {cap // MB} MB")


def refusal_in(exc: BaseException) -> ReplyRefused | None:
    """The ReplyRefused under the layers litellm and the openai SDK wrap around it, if one is there."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ReplyRefused):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


class _BoundedStream(httpx.AsyncByteStream):
    """The body as it arrives, inflated when it was compressed, ended at `cap` bytes."""

    def __init__(self, inner: httpx.AsyncByteStream, wbits: int | None, cap: int):
        self.inner = inner
        self.wbits = wbits
        self.cap = cap

    async def __aiter__(self) -> AsyncIterator[bytes]:
        inflater = zlib.decompressobj(self.wbits) if self.wbits is not None else None
        seen = 0
        async for raw in self.inner:
            for piece in _inflated(inflater, raw) if inflater is not None else (raw,):
                seen += len(piece)
                if seen > self.cap:
                    raise ReplyTooLarge(self.cap)
                yield piece
        if inflater is not None and (rest := inflater.flush()):
            yield rest

    async def aclose(self) -> None:
        await self.inner.aclose()


def _inflated(inflater: Any, data: bytes) -> list[bytes]:
    """`data` inflated, in pieces of at most PIECE bytes each; only the caller's count decides how many."""
    pieces = []
    try:
        while data:
            pieces.append(inflater.decompress(data, PIECE))
            data = inflater.unconsumed_tail
            if len(pieces) * PIECE > REPLY_BYTES_CAP:  # the caller stops at its cap: inflate no further
                break
    except zlib.error:
        raise ReplyRefused("the server's compressed reply is corrupt") from None
    return pieces


class BoundedTransport(httpx.AsyncBaseTransport):
    """Wraps litellm's transport, one per event loop (a connection pool belongs to its loop)."""

    def __init__(self, make_inner: Callable[[], httpx.AsyncBaseTransport], cap: int = REPLY_BYTES_CAP):
        self.make_inner = make_inner
        self.cap = cap
        self._inner: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncBaseTransport] = (
            weakref.WeakKeyDictionary())

    def _transport(self) -> httpx.AsyncBaseTransport:
        loop = asyncio.get_running_loop()
        if (transport := self._inner.get(loop)) is None:
            transport = self._inner[loop] = self.make_inner()
        return transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not request.url.path.endswith(BOUNDED_PATHS):  # a provider batch's files may well pass the cap
            return await self._transport().handle_async_request(request)
        request.headers["Accept-Encoding"] = ACCEPTED
        response = await self._transport().handle_async_request(request)
        media = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if response.is_success and media in MARKUP:
            await response.aclose()
            raise ReplyRefused(f"{NOT_OPENAI_FORMAT} (a {response.status_code} {media} page: is the api_base right?)")
        if response.is_success and media != EVENTS and _asks_for_stream(request):
            await response.aclose()
            raise ReplyRefused(f"{NOT_OPENAI_FORMAT} (a streamed call answered with {media[:40] or 'an untyped body'}, "
                               "not server-sent events)")
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding != "identity" and encoding not in DECODED:
            await response.aclose()
            raise ReplyRefused(f"the server sent its reply in the {encoding[:40]!r} encoding, which was not asked for")
        headers = [(name, value) for name, value in response.headers.raw
                   if name.lower() not in (b"content-encoding", b"content-length")]
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(response.status_code, headers=headers, request=request, extensions=response.extensions,
                              stream=_BoundedStream(response.stream, DECODED.get(encoding), self.cap))

    async def aclose(self) -> None:
        for transport in list(self._inner.values()):
            await transport.aclose()


def _asks_for_stream(request: httpx.Request) -> bool:
    try:
        return STREAM_FLAG.search(request.content) is not None
    except httpx.RequestNotRead:  # a body sent as a stream (an upload) is no chat request
        return False


def bounded_client() -> httpx.AsyncClient:
    """The httpx client for `litellm.aclient_session`: litellm's own transport (aiohttp by default, with its
    SSL settings and environment proxies) under the byte bound. httpx's own proxy mounts would bypass the
    transport, so they are off (trust_env=False); litellm's aiohttp transport reads the proxy variables itself."""
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler, get_ssl_configuration

    def make_inner() -> httpx.AsyncBaseTransport:
        config = get_ssl_configuration()
        transport = AsyncHTTPHandler.create_async_transport(
            ssl_context=config if isinstance(config, ssl.SSLContext) else None,
            ssl_verify=config if isinstance(config, bool) else None)
        return transport or httpx.AsyncHTTPTransport()

    return httpx.AsyncClient(transport=BoundedTransport(make_inner), trust_env=False, follow_redirects=True)
