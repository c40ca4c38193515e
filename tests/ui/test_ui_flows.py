"""The TUI's flows, driven with Pilot on the demo model (and the fake server for the real litellm path)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC

import pytest
from textual.widgets import Input

from debate_tui.config import load_config
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from debate_tui.ui.screens.debate import DebateScreen
from debate_tui.ui.screens.dialogs import ExportDialog, OverrideDialog, TextPrompt
from tests.helpers import STORY
from tests.helpers.sessions import make_session, record
from tests.helpers.ui import (
    RecordingDemo,
    configure_and_start,
    debate_then_report,
    export_as,
    freeze,
    open_setup,
    report_built,
    type_into,
    wait_until,
)


class Backend:
    """Where the agents' words come from, and what the model was asked."""

    def __init__(self, kind: str, server=None):
        self.kind = kind
        self.server = server
        self.demo = RecordingDemo() if kind == "demo" else None
        if server is not None:
            server.add_rule("The score ignores the repeated sentence; it is too high.",
                            match="Criticise the score", times=1)
            server.add_rule("NO ISSUE", match="Criticise the score")
            server.add_rule("Reasoning about coherence: one sentence is repeated.\n\nScore: 4")

    @property
    def client(self):
        return self.demo  # None: the app's own ModelRouter, so litellm talks to the fake server

    @property
    def model(self) -> str:
        return "" if self.server is None else "openai/fake-judge"

    @property
    def api_base(self) -> str:
        return "" if self.server is None else self.server.base_url

    def prompts(self) -> list[str]:
        if self.demo is not None:
            return [r.messages[-1]["content"] for r in self.demo.requests]
        return [r.messages[-1]["content"] for r in self.server.requests]


@pytest.fixture(params=["demo", "fake-server"])
def backend(request) -> Backend:
    if request.param == "demo":
        return Backend("demo")
    return Backend("fake-server", request.getfixturevalue("llm_server"))


def status(screen: DebateScreen) -> str:
    return str(screen.status.render())


async def test_paste_configure_run_step_inject_override_report_export_clipboard(backend, tmp_path, monkeypatch):
    app = DebateTUI(Launch(step=True), client=backend.client, stamp=freeze)
    copied: list[str] = []
    monkeypatch.setattr("pyperclip.copy", copied.append)
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await configure_and_start(pilot, model=backend.model, api_base=backend.api_base)
        session = debate.session
        assert {a.model for a in session.agents} == {backend.model or "demo/offline"}
        assert "step" in status(debate)
        await pilot.pause(0.2)
        assert backend.prompts() == [], "step mode: nothing runs before space"

        await pilot.press("space")
        await wait_until(pilot, lambda: len(session.turns) == 1, timeout=30, what="the first turn")
        await pilot.pause(0.1)
        assert len(session.turns) == 1, "one turn per space"

        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, TextPrompt))
        await pilot.press(*"Mind the repeated sentence.", "enter")
        await wait_until(pilot, lambda: session.actions, what="the inject action")
        assert session.actions[0].kind == "inject" and session.actions[0].after_turn == 1

        await pilot.press("space")
        await wait_until(pilot, lambda: len(session.turns) == 2, what="the second turn")
        assert "Mind the repeated sentence." in backend.prompts()[-1]

        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, OverrideDialog))
        await type_into(pilot, "#override-value", "9")
        await type_into(pilot, "#override-why", "too generous")
        await pilot.press("enter")
        assert "outside" in str(app.screen.query_one(".dialog-error").render()), "validated against the scale"
        await type_into(pilot, "#override-value", "2")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(session.actions) == 2)
        override = session.actions[1]
        assert (override.kind, override.criterion, override.value, override.text) == \
            ("override", "coherence", 2.0, "too generous")
        assert override.who == app.user

        await pilot.press("a")
        await wait_until(pilot, lambda: debate.finished, what="the end of the debate")
        assert session.status == "completed", session.error
        assert session.outcome.scores["coherence"] == 2.0
        assert "overridden by" in " ".join(session.outcome.notes)
        final = str(debate.query_one("#verdict").render())  # the person's, beside what the agents said
        assert "Final: coherence 2, set by you; Scorer said" in final and "NO ISSUE after" not in final
        saved = json.loads(app.store.path_for(session.id).read_text())
        assert saved["status"] == "completed" and len(saved["actions"]) == 2

        await pilot.press("r")
        await report_built(pilot)
        report = app.screen
        assert "## Human actions" in report.markdown

        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, ExportDialog))
        target = tmp_path / "out" / "report.md"
        await type_into(pilot, "#export-path", str(target))
        await pilot.press("enter")
        await wait_until(pilot, target.exists, what="the Markdown export")
        assert target.read_text() == report.markdown

        json_target = tmp_path / "out" / "session.json"
        await export_as(pilot, "json", str(json_target))
        await wait_until(pilot, json_target.exists, what="the JSON export")
        assert json.loads(json_target.read_text())["id"] == session.id

        html_target = tmp_path / "out" / "report.html"
        await export_as(pilot, "html", str(html_target))
        await wait_until(pilot, html_target.exists, what="the HTML export")
        assert html_target.read_text().startswith("<!DOCTYPE html>") and session.id in html_target.read_text()

        await pilot.press("c")
        await wait_until(pilot, lambda: copied, what="pyperclip")
        assert copied == [report.markdown]
        await wait_until(pilot, lambda: any("pyperclip" in n.message for n in app._notifications))


