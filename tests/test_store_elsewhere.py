"""Every run is listed (issue 46): a run written with `--session story.json` outside the sessions directory is
remembered by the store, listed by `debate-tui sessions` and the TUI's list, found by its id, and forgotten once
its file is gone."""

from __future__ import annotations

import asyncio
import json

from debate_tui.cli import main
from debate_tui.config import load_config
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from debate_tui.ui.screens.sessions import SessionsScreen
from tests.helpers.cli import run_cli
from tests.helpers.ui import open_setup, wait_until


async def tui_rows() -> list[str]:
    """The keys (paths) of the TUI's sessions list once it is filled."""
    app = DebateTUI(Launch())
    async with app.run_test(size=(120, 36)) as pilot:
        await open_setup(pilot)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.rows, what="rows")
        return list(app.screen.rows)


def test_a_session_written_elsewhere_is_listed_found_by_id_and_dropped_when_gone(capsys, story_file, tmp_path,
                                                                                 monkeypatch):
    monkeypatch.setattr("debate_tui.ui.app.examples_dir", lambda: None)
    elsewhere = tmp_path / "work" / "story.json"
    elsewhere.parent.mkdir()
    code, summary, _ = run_cli(capsys, "run", "--demo", "--text", str(story_file), "--session", str(elsewhere))
    assert code == 0 and elsewhere.exists()
    code, listing, _ = run_cli(capsys, "sessions", "--json", "--no-examples")
    assert [(row["id"], row["path"]) for row in listing["sessions"]] == [(summary["session"], str(elsewhere))]
    assert main(["export", summary["session"], "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == summary["session"]
    assert asyncio.run(tui_rows()) == [str(elsewhere)]

    elsewhere.unlink()
    code, listing, _ = run_cli(capsys, "sessions", "--json", "--no-examples")
    assert listing["sessions"] == []
    assert not load_config().session_store().resolve(summary["session"]).exists()
