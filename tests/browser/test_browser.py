"""In a real browser (issue 29): the HTML report as a reader sees it, and the TUI served to a browser tab.

Opt-in: `python3 dev.py test-browser` installs Chromium from the system's packages if missing and runs this
folder with DEBATE_TUI_BROWSER_TESTS=1. Screenshots go to DEBATE_TUI_SCREENSHOTS (default: the test's
temporary folder).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.server
import json
import os
import threading
import time
from pathlib import Path

import pytest

from debate_tui.cli import main
from debate_tui.domain import ErrorSpan
from debate_tui.locations import examples_dir
from debate_tui.report.html import render_html
from debate_tui.store import read_session
from debate_tui.textsafe import inert
from tests.browser.chromium import Chromium, executable
from tests.helpers import STORY
from tests.helpers.serve import serving

if os.environ.get("DEBATE_TUI_BROWSER_TESTS") != "1":
    pytest.skip("the browser suite runs with `python3 dev.py test-browser` (it installs Chromium)",
                allow_module_level=True)
if executable() is None:
    pytest.skip("no Chromium: `python3 dev.py test-browser` installs it (apt-get install chromium)",
                allow_module_level=True)

PWNED = "document.title='pwned';window.pwned=1"
HOSTILE = [f"<script>{PWNED}</script>", f'<img src=x onerror="{PWNED}">', "[click](javascript:alert(1))",
           '<a href="javascript:alert(1)">click</a>', "Good <!-- hides the rest", "\x1b]52;c;ZQ==\x07\x1b[2J",
           "safe\u202egnp.exe\u202c", '" onmouseover="alert(1)', "<style>body{display:none}</style>"]


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    return Path(os.environ.get("DEBATE_TUI_SCREENSHOTS") or tmp_path)


def highlight_pixels(png: Path, colour: tuple[int, int, int], tolerance: int = 14) -> int:
    """How many pixels of the screenshot have the highlight's colour (the mark, not the legend's swatch only)."""
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(png).convert("RGB"), dtype=int)
    return int((np.abs(pixels - np.array(colour)) <= tolerance).all(axis=2).sum())


async def test_mateval_report_shows_its_error_highlighted_with_its_tip(tmp_path, shots, capfd):
    story = tmp_path / "story.txt"
    story.write_text(STORY)
    report = tmp_path / "mateval.html"
    argv = ["run", "--demo", "--protocol", "mateval", "--text", str(story), "--report", str(report)]
    assert await asyncio.to_thread(main, argv) == 0  # `run` has its own event loop
    capfd.readouterr()
    async with Chromium() as browser:
        page = await browser.new_page()
        await page.goto(report.as_uri())
        assert await page.eval("document.scripts.length") == 0
        box = await page.eval("(() => { const m = document.querySelector('mark.t0'); m.scrollIntoView({block: "
                              "'center'}); const r = m.getBoundingClientRect(); return [r.x, r.y, r.width, r.height,"
                              " getComputedStyle(m).backgroundColor, m.textContent] })()")
        x, y, width, height, background, text = box
        assert width > 50 and height > 10 and 0 < y < browser.size[1]
        assert background not in ("rgba(0, 0, 0, 0)", "transparent") and "He went to the pool" in text
        await page.hover(x + width / 2, y + height / 2)
        await asyncio.sleep(0.3)
        assert await page.eval("getComputedStyle(document.querySelector('mark.t0 .tip')).display") == "block"
        png = await page.screenshot(shots / "mateval-report.png")
        await page.call("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": "dark"}])
        assert await page.eval("getComputedStyle(document.body).backgroundColor") == "rgb(27, 29, 33)"
        await page.screenshot(shots / "mateval-report-dark.png")
    blended = tuple(round(0.4 * c + 0.6 * b) for c, b in zip((0xE0, 0x6C, 0x75), (0xFD, 0xFD, 0xFC), strict=True))
    assert highlight_pixels(png, blended) > 500  # the marked sentence itself, painted


async def test_hostile_report_runs_nothing_and_hides_nothing(tmp_path, shots):
    session = read_session(examples_dir() / "mateval-example.json")
    text = "Tom swam. " + " ".join(HOSTILE) + " Tom swam.\n"
    session.task.text = text
    start = text.index(HOSTILE[0])
    session.outcome.errors = [ErrorSpan(type="REP", quote=HOSTILE[0], start=start, end=start + len(HOSTILE[0]),
                                        explanation=HOSTILE[1])]
    session.turns[0].content = "\n".join(HOSTILE)
    path = tmp_path / "hostile.html"
    path.write_text(render_html(session), encoding="utf-8")
    async with Chromium() as browser:
        page = await browser.new_page()
        await page.goto(path.as_uri())
        await page.eval("document.querySelectorAll('details').forEach(d => d.open = true)")
        await asyncio.sleep(0.3)
        assert await page.eval("document.title") == f"Evaluation report: MATEval ({session.id})"
        assert await page.eval("window.pwned") is None
        assert await page.eval("document.querySelectorAll('script, img, a, iframe, object').length") == 0
        shown = await page.eval("document.body.innerText")
        missing = [hostile for hostile in HOSTILE if inert(hostile).replace("\n", " ") not in shown]
        assert missing == []  # every hostile text is there, as text: nothing hidden
        await page.eval("document.getElementById('text').scrollIntoView()")
        await page.screenshot(shots / "hostile-report.png")


def completed_sessions(folder: Path) -> list[dict]:
    found = []
    for path in folder.glob("*.json"):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if data.get("status") == "completed":
            found.append(data)
    return found


async def wait_for(predicate, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not await predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.25)


async def test_the_served_app_renders_and_runs_a_demo_debate_from_key_presses(tmp_path, shots):
    pytest.importorskip("textual_serve")
    story = tmp_path / "story.txt"
    story.write_text(STORY)
    sessions = tmp_path / "sessions"
    env = {**os.environ, "DEBATE_TUI_SESSIONS_DIR": str(sessions), "DEBATE_TUI_CONFIG_DIR": str(tmp_path / "config"),
           "DEBATE_TUI_STATE_DIR": str(tmp_path / "state"), "DEBATE_TUI_CACHE_DIR": str(tmp_path / "cache")}
    with serving(tmp_path, "--", "--demo", "--step", "--text", str(story), env=env) as url:
        async with Chromium(size=(1400, 900)) as browser:
            page = await browser.new_page()
            await page.goto(url)

            async def started() -> bool:
                return bool(await page.eval("document.body.classList.contains('-first-byte')"))

            await wait_for(started, 60, "the app's first frame")
            await asyncio.sleep(4)  # the setup screen's form fills in after the first frame
            await page.screenshot(shots / "served-setup.png")
            await page.eval("document.querySelector('.xterm-helper-textarea').focus()")
            await page.press("r", ctrl=True)  # start
            await asyncio.sleep(3)
            for _ in range(3):  # step mode: one turn per key press
                await page.press("space")
                await asyncio.sleep(2.5)
            await page.screenshot(shots / "served-mid-debate.png")
            assert completed_sessions(sessions) == []  # mid-debate, by key presses only
            await page.press("a")  # run the remaining turns

            async def finished() -> bool:
                return bool(completed_sessions(sessions))

            await wait_for(finished, 120, "the debate's verdict")
            await asyncio.sleep(1.5)
            await page.screenshot(shots / "served-verdict.png")
    [done] = completed_sessions(sessions)
    assert done["outcome"]["scores"] and done["protocol"] == "debate"


FOREIGN_PAGE = """<!DOCTYPE html><html><body><script>
window.seen = {ws: "pending", page: "pending"};
const ws = new WebSocket("WS_URL");
ws.onopen = () => { window.seen.ws = "open"; };
ws.onmessage = () => { window.seen.ws = "tui bytes"; };
ws.onclose = (event) => { if (window.seen.ws === "pending") window.seen.ws = "closed " + event.code; };
fetch("PAGE_URL", {credentials: "include"}).then(r => r.text().then(t => { window.seen.page = r.status + " " + t; }))
  .catch(e => { window.seen.page = "blocked: " + e; });