async def test_clipboard_falls_back_to_osc52_and_says_so(monkeypatch):
    from debate_tui.report.markdown import render

    def no_backend(text: str) -> None:
        import pyperclip

        raise pyperclip.PyperclipException("no clipboard program")

    monkeypatch.setattr("pyperclip.copy", no_backend)
    app = DebateTUI(Launch(step=False), client=RecordingDemo(), stamp=freeze)
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await debate_then_report(pilot)
        await pilot.press("c")
        await wait_until(pilot, lambda: any("OSC 52" in n.message for n in app._notifications), what="the notice")
        assert app.clipboard == render(debate.session)


async def test_sessions_list_replay_resume_delete():
    from debate_tui.store import read_session
    from debate_tui.ui.screens.dialogs import ConfirmDialog
    from debate_tui.ui.screens.sessions import SessionsScreen

    store = load_config().session_store()
    done, interrupted = make_session(), make_session()
    done.id, interrupted.id = "20260101-000000-done", "20260101-000001-cut"
    await record(done, store)
    cut_path = await record(interrupted, store, stop_after=1)
    assert read_session(cut_path).status == "cancelled" and len(read_session(cut_path).turns) == 1
    (store.root / "broken.json").write_text("{not json")

    app = DebateTUI(Launch(), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        await open_setup(pilot)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.rows, what="rows")
        sessions = app.screen
        rows = {row.summary.id: row for row in sessions.rows.values()}
        assert {"20260101-000000-done", "20260101-000001-cut", "broken"} <= set(rows)
        assert rows["broken"].summary.problem
        table = sessions.query_one("#sessions-table")

        def select(session_id: str) -> None:
            table.move_cursor(row=table.get_row_index(str(rows[session_id].summary.path)))

        select("20260101-000000-done")
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what="the replay")
        replay = app.screen
        assert replay.kind == "replay" and replay.control.mode == "step"
        await pilot.press("space")
        await wait_until(pilot, lambda: "round 0" in str(replay.panes["Scorer"].header.render())
                         or replay.panes["Scorer"].trail.points, what="the first replayed turn")
        await pilot.press("a")
        await wait_until(pilot, lambda: replay.finished, what="the end of the replay")
        assert replay.panes["Scorer"].trail.points == [(t.score, 1.0, 5.0) for t in done.turns if t.score is not None]
        assert "Final: coherence" in str(replay.query_one("#verdict").render())
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is sessions)

        select("20260101-000001-cut")
        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what="the resumed run")
        resumed = app.screen
        await wait_until(pilot, lambda: resumed.finished, what="the resumed run to finish")
        assert resumed.session.status == "completed"
        assert read_session(cut_path).status == "completed"
        assert app.client.requests, "the resumed run called the model for the missing turns"
        assert len(app.client.requests) == len(resumed.session.turns) - 1, "the completed turn was not re-asked"
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is sessions)

        select("20260101-000000-done")
        await pilot.press("enter")
        await report_built(pilot, what="the report")
        assert app.screen.session.id == done.id
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is sessions)

        select("broken")
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("n")
        assert (store.root / "broken.json").exists()
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await wait_until(pilot, lambda: not (store.root / "broken.json").exists(), what="the deletion")
        await wait_until(pilot, lambda: "broken" not in {r.summary.id for r in sessions.rows.values()})


