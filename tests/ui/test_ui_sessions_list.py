"""The sessions list and `meta` as a first-time user meets them (issue 18): newest first, batch items apart and
filterable, a run whose process is gone shown as interrupted with resume offered; n/a said with its reason."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from debate_tui.config import load_config
from debate_tui.meta.evaluate import format_table, meta_evaluate
from debate_tui.safefile import SessionLock
from debate_tui.store import SessionStore
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from debate_tui.ui.screens.debate import DebateScreen
from debate_tui.ui.screens.dialogs import ConfirmDialog
from debate_tui.ui.screens.sessions import SessionsScreen
from tests.helpers.sessions import make_session
from tests.helpers.ui import RecordingDemo, open_setup, screen_text, wait_until

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def saved(store: SessionStore, session_id: str, minutes: int, status: str = "completed", protocol: str = "debate"):
    session = make_session()
    session.id, session.created_at, session.status, session.protocol = (
        session_id, T0 + timedelta(minutes=minutes), status, protocol)
    return store.save(session)


def fill(store: SessionStore) -> None:
    saved(store, "20260301-120000-old", 0)
    saved(store, "batch-0f3a", 30, protocol="chateval")  # hashes sort after or before times: never by name
    saved(store, "20260301-121000-new", 10, status="running")
    saved(store, "batch-ffff", 5, protocol="chateval")
    saved(store, "batch-0000", 50, protocol="chateval")


def test_the_store_lists_interactive_sessions_newest_first_then_batch_items_newest_first():
    store = load_config().session_store()
    fill(store)
    assert [s.id for s in store.list()] == [
        "20260301-121000-new", "20260301-120000-old", "batch-0000", "batch-0f3a", "batch-ffff"]


def test_a_running_session_whose_process_is_gone_is_interrupted_and_one_still_held_is_running():
    store = load_config().session_store()
    path = saved(store, "20260301-121000-new", 10, status="running")
    assert store.list()[0].shown_status == "interrupted"
    with SessionLock(path, "20260301-121000-new"):
        assert store.list()[0].shown_status == "running"
    assert store.list()[0].shown_status == "interrupted"


async def test_the_sessions_screen_sorts_tells_kinds_filters_and_offers_to_resume_an_interrupted_run():
    store = load_config().session_store()
    fill(store)
    app = DebateTUI(Launch(), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        await open_setup(pilot)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.rows) >= 5,
                         what="rows")
        await pilot.pause(0.2)
        sessions = app.screen
        ids = [row.summary.id for row in sessions.rows.values()][:5]
        assert ids == ["20260301-121000-new", "20260301-120000-old", "batch-0000", "batch-0f3a", "batch-ffff"]
        lines = screen_text(app).splitlines()
        first = next(line for line in lines if "2026-03-01 12:10" in line)
        assert "live" in first and "interrupted" in first
        assert "batch" in next(line for line in lines if "2026-03-01 12:50" in line)

        await pilot.press("slash")
        await pilot.press(*"batch")
        await wait_until(pilot, lambda: len(sessions.rows) == 3, what="the filter")
        assert {row.summary.id for row in sessions.rows.values()} == {"batch-0000", "batch-0f3a", "batch-ffff"}
        sessions.query_one("#sessions-filter").value = "interrupted"
        await wait_until(pilot, lambda: [r.summary.id for r in sessions.rows.values()] == ["20260301-121000-new"],
                         what="the status filter")
        await pilot.press("enter")  # from the filter box to the list
        await pilot.press("enter")  # open the interrupted run: resume is offered
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the offer to resume")
        assert "interrupted" in str(app.screen.question)
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what="the resumed run")
        assert app.screen.kind == "resumed"


def test_meta_says_why_a_figure_is_n_a():
    constant = [{"id": str(i), "criterion": "coherence", "predicted": 3, "human": i % 4 + 1} for i in range(8)]
    table = format_table(meta_evaluate(constant, "turn", bootstrap=0), constant)
    assert "coherence: n/a because the predicted scores are all equal (3)" in table
    one = [{"id": "1", "criterion": "coherence", "predicted": 3, "human": 2}]
    assert "n/a because too few scored items (1" in format_table(meta_evaluate(one, "turn", bootstrap=0), one)
    flat_human = [{"id": str(i), "criterion": "fluency", "predicted": i, "human": 2} for i in range(5)]
    assert "n/a because the human scores are all equal (2)" in format_table(
        meta_evaluate(flat_human, "turn", bootstrap=0), flat_human)
    groups = [{"id": str(i), "group": str(i), "criterion": "coherence", "predicted": i, "human": i} for i in range(4)]
    assert "n/a because no group has 2 or more scored items" in format_table(
        meta_evaluate(groups, "summary", bootstrap=0), groups)
    assert "n/a without human labels" in format_table(meta_evaluate([{"id": "1", "predicted": 3}], "turn"))
