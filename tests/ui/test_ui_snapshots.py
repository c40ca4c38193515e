"""SVG snapshots of every screen at 120x36 and 80x24, with ids, dates and clocks frozen.

Update with `pytest tests/ui/test_ui_snapshots.py --snapshot-update` and read the
SVGs (tests/ui/__snapshots__/test_ui_snapshots/) before committing them.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from debate_tui.domain import ErrorSpan, Outcome, Session, Turn, Usage
from debate_tui.store import SessionStore
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from debate_tui.ui.screens.debate import DebateScreen
from debate_tui.ui.screens.sessions import SessionsScreen
from tests.helpers import STORY
from tests.helpers.sessions import make_session
from tests.helpers.ui import (
    RecordingDemo,
    ScriptedClient,
    app_with,
    chateval_session,
    frozen,
    open_setup,
    report_built,
    scaleeval_session,
    settle,
    wait_until,
)

SIZES = [pytest.param((120, 36), id="120x36"), pytest.param((80, 24), id="80x24")]
SNAPSHOT_SESSIONS = Path("/tmp/debate-tui-snapshot-sessions")
"""A fixed path, because the sessions screen shows where the sessions live."""
SNAPSHOT_CONFIG = Path("/tmp/debate-tui-snapshot-config")
"""A fixed path, because the help shows where the themes live; only read (nothing is written there)."""

SCORER_REPLY = ("Looking at **coherence**: the story moves from wanting to swim to swimming, "
                "but one sentence is repeated word for word.\n\n- the repetition breaks the flow\n"
                "- the ending follows from the beginning\n\nScore: 4")


def reviewed_session() -> Session:
    """A finished MATEval-like review with located errors of three types and one unlocated."""
    text = STORY.replace(". ", ".\n", 2)
    repeated = "He went to the pool every morning."
    first = text.index(repeated)
    second = text.index(repeated, first + 1)
    afraid = text.index("afraid of the water")
    errors = [
        ErrorSpan(type="REP", quote=repeated, start=second, end=second + len(repeated),
                  explanation="The sentence repeats the previous one word for word.", deduction=1),
        ErrorSpan(type="LINC", quote="At first he was afraid", start=afraid - 16, end=afraid + 6,
                  explanation="The fear comes after the daily visits: the order is unclear.", deduction=1),
        ErrorSpan(type="FER", quote="without stopping", start=text.index("without stopping"),
                  end=text.index("without stopping") + 16, explanation="An unsupported claim of progress.",
                  deduction=0.5),
        ErrorSpan(type="DCONT", quote="he hated water", explanation="Quoted text not found in the story."),
    ]
    session = make_session(text=text)
    session.protocol = "mateval"
    session.turns = [Turn(slot=0, agent="Scorer", role="scorer", round=0, content=SCORER_REPLY,
                          criterion="coherence", score=4,
                          usage=Usage(calls=1, prompt_tokens=300, completion_tokens=60))]
    session.usage = Usage(calls=1, prompt_tokens=300, completion_tokens=60)
    session.outcome = Outcome(scores={"coherence": -3.5}, method="errors counted", errors=errors,
                              notes=["coherence: 3.5 points deducted for 4 errors"])
    session.status = "completed"
    return frozen(session)


@pytest.mark.parametrize("size", SIZES)
def test_setup(snap_compare, size):
    async def run_before(pilot) -> None:
        setup = await open_setup(pilot)
        setup.set_focus(None)  # a blinking cursor would make the snapshot flaky
        await settle(pilot)

    assert snap_compare(DebateTUI(Launch(texts={"text": STORY})), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_debate_mid_stream(snap_compare, size):
    client = ScriptedClient([SCORER_REPLY, "NO ISSUE"], hold_at=0, hold_after=12)

    async def run_before(pilot) -> None:
        await wait_until(pilot, client.held.is_set, what="the held stream")
        await wait_until(pilot, lambda: "wanting" in pilot.app.screen.panes["Scorer"].turns.live.source)
        await settle(pilot)

    assert snap_compare(app_with(make_session(), client), terminal_size=size, run_before=run_before)


class PanelClient:
    """Every call streams the first `chunks` pieces of its agent's reply, then waits: a frozen mid-stream panel."""

    def __init__(self, chunks: int = 9):
        self.chunks = chunks
        self.streaming: set[str] = set()

    async def complete(self, request, on_delta=None):
        called = re.search(r"short and clear, (.+?)!", request.messages[-1]["content"])  # the referee's name
        persona = called.group(1).lower() if called else "nobody"
        reply = (f"Reading as {persona.replace('-', ' ')}: the story is easy to follow, "
                 "but the second sentence is repeated word for word, which a reader notices.\n\nScore: 4")
        for number, start in enumerate(range(0, len(reply), 8)):
            if number == self.chunks:
                self.streaming.add(persona)
                await asyncio.Event().wait()  # never released: the snapshot is taken mid-stream
            on_delta(reply[start:start + 8])
            await asyncio.sleep(0)
        raise AssertionError("unreachable")


