"""The side-by-side compare view (issue 44): two sessions marked on the sessions screen and compared with the
`sessions.compare` key, or `debate-tui compare A B --tui` (two sessions, or the changed items of two results files)."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from debate_tui.cli import main
from debate_tui.config import load_config
from debate_tui.domain import Session
from debate_tui.locations import examples_dir
from debate_tui.report.compare import compare_sessions
from debate_tui.store import SessionStore, read_session
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.compare_app import CompareApp
from debate_tui.ui.launch import Launch
from debate_tui.ui.screens.changed_items import ChangedItemsScreen
from debate_tui.ui.screens.compare import PARTS_HERE, CompareScreen
from debate_tui.ui.screens.help import HelpScreen
from debate_tui.ui.screens.sessions import SessionsScreen
from debate_tui.ui.widgets.side_by_side import SideBySide
from tests.helpers import STORY
from tests.helpers.sessions import make_session, record
from tests.helpers.ui import RecordingDemo, open_setup, screen_text, wait_until

REPEATED = " He went to the pool every morning."
MATEVAL_TYPES = "REP,LINC,DCONT,ILC,FER"


def debate_and_fork() -> tuple[Session, Session]:
    """The shipped DEBATE example and a copy whose third turn (index 2) says something else: they part there."""
    a = read_session(examples_dir() / "debate-example.json")
    b = read_session(examples_dir() / "debate-example.json")
    b.id = "fork-of-the-example"
    b.turns[2] = b.turns[2].model_copy(update={"content": "[bold]A different third turn[/bold]\x1b[31m"})
    return a, b


async def mateval_pair(store: SessionStore) -> tuple[Path, Path]:
    """MATEval on the demo model over the story and over the story with its repeated sentence removed."""
    a, b = (make_session("mateval", text=text, criteria=MATEVAL_TYPES)
            for text in (STORY, STORY.replace(REPEATED, "", 1)))
    a.id, b.id = "20260301-120000-story", "20260301-121000-story-fixed"
    a.created_at, b.created_at = datetime(2026, 3, 1, 12, 0, tzinfo=UTC), datetime(2026, 3, 1, 12, 10, tzinfo=UTC)
    return await record(a, store), await record(b, store)


def widgets_text(screen: CompareScreen) -> list[str]:
    """The scroll's Statics in order, as text: what a person reads from the top down."""
    return [str(w.render()) for w in screen.query("#compare-scroll Static")]


async def sessions_screen(pilot) -> SessionsScreen:
    app = pilot.app
    await open_setup(pilot)
    await pilot.press("f2")
    await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.rows) >= 2,
                     what="the sessions")
    return app.screen


async def test_two_sessions_marked_on_the_sessions_screen_open_side_by_side_and_escape_goes_back():
    store = load_config().session_store()
    path_a, path_b = await mateval_pair(store)
    app = DebateTUI(Launch(), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        sessions = await sessions_screen(pilot)
        await pilot.press("c")  # nothing marked: refused, said why
        await wait_until(pilot, lambda: any("0 marked" in str(n.message) for n in app._notifications),
                         what="the refusal")
        await pilot.press("m")  # the newest (the fixed story) is A
        await pilot.press("down", "space")
        await wait_until(pilot, lambda: sessions.marked == [str(path_b), str(path_a)], what="two marks")
        lines = screen_text(app).splitlines()
        assert "✓A" in next(line for line in lines if "2026-03-01 12:10" in line)
        assert "✓B" in next(line for line in lines if "2026-03-01 12:00" in line)
        await pilot.press("up", "m")  # unmarked: the other becomes A
        await wait_until(pilot, lambda: sessions.marked == [str(path_a)], what="one mark")
        await pilot.pause(0.05)
        assert "✓A" in next(line for line in screen_text(app).splitlines() if "2026-03-01 12:00" in line)
        await pilot.press("m")
        await wait_until(pilot, lambda: sessions.marked == [str(path_a), str(path_b)], what="A the story")
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), what="the compare view")
        view = app.screen
        assert (view.comparison.a.id, view.comparison.b.id) == ("20260301-120000-story", "20260301-121000-story-fixed")
        [only_a] = view.comparison.only_a
        assert (only_a.type, only_a.quote) == ("REP", REPEATED.strip())
        text = "\n".join(widgets_text(view))
        assert f"only A  REP  1:{only_a.column}  {REPEATED.strip()!r}" in text
        assert "Errors: 0 in both, 1 only in A, 0 only in B" in text
        assert [line.split() for line in text.splitlines() if line.startswith(("REP ", "total "))] == [
            ["REP", "-1", "0", "+1"], ["total", "-1", "0", "+1"]]
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is sessions, what="back on the sessions screen")


