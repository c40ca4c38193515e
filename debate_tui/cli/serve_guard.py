"""textual-serve's server with the checks a local server needs (Jupyter's): a token, the Host, the Origin, a tab cap.

textual-serve answers any page that reaches it: a WebSocket opened by a page on
another origin got the live TUI (pressed F2 and read a saved session off the
screen), and a DNS-rebinding name reaches a loopback port as well. Each tab is
a process holding this machine's keys. So every request must name the served
host (`Host`), a browser's must come from the served page (`Origin`), and every
one but the page's static files must carry the per-run token: in the URL
printed at start, then in a cookie the page sets (SameSite=Strict: a page on
another site cannot send it). Imported only by `serve`, with the serve extra.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from textual_serve.server import Server

COOKIE = "debate_tui_token"
STATIC = "/static/"
"""textual-serve's own script, styles and fonts: the same for everyone, so no token is asked for them."""
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
WILDCARDS = ("0.0.0.0", "::", "")
"""Addresses that listen everywhere (with --public): the names a browser will use cannot be known, so any Host is
taken, and a browser's Origin must then be that Host's."""


def served_hosts(host: str, port: int) -> tuple[str, ...]:
    """The `Host` values that name this server; the first is the canonical one, where the page is served."""
    name = f"[{host}]" if ":" in host else host
    names = [name, "localhost", "127.0.0.1"] if host in ("127.0.0.1", "localhost") else [name]
    return tuple(f"{n}:{port}" for n in names) + (tuple(names) if port == 80 else ())


class GuardedServer(Server):
    """Server that refuses a foreign Host or Origin, a missing or wrong token, and tabs past `max_tabs`."""

    def __init__(self, command: str, *, host: str, port: int, max_tabs: int, **kwargs: Any):
        super().__init__(command, host=host, port=port, **kwargs)
        self.token = secrets.token_urlsafe(24)
        self.hosts = served_hosts(host, port)
        self.any_host = host in WILDCARDS
        self.origins = frozenset(f"http://{h}" for h in self.hosts)
        self.max_tabs = max_tabs
        self.tabs = 0

    @property
    def url(self) -> str:
        """What to open: the page, with the token."""
        return f"{self.public_url}/?token={self.token}"

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    async def on_startup(self, app: web.Application) -> None:
        """Silent: `serve` prints the URL with its token (textual-serve's banner shows one without)."""

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.headers.get("Host", "")
        if not self.any_host and host not in self.hosts:
            return _refused(f"this server answers to {self.hosts[0]} only, not to Host {host[:80]!r}")
        origin = request.headers.get("Origin")
        if origin is not None and origin not in (frozenset({f"http://{host}"}) if self.any_host else self.origins):
            return _refused(f"a page from {origin[:80]!r} may not use this server")
        if request.path.startswith(STATIC):
            return await handler(request)
        given = request.query.get("token") or request.cookies.get(COOKIE) or ""
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return _refused("this page needs its token: open the URL that debate-tui serve printed")
        if request.path == "/" and not self.any_host and host != self.hosts[0]:  # the page's URLs name that one
            raise web.HTTPFound(self.url)
        response = await handler(request)
        if request.path == "/":
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict", path="/")
        return response

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """A tab: refused past `max_tabs`, before its process starts."""
        if self.tabs >= self.max_tabs:
            raise web.HTTPServiceUnavailable(text=f"debate-tui serve: {self.max_tabs} tabs are open, the most it "
                                                  "serves (--max-tabs); close one and reload")
        self.tabs += 1
        try:
            return await super().handle_websocket(request)
        finally:
            self.tabs -= 1


def _refused(reason: str) -> web.Response:
    return web.Response(status=403, text=f"debate-tui serve: {reason}\n")
