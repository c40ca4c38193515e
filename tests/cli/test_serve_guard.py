"""`serve` answers its own page only (issue 45): a raw WebSocket client (aiohttp, the serve extra's own) with a
foreign Origin, without the token, or naming another Host is refused before any TUI starts; the tabs are bounded."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import pytest

from tests.helpers.serve import serving

aiohttp = pytest.importorskip("aiohttp")
pytest.importorskip("textual_serve")


def ws_url(url: str) -> str:
    parts = urlsplit(url)
    return f"ws://{parts.netloc}/ws?width=80&height=24"


def token_of(url: str) -> str:
    return urlsplit(url).query.removeprefix("token=")


async def handshake(url: str, *, headers: dict[str, str] | None = None, cookie: bool = True) -> int | bytes:
    """The refusal's HTTP status, or the TUI's first bytes when the WebSocket was accepted."""
    cookies = {"debate_tui_token": token_of(url)} if cookie else {}
    async with aiohttp.ClientSession(cookies=cookies) as session:
        try:
            async with session.ws_connect(ws_url(url), headers=headers or {}) as ws:
                message = await asyncio.wait_for(ws.receive(), 60)
                return message.data if isinstance(message.data, bytes) else str(message.data).encode()
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status


def test_a_websocket_with_the_token_from_the_served_origin_gets_the_tui(tmp_path):
    with serving(tmp_path, "--", "--demo") as url:
        origin = f"http://{urlsplit(url).netloc}"
        assert isinstance(asyncio.run(handshake(url, headers={"Origin": origin})), bytes)


def test_a_foreign_origin_a_missing_token_and_another_host_are_refused(tmp_path):
    with serving(tmp_path, "--", "--demo") as url:
        netloc = urlsplit(url).netloc
        assert asyncio.run(handshake(url, headers={"Origin": "http://evil.example"})) == 403
        assert asyncio.run(handshake(url, headers={"Origin": f"http://{netloc}"}, cookie=False)) == 403
        assert asyncio.run(handshake(url, headers={"Host": f"rebound.example:{netloc.split(':')[1]}"})) == 403

        async def page(**kwargs: str) -> tuple[int, str]:
            async with aiohttp.ClientSession() as session, session.get(**kwargs) as reply:  # type: ignore[arg-type]
                return reply.status, await reply.text()

        status, text = asyncio.run(page(url=url.split("?")[0]))
        assert status == 403 and text == "debate-tui serve: this page needs its token: open the URL that debate-tui " \
                                         "serve printed\n"
        assert asyncio.run(page(url=url.replace(token_of(url), "wrong")))[0] == 403
        assert asyncio.run(page(url=url))[0] == 200


def test_tabs_past_max_tabs_are_refused(tmp_path):
    with serving(tmp_path, "--max-tabs", "1", "--", "--demo") as url:
        async def two_tabs() -> tuple[bool, int | bytes]:
            async with aiohttp.ClientSession(cookies={"debate_tui_token": token_of(url)}) as session, \
                    session.ws_connect(ws_url(url)) as first:
                await asyncio.wait_for(first.receive(), 60)  # the first tab's TUI is up
                return not first.closed, await handshake(url)

        held, second = asyncio.run(two_tabs())
        assert held and second == 503
