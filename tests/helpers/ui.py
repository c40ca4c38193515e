"""What the TUI tests share: polling instead of sleeping, scripted clients, frozen stamps, the setup form filled
in as a person would, the debate screen's decision, apps ready to snapshot, and a screen's text as read."""

from __future__ import annotations

import asyncio
import html
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime

from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, Static, TextArea

from debate_tui.cli import build_parser
from debate_tui.cli.tui import tui_request
from debate_tui.domain import Session, Usage
from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback
from debate_tui.llm.demo import DemoClient
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from debate_tui.ui.review.app import ReviewApp
from debate_tui.ui.screens.debate import DebateScreen
from debate_tui.ui.screens.dialogs import DecisionDialog, ExportDialog
from debate_tui.ui.screens.report import ReportScreen
from debate_tui.ui.screens.setup import SetupScreen
from tests.helpers import STORY
from tests.helpers.sessions import make_session

FROZEN_AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


async def wait_until(pilot: Pilot, predicate: Callable[[], object], timeout: float = 10.0, what: str = "") -> None:
    """Let the app run until `predicate()` holds; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.02)


async def settle(pilot: Pilot, timeout: float = 3.0) -> None:
    """Wait until two screenshots 50 ms apart are the same: layout and scroll have come to rest."""
    previous = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pilot.pause(0.05)
        shot = re.sub(r"terminal-\d+", "terminal", pilot.app.export_screenshot())
        if shot == previous:
            return
        previous = shot


def freeze(session: Session, session_id: str = "20260102-030405-example") -> None:
    """The app's `stamp` hook: a fixed id and date, so snapshots and files are reproducible."""
    session.id = session_id
    session.created_at = session.updated_at = FROZEN_AT


class RecordingDemo(DemoClient):
    """The demo model, remembering every request it answered."""

    def __init__(self, delay_s: float = 0.0):
        super().__init__(delay_s=delay_s)
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        self.requests.append(request)
        return await super().complete(request, on_delta)


class ScriptedClient:
    """Replies with fixed texts in turn; `hold_after` chunks into reply `hold_at`, it waits for `release`."""

    def __init__(self, replies: list[str], *, hold_at: int | None = None, hold_after: int = 3, chunk: int = 6):
        self.replies = replies
        self.hold_at = hold_at
        self.hold_after = hold_after
        self.chunk = chunk
        self.release = asyncio.Event()
        self.held = asyncio.Event()
        self.calls = 0

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        text = self.replies[min(self.calls, len(self.replies) - 1)]
        index, self.calls = self.calls, self.calls + 1
        chunks = [text[i:i + self.chunk] for i in range(0, len(text), self.chunk)]
        for number, piece in enumerate(chunks):
            if index == self.hold_at and number == self.hold_after:
                self.held.set()
                await self.release.wait()
            if on_delta is not None:
                on_delta(piece)
            await asyncio.sleep(0)
        return Completion(text=text, usage=Usage(calls=1, prompt_tokens=100, completion_tokens=len(text.split())))


def screen_text(app) -> str:
    """The screen as a person reads it: the screenshot's text placed by column, row by row (whatever widget
    drew it; runs of blank cells are drawn as backgrounds only, so they are put back as spaces)."""
    rows: dict[int, list[str]] = {}
    cell = 12.2  # the width of one cell in Textual's SVG
    for x, line, text in re.findall(r'<text[^>]*x="([\d.]+)"[^>]*clip-path="url\(#[\w-]+-line-(\d+)\)">(.*?)</text>',
                                    app.export_screenshot()):
        row = rows.setdefault(int(line), [])
        column = round(float(x) / cell)
        row.extend(" " * (column - len(row)))
        row[column:column + len(text)] = html.unescape(text).replace("\xa0", " ")
    return "\n".join("".join(rows.get(line, [])) for line in range(max(rows, default=-1) + 1))


def frozen(session: Session) -> Session:
    freeze(session)
    for turn in session.turns:
        turn.started_at = FROZEN_AT
    for action in session.actions:
        action.at = FROZEN_AT
    return session


async def open_setup(pilot) -> SetupScreen:
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen.catalog is not None,
                     what="the catalog")
    def ready() -> bool:
        form = app.screen.query("#option-form *")
        return bool(app.screen.query("AgentRow")) and all(widget.is_mounted for widget in form)

    await wait_until(pilot, ready, what="the option form and the agents")
    return app.screen


