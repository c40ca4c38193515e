"""Headless Chromium driven through the DevTools protocol (CDP) over its websocket, with aiohttp (textual-serve's
own dependency): navigate, evaluate, press keys, move the mouse, take screenshots. No browser-automation
library, no download: the system's Chromium (`apt-get install chromium`)."""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars", "--remote-debugging-port=0"]
KEYS = {"space": (" ", "Space", 32, " "), "enter": ("Enter", "Enter", 13, "\r"), "tab": ("Tab", "Tab", 9, "")}


def executable() -> str | None:
    named = os.environ.get("DEBATE_TUI_CHROMIUM")
    return named or next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)


class Page:
    """One tab: `call` sends a CDP command and waits for its answer; events are kept, the last per method."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: dict[str, dict[str, Any]] = {}
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.ws:
            data = json.loads(message.data)
            if "id" in data and data["id"] in self.waiting:
                self.waiting.pop(data["id"]).set_result(data)
            elif "method" in data:
                self.events[data["method"]] = data.get("params", {})

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        ident = next(self.ids)
        self.waiting[ident] = asyncio.get_running_loop().create_future()
        await self.ws.send_str(json.dumps({"id": ident, "method": method, "params": params}))
        answer = await asyncio.wait_for(self.waiting[ident], 60)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    async def goto(self, url: str) -> None:
        self.events.pop("Page.loadEventFired", None)
        await self.call("Page.navigate", url=url)
        for _ in range(200):
            if "Page.loadEventFired" in self.events:
                return
            await asyncio.sleep(0.05)
        raise TimeoutError(f"{url} did not load")

    async def eval(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    async def screenshot(self, path: Path) -> Path:
        data = await self.call("Page.captureScreenshot", format="png")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data["data"]))
        return path

    async def press(self, key: str, ctrl: bool = False) -> None:
        """One key, as a person presses it: down (with its text) and up."""
        name, code, number, text = KEYS[key] if key in KEYS else (key, f"Key{key.upper()}", ord(key.upper()), key)
        common = {"key": name, "code": code, "windowsVirtualKeyCode": number, "modifiers": 2 if ctrl else 0}
        await self.call("Input.dispatchKeyEvent", type="keyDown", text="" if ctrl else text, **common)
        await self.call("Input.dispatchKeyEvent", type="keyUp", **common)

    async def hover(self, x: float, y: float) -> None:
        await self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)


class Chromium:
    """A headless Chromium with a fresh profile, stopped (and its profile removed) on exit."""

    def __init__(self, size: tuple[int, int] = (1280, 900)) -> None:
        self.size = size
        self.profile = Path(tempfile.mkdtemp(prefix="debate-tui-chromium-"))
        self.process: subprocess.Popen[bytes] | None = None
        self.session: aiohttp.ClientSession | None = None
        self.pages: list[Page] = []

    async def __aenter__(self) -> Chromium:
        binary = executable()
        assert binary, "no Chromium: `python3 dev.py test-browser` installs it"
        self.process = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={self.profile}",
                                         f"--window-size={self.size[0]},{self.size[1]}", "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            assert time.monotonic() < deadline, "Chromium did not open its DevTools port"
            await asyncio.sleep(0.1)
        self.port = int(port_file.read_text().split()[0])
        self.session = aiohttp.ClientSession()
        return self

    async def new_page(self) -> Page:
        assert self.session is not None
        async with self.session.put(f"http://127.0.0.1:{self.port}/json/new?about:blank") as reply:
            target = await reply.json()
        page = Page(await self.session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0))
        await page.call("Page.enable")
        await page.call("Emulation.setDeviceMetricsOverride", width=self.size[0], height=self.size[1],
                        deviceScaleFactor=1, mobile=False)
        self.pages.append(page)
        return page

    async def __aexit__(self, *exc: object) -> None:
        for page in self.pages:
            page.reader.cancel()
            await page.ws.close()
        if self.session is not None:
            await self.session.close()
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)