</script></body></html>"""


class QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002  (the standard library's name)
        """No request lines on the test's output."""


@contextlib.contextmanager
def foreign_site(folder: Path, page: str):
    """Another origin on this machine (127.0.0.1, another port: the same site, so the served page's cookie is
    sent along; only the Origin check stands in the way)."""
    (folder / "evil.html").write_text(page)
    handler = functools.partial(QuietFiles, directory=str(folder))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as site:
        threading.Thread(target=site.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{site.server_address[1]}/evil.html"
        finally:
            site.shutdown()


async def test_the_served_app_refuses_a_tokenless_url_and_a_page_from_another_origin(tmp_path, shots):
    pytest.importorskip("textual_serve")
    with serving(tmp_path, "--", "--demo") as url:
        bare = url.split("?")[0]
        port = bare.split(":")[2].strip("/")
        evil = tmp_path / "evil"
        evil.mkdir()
        page_text = FOREIGN_PAGE.replace("WS_URL", f"ws://127.0.0.1:{port}/ws?width=80&height=24").replace(
            "PAGE_URL", bare)
        async with Chromium() as browser:
            page = await browser.new_page()
            await page.goto(bare)  # no token
            assert (await page.eval("document.body.innerText")).strip() == (
                "debate-tui serve: this page needs its token: open the URL that debate-tui serve printed")
            await page.screenshot(shots / "served-no-token.png")
            await page.goto(url)  # the person's own tab: the token's cookie is set
            await wait_for(lambda: page.eval("document.body.classList.contains('-first-byte')"), 60, "the TUI")
            with foreign_site(evil, page_text) as evil_url:
                other = await browser.new_page()
                await other.goto(evil_url)

                async def settled() -> bool:
                    seen = await other.eval("window.seen")
                    return seen["ws"] != "pending" and seen["page"] != "pending"

                await wait_for(settled, 30, "the foreign page's attempts")
                seen = await other.eval("window.seen")
        assert seen["ws"].startswith("closed ") and seen["page"].startswith("blocked: ")
        print("foreign-origin page saw:", seen)