async def test_a_third_mark_is_refused_naming_the_two_and_the_compare_key_follows_the_keymap():
    store = load_config().session_store()
    for n in range(3):
        session = make_session(text=f"Text number {n}.")
        session.id = f"20260301-12{n}000-s{n}"
        store.save(session)
    app = DebateTUI(Launch(), client=RecordingDemo())
    app.set_keymap({"sessions.compare": "x"})
    async with app.run_test(size=(120, 36)) as pilot:
        sessions = await sessions_screen(pilot)
        await pilot.press("m", "down", "m", "down", "m")
        await wait_until(pilot, lambda: any("marked already" in str(n.message) for n in app._notifications),
                         what="the refusal of a third")
        assert len(sessions.marked) == 2
        [refusal] = [str(n.message) for n in app._notifications if "marked already" in str(n.message)]
        assert "A = 20260301-122000-s2 and B = 20260301-121000-s1" in refusal
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        keys = {row[2]: row for row in app.screen.keys}
        assert keys["sessions.compare"][0] == "x" and keys["sessions.compare"][3]  # remapped, with its tooltip
        assert "m" in keys["sessions.mark"][0] and keys["sessions.mark"][3]
        await pilot.press("escape")
        await pilot.press("c")
        await pilot.pause(0.1)
        assert app.screen is sessions  # c is no longer the key
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), what="the view by the remapped key")


async def test_the_view_marks_the_turn_where_a_fork_parts_and_lays_each_round_side_by_side():
    a, b = debate_and_fork()
    comparison = compare_sessions(a, b)
    app = CompareApp(CompareScreen(comparison))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), what="the view")
        view = app.screen
        debates = view.query_one(SideBySide)
        lines = debates.text_lines()
        [mark] = [i for i, line in enumerate(lines) if line.startswith(PARTS_HERE)]
        assert "turn 3 is the first that differs" in lines[mark]
        assert lines[mark + 1] == "round 1"  # the round is cut at the turn, not moved whole below the mark
        pairs = [re.findall(r"#\d+ [A-Z][a-z]+", line) for line in lines if line.startswith("#")]
        above = [p for p in pairs[:len([line for line in lines[:mark] if line.startswith("#")])]]
        assert above == [["#1 Scorer", "#1 Scorer"], ["#2 Critic", "#2 Critic"]]
        assert pairs[len(above)] == ["#3 Scorer", "#3 Scorer"]  # each turn beside its twin
        third = next(line for line in lines if line.startswith("#3 "))
        assert third.index("#3 Scorer", 1) >= 36  # two columns at 80, neither squeezed
        assert any("turn[/bold]\\x1b[31m" in line for line in lines)  # literally: never markup, never sent
        assert any("[bold]A different" in line for line in lines)
        assert not any("\x1b" in line for line in lines)
        await pilot.press("p")
        await pilot.pause(0.1)
        scroll = view.query_one("#compare-scroll")
        assert scroll.scroll_y > 0
        shown = screen_text(app).splitlines()
        assert any(line.strip().startswith(PARTS_HERE) for line in shown[:2]) or scroll.scroll_y == scroll.max_scroll_y
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        ids = [row[2] for row in app.screen.keys]
        assert "compare.back" in ids and "compare.part" in ids
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: not app.is_running, what="escape closes compare --tui")