@pytest.mark.parametrize("size", SIZES)
def test_debate_three_panes_streaming(snap_compare, size):
    client = PanelClient()

    async def run_before(pilot) -> None:
        await wait_until(pilot, lambda: len(client.streaming) == 3, what="three referees mid-stream")
        await wait_until(pilot, lambda: all("easy" in p.turns.live.source for p in pilot.app.screen.panes.values()))
        await settle(pilot)

    assert snap_compare(app_with(chateval_session(), client), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_debate_finished(snap_compare, size):
    async def run_before(pilot) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, DebateScreen) and pilot.app.screen.finished)
        await settle(pilot)

    assert snap_compare(app_with(make_session(), RecordingDemo()), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_report_with_highlighted_errors(snap_compare, size):
    async def run_before(pilot) -> None:
        pilot.app.open_report(reviewed_session())
        await report_built(pilot)
        await pilot.press("2")  # once the screen is mounted: a key before that went nowhere, now and then
        await wait_until(pilot, lambda: pilot.app.screen.query_one(TabbedContent).active == "errors")
        pilot.app.screen.show_error(1)
        await settle(pilot)

    assert snap_compare(app_with(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_sessions(snap_compare, size, monkeypatch):
    shutil.rmtree(SNAPSHOT_SESSIONS, ignore_errors=True)
    store = SessionStore(SNAPSHOT_SESSIONS)
    done = reviewed_session()
    done.id = "20260102-030405-review"
    cut = frozen(make_session(text="A second, shorter text. It has two sentences."))
    cut.id, cut.status, cut.error = "20260102-030406-cut", "cancelled", "stopped by the user"
    store.save(done)
    store.save(cut)
    (SNAPSHOT_SESSIONS / "20260101-000000-broken.json").write_text("{ truncated")
    monkeypatch.setattr("debate_tui.ui.app.examples_dir", lambda: None)

    async def run_before(pilot) -> None:
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen) and pilot.app.screen.rows)
        await settle(pilot)

    try:
        assert snap_compare(DebateTUI(Launch(sessions_dir=SNAPSHOT_SESSIONS)), terminal_size=size,
                            run_before=run_before)
    finally:
        shutil.rmtree(SNAPSHOT_SESSIONS, ignore_errors=True)


@pytest.mark.parametrize("size", SIZES)
def test_help_over_setup(snap_compare, size, monkeypatch):
    """The help names the themes folder under the config directory: a fixed one, as each test's own temporary
    directory is longer under xdist (".../popen-gw0/...") and wrapped the help onto another line, which moved
    its scrollbar's thumb ("▄▄" there, "▁▁" with -n 0)."""
    monkeypatch.setenv("DEBATE_TUI_CONFIG_DIR", str(SNAPSHOT_CONFIG))

    async def run_before(pilot) -> None:
        setup = await open_setup(pilot)
        setup.set_focus(None)
        await settle(pilot)  # the form behind the help shows at its edge: drawn once its rows are rebuilt
        await pilot.press("f1")
        await settle(pilot)

    assert snap_compare(DebateTUI(Launch(texts={"text": STORY})), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_decision_dialog(snap_compare, size):
    """ScaleEval without consensus on a swapped order: both texts, each speaker's verdict, the swap said once."""

    async def run_before(pilot) -> None:
        from debate_tui.ui.screens.dialogs import DecisionDialog

        await wait_until(pilot, lambda: isinstance(pilot.app.screen, DecisionDialog), what="the decision dialog")
        pilot.app.clear_notifications()
        await settle(pilot)

    assert snap_compare(app_with(scaleeval_session(seed=1), RecordingDemo()), terminal_size=size,
                        run_before=run_before)