async def type_into(pilot, selector: str, text: str) -> None:
    """Type short values key by key, as a person would; set long ones (paths) at once to keep tests fast."""
    widget = pilot.app.screen.query_one(selector, Input)
    widget.focus()
    widget.value = "" if len(text) <= 12 else text
    if len(text) <= 12:
        await pilot.press(*text)


async def configure_and_start(pilot, *, rounds: str = "2", model: str = "", api_base: str = "") -> DebateScreen:
    """Paste the story, set the options (and a model), start; returns the debate screen."""
    setup = await open_setup(pilot)
    text_area = setup.query_one("#text-text", TextArea)
    text_area.focus()
    pilot.app.post_message(events.Paste(STORY))  # as a terminal delivers a paste: to the app, then the focus
    await wait_until(pilot, lambda: text_area.text == STORY, what="the pasted text")
    await type_into(pilot, "#opt-rounds", rounds)
    if model:
        await type_into(pilot, "#model", model)
        await type_into(pilot, "#api-base", api_base)
        await wait_until(pilot, lambda: "Model: " in str(setup.query_one("#demo-notice").render()))
    await pilot.press("ctrl+r")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, DebateScreen), what="the debate screen")
    return pilot.app.screen


async def export_as(pilot, fmt: str, path: str) -> None:
    """Open the export dialog, pick `fmt` (the suffix follows), name the file, press Enter."""
    app = pilot.app
    await pilot.press("e")
    await wait_until(pilot, lambda: isinstance(app.screen, ExportDialog))
    app.screen.query_one(f"#fmt-{fmt}").value = True
    await pilot.pause()
    assert app.screen.query_one("#export-path", Input).value.endswith(f".{fmt}")
    await type_into(pilot, "#export-path", path)
    await pilot.press("enter")


REPORT_BUILT_S = 60.0
"""How long a test waits for the report screen to be built: a thread builds it after the screen's first frame,
and on a loaded machine that takes seconds (the wait used to happen before the screen drew, unseen)."""


async def report_built(pilot: Pilot, what: str = "the report, built") -> ReportScreen:
    """Wait until the report screen is on top and its report built and shown; return it."""
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ReportScreen) and pilot.app.screen.ready,
                     timeout=REPORT_BUILT_S, what=what)
    return pilot.app.screen


async def debate_then_report(pilot) -> DebateScreen:
    """Configure and run a demo debate to its end, then open the report; returns the debate screen."""
    debate = await configure_and_start(pilot)
    await wait_until(pilot, lambda: debate.finished)
    await pilot.press("r")
    await report_built(pilot)
    return debate


async def start(pilot) -> DebateScreen:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, DebateScreen), what="the debate screen")
    return pilot.app.screen


def tie_break_app() -> tuple[DebateTUI, Session]:
    """DEBATE on the demo model with one iteration: the Critic still objects, so a person decides."""
    session = make_session(rounds=1, tie_breaker="human")
    return DebateTUI(Launch(session=session, demo=True), client=RecordingDemo()), session


async def at_decision(pilot) -> DebateScreen:
    debate = await start(pilot)
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, DecisionDialog), what="the decision dialog")
    await pilot.pause()  # let the dialog lay out before clicking it
    return debate


def text_of(app: ReviewApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


def app_with(session: Session | None = None, client=None, **launch) -> DebateTUI:
    return DebateTUI(Launch(session=session, demo=True, **launch), client=client, clock=lambda: 0.0, stamp=freeze)


def chateval_session() -> Session:
    """ChatEval's simultaneous talk on the demo model, frozen for a snapshot."""
    return frozen(make_session("chateval", strategy="simultaneous-talk"))


def scaleeval_session(seed: int = 1) -> Session:
    """Three demo speakers that never agree (no discussion round): a person decides. Seed 1 draws a swapped order."""
    return make_session("scaleeval", rounds=0, on_no_consensus="human", seed=seed, criteria="helpfulness",
                        text_b="Tom swam.", source="Tell a story about learning to swim.")


def scaleeval_app() -> tuple[DebateTUI, Session]:
    """The app on `scaleeval_session()`: a person decides the pair."""
    session = scaleeval_session(seed=1)
    return DebateTUI(Launch(session=session, demo=True), client=RecordingDemo()), session


def args(*argv: str):
    return tui_request(build_parser("tui").parse_args(["tui", *argv]))