def test_compare_sessions_tui_starts_the_view(monkeypatch, tmp_path):
    a, b = debate_and_fork()
    store = load_config().session_store()
    store.save(a)
    store.save(b)
    seen: list[object] = []

    def drive(self: CompareApp) -> None:
        async def go() -> None:
            async with self.run_test(size=(120, 36)) as pilot:
                await wait_until(pilot, lambda: isinstance(self.screen, CompareScreen), what="the view")
                seen.append(self.screen.comparison.parts_at)

        asyncio.run(go())

    monkeypatch.setattr(CompareApp, "run", drive)
    assert main(["compare", a.id, b.id, "--tui"]) == 0
    assert seen == [2]


def results(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


async def test_the_changed_items_of_two_results_files_open_their_two_sessions_or_say_why_not(tmp_path):
    store = load_config().session_store()
    a, b = debate_and_fork()
    store.save(a)
    store.save(b)
    first = results(tmp_path / "a.jsonl", [{"id": "x", "criterion": "coherence", "predicted": 4, "session": a.id},
                                           {"id": "y", "criterion": "coherence", "predicted": 2}])
    second = results(tmp_path / "b.jsonl", [{"id": "x", "criterion": "coherence", "predicted": 2, "session": b.id},
                                            {"id": "y", "criterion": "coherence", "predicted": 5}])
    shown: list[CompareApp] = []

    def keep(self: CompareApp) -> None:
        shown.append(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(CompareApp, "run", keep)
        assert main(["compare", first, second, "--tui", "--bootstrap", "0"]) == 0
    [app] = shown
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ChangedItemsScreen), what="the list")
        items = app.screen
        assert [c.data()["id"] for c in items.changed] == ["y", "x"]  # by |delta|: 3 then 2
        assert "changed items" in screen_text(app)
        await pilot.press("enter")  # y: neither line names a session
        await wait_until(pilot, lambda: any("names no session" in str(n.message) for n in app._notifications),
                         what="why not")
        assert "'y'" in next(str(n.message) for n in app._notifications if "names no session" in str(n.message))
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), what="x's two sessions")
        assert (app.screen.comparison.a.id, app.screen.comparison.b.id) == (a.id, b.id)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is items, what="back to the list")


SIZES = [pytest.param((120, 36), id="120x36"), pytest.param((80, 24), id="80x24")]


@pytest.mark.parametrize("size", SIZES)
def test_compare_view_snapshot(snap_compare, size):
    """MATEval over the story and the story fixed: scores, the REP only in A on A's text, the parting mark.
    Update with `pytest tests/ui/test_ui_compare.py --snapshot-update` and read the SVGs before committing."""
    store = load_config().session_store()
    path_a, path_b = asyncio.run(mateval_pair(store))
    comparison = compare_sessions(read_session(path_a), read_session(path_b))
    assert snap_compare(CompareApp(CompareScreen(comparison)), terminal_size=size)


async def test_a_debate_that_went_on_longer_shows_no_turn_beside_its_extra_turns_and_no_parting_mark():
    a, b = debate_and_fork()
    b.turns = [turn.model_copy() for turn in a.turns[:3]]  # B stopped after A's first three turns
    a.turns[3] = a.turns[3].model_copy(update={"finish_reason": "length", "reply_tokens": 200})
    app = CompareApp(CompareScreen(compare_sessions(a, b)))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), what="the view")
        lines = app.screen.query_one(SideBySide).text_lines()
        assert not any(line.startswith(PARTS_HERE) for line in lines)
        last = next(line for line in lines if line.startswith("#4 "))
        assert last.startswith("#4 Critic") and last.endswith("(no turn here)")
        assert "NO ISSUE · truncated at 200" in last  # how a turn ended is said, as on the debate screen
        assert "they never part: the first 3 turns of each are the same" in "\n".join(widgets_text(app.screen))
        await pilot.press("p")
        await wait_until(pilot, lambda: any("never part" in str(n.message) for n in app._notifications),
                         what="p says there is no parting")
