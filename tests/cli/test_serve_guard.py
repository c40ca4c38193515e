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


async def test_listening_everywhere_takes_any_host_but_only_its_own_origin():
    """--public --host 0.0.0.0: the names a browser uses are unknown; the Origin must match the Host it used.
    Driven in-process (aiohttp's test client on 127.0.0.1), so nothing listens beyond the loopback address."""
    from aiohttp.test_utils import TestClient, TestServer

    from debate_tui.cli.serve_guard import GuardedServer

    served = GuardedServer("true", host="0.0.0.0", port=8000, max_tabs=1, title="t")
    async with TestClient(TestServer(await served._make_app())) as client:
        token = {"token": served.token}
        lan = {"Host": "192.168.1.5:8000"}
        assert (await client.get("/", params=token, headers=lan)).status == 200
        assert (await client.get("/", params=token, headers=lan | {"Origin": "http://192.168.1.5:8000"})).status == 200
        assert (await client.get("/", params=token, headers=lan | {"Origin": "http://evil.example"})).status == 403
        client.session.cookie_jar.clear()  # the token's cookie, set by the first answer
        assert (await client.get("/", headers=lan)).status == 403
