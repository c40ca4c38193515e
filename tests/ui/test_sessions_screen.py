"""The TUI's sessions list as a person tells runs apart (issue 46): the text takes the width, the model is shown,
a question about a row names what the row shows, a run stopped with ctrl+q offers to resume when opened (and
its report says how), and quitting leaves no lock file behind."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from debate_tui.config import load_config
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from debate_tui.ui.screens.dialogs import ConfirmDialog
from debate_tui.ui.screens.report import ReportScreen
from debate_tui.ui.screens.sessions import SessionsScreen
from tests.helpers.sessions import make_session, record
from tests.helpers.ui import configure_and_start, open_setup, wait_until

LONG = "Anna baked bread on Sunday morning and the whole street smelled of it until noon."


async def open_sessions(pilot, app: DebateTUI) -> SessionsScreen:
    await open_setup(pilot)
    await pilot.press("f2")
    await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.rows) >= 2,
                     what="the rows")
    return app.screen


def select(table: DataTable, session_id: str, sessions: SessionsScreen) -> None:
    key = next(key for key, row in sessions.rows.items() if row.summary.id == session_id)
    table.move_cursor(row=table.get_row_index(key))


@pytest.mark.parametrize(("size", "shown"), [((120, 36), 35), ((80, 24), 20)])  # 120: beside the kind
async def test_the_text_uses_the_width_and_the_model_tells_two_runs_apart(monkeypatch, size, shown):
    monkeypatch.setattr("debate_tui.ui.app.examples_dir", lambda: None)
    store = load_config().session_store()
    for number, model in enumerate(("demo/offline", "openai/other-judge")):
        session = make_session(text=LONG, model=model)
        session.id = f"20260101-00000{number}-run"
        await record(session, store)
    app = DebateTUI(Launch())
    async with app.run_test(size=size) as pilot:
        sessions = await open_sessions(pilot, app)
        table = sessions.query_one("#sessions-table", DataTable)
        labels = [str(column.label) for column in table.columns.values()]
        rows = [dict(zip(labels, map(str, table.get_row_at(index)), strict=True)) for index in range(2)]
        assert {row["Model"] for row in rows} == {"demo/offline", "openai/other-judge"}
        assert all(LONG.startswith(row["Text"].rstrip("…")) and len(row["Text"]) >= shown for row in rows)
        assert labels.index("Text") < labels.index("Protocol"), "the text is not pushed off the screen"


async def test_delete_names_the_row_and_a_stopped_run_offers_to_resume_when_opened():
    store = load_config().session_store()
    done, stopped = make_session(text=LONG), make_session(text="Tom swam. Tom swam. He was happy.")
    done.id, stopped.id = "20260101-000000-done", "20260101-000001-cut"
    await record(done, store)
    await record(stopped, store, stop_after=1)
    app = DebateTUI(Launch())
    async with app.run_test(size=(120, 36)) as pilot:
        sessions = await open_sessions(pilot, app)
        table = sessions.query_one("#sessions-table", DataTable)
        select(table, done.id, sessions)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        question = str(app.screen.query_one(".dialog-question", Static).render())
        assert "debate session of" in question and LONG[:30] in question and "demo/offline" in question
        assert done.id not in question.replace(f"{done.id}.json", "")
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is sessions)
        select(table, stopped.id, sessions)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the resume question")
        question = str(app.screen.query_one(".dialog-question", Static).render())
        assert "Tom swam. Tom swam." in question and "stopped before its end" in question and "(y)" in question
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, ReportScreen), what="the stopped run's report")
        assert "resumable: debate-tui resume, or u on the sessions list" in app.screen.markdown


async def test_quitting_during_a_run_leaves_no_lock_file():
    """Issue 46: lock files were left beside outputs after clean exits (the CLI's are tested in
    tests/reliability/test_lock_files.py); ctrl+q in the middle of a stepped run removes the session's."""
    app = DebateTUI(Launch(step=True))
    root = load_config().sessions_dir
    async with app.run_test(size=(120, 36)) as pilot:
        await configure_and_start(pilot)
        await wait_until(pilot, lambda: any(root.glob(".*.lock")), what="the run's lock")
        await pilot.press("ctrl+q")
    assert list(root.glob("*.json")) and not list(root.glob(".*.lock"))