async def test_a_long_sessions_list_fills_every_row_and_opens_the_last(monkeypatch):
    """Rows past the first screenful are added after it: all must arrive, newest first, and End reach the oldest."""
    from datetime import datetime, timedelta

    from debate_tui.locations import examples_dir
    from debate_tui.ui.screens.sessions import SessionsScreen

    count = 300
    store = load_config().session_store()
    store.root.mkdir(parents=True, exist_ok=True)
    example = json.loads((examples_dir() / "debate-example.json").read_text(encoding="utf-8"))
    for index in range(count):
        created = (datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=index)).isoformat()
        data = {**example, "id": f"many-{index:03d}", "created_at": created, "updated_at": created}
        store.path_for(data["id"]).write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr("debate_tui.ui.app.examples_dir", lambda: None)

    app = DebateTUI(Launch())
    async with app.run_test(size=(120, 36)) as pilot:
        await open_setup(pilot)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.rows, what="rows")
        table = app.screen.query_one("#sessions-table")
        await wait_until(pilot, lambda: table.row_count == count, what=f"all {count} rows in the table")
        keys = [table.coordinate_to_cell_key((row, 0)).row_key.value for row in range(count)]
        assert keys == [str(store.path_for(f"many-{index:03d}")) for index in reversed(range(count))]
        await pilot.press("end")
        assert table.cursor_row == count - 1
        await pilot.press("enter")
        await report_built(pilot, what="the oldest session's report")
        assert app.screen.session.id == "many-000"
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        await pilot.press("f5")  # the same rows again: the fill must still finish

        def filling() -> bool:
            return any(worker.group == "sessions-list" and not worker.is_finished for worker in app.workers)

        await wait_until(pilot, lambda: not filling() and table.row_count == count, what="the refreshed list")


async def test_every_shipped_example_session_opens_and_replays():
    """A new user can open and replay one example per protocol at once, no model needed."""
    from debate_tui.locations import examples_dir
    from debate_tui.protocols import PROTOCOLS
    from debate_tui.store import SessionStore
    from debate_tui.ui.screens.sessions import SessionsScreen

    examples = SessionStore(examples_dir()).list()
    assert {row.protocol for row in examples} >= set(PROTOCOLS)
    assert all(row.problem is None and row.status == "completed" for row in examples)
    app = DebateTUI(Launch(), replay_delay_s=0)
    async with app.run_test(size=(160, 45)) as pilot:
        await open_setup(pilot)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.rows)
        sessions = app.screen
        table = sessions.query_one("#sessions-table")
        assert sum(row.example for row in sessions.rows.values()) == len(examples)
        for row in examples:
            table.move_cursor(row=table.get_row_index(str(row.path)))
            await pilot.press("r")
            await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what=f"the {row.protocol} replay")
            replay = app.screen
            await pilot.press("a")
            await wait_until(pilot, lambda replay=replay: replay.finished, timeout=30,
                             what=f"the end of {row.protocol}")
            assert "Final:" in str(replay.query_one("#verdict").render())
            await pilot.press("r")
            await report_built(pilot)
            await pilot.press("escape", "escape")
            await wait_until(pilot, lambda: app.screen is sessions)


async def test_agents_rebuilt_twice_at_once_never_remove_rows_still_mounting():
    app = DebateTUI(Launch(texts={"text": STORY}))
    async with app.run_test() as pilot:
        setup = await open_setup(pilot)
        rows = list(setup.query("AgentRow"))
        await setup._rebuild_agents()
        assert list(setup.query("AgentRow")) == rows, "the same agents: the rows are kept"
        for index in range(3):
            rows[0].query_one(".agent-model", Input).value = f"openai/model-{index}"
            await asyncio.gather(setup._rebuild_agents(), setup._rebuild_agents())
            await pilot.pause()
            models = [row.read()[1] for row in setup.query("AgentRow")]
            assert models[0] == f"openai/model-{index}" and len(models) == len(rows)
            rows = list(setup.query("AgentRow"))
