"""Environments (issue 45): a deleted working directory, file and folder names that are not UTF-8, standard input or
output closed, a session dated year 1 without a time zone: one line or the listing goes on, never a traceback.
Each test failed before (a traceback, or a listing that ended)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from debate_tui.cli import main
from debate_tui.store import SessionStore, write_session
from tests.helpers.sessions import make_session
from tests.helpers.ui import RecordingDemo, open_setup, wait_until


def one_error(err: str) -> str:
    assert "Traceback" not in err, err
    [line] = [line for line in err.splitlines() if line.strip()]
    assert line.startswith("debate-tui: error: "), err
    return line


def demo_text(directory: Path) -> Path:
    path = directory / "text.txt"
    path.write_text("A short text to judge. It has two sentences.")
    return path


@pytest.fixture
def gone_cwd(tmp_path, monkeypatch):
    """The working directory deleted under the process (as `rm -rf` from another shell does); the .env loader runs
    again for each command."""
    from debate_tui import envfile

    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    monkeypatch.setattr(envfile, "_loaded", False)
    return tmp_path


@pytest.mark.parametrize("argv", [
    ["run", "--demo", "--protocol", "single", "--text", "{text}", "--session", "s.json"],
    ["batch", "items.jsonl", "--out", "r.jsonl", "--demo"],
    ["sessions", "--no-examples"],
    ["config", "show"],
    ["review", "r.jsonl", "--list"],
    ["meta", "r.jsonl"],
    ["export", "nope"],
])
def test_a_deleted_working_directory_gives_one_line_or_works(gone_cwd, capsys, argv):
    from debate_tui import envfile

    text = demo_text(gone_cwd)
    code = main([arg.replace("{text}", str(text)) for arg in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert envfile.loaded_from is None  # no .env where there is no directory
    if code != 0:
        assert err.strip().splitlines()[-1].startswith(("debate-tui: error: ", "error: ")), err


def test_a_deleted_working_directory_names_the_cause(gone_cwd, capsys):
    assert main(["run", "--demo", "--protocol", "single", "--text", str(demo_text(gone_cwd)),
                 "--session", "s.json"]) == 2
    assert "the working directory is gone" in one_error(capsys.readouterr().err)


def test_a_text_file_name_that_is_not_utf8_is_refused_in_one_line(tmp_path, capsys):
    name = os.fsdecode(bytes(tmp_path) + b"/story-\xff.txt")
    Path(name).write_text("A short text to judge. It has two sentences.")
    assert main(["run", "--demo", "--protocol", "single", "--text", name]) == 2
    line = one_error(capsys.readouterr().err)
    assert "story-\\xff.txt is not valid UTF-8" in line


def test_a_sessions_folder_whose_name_is_not_utf8_is_listed(tmp_path, capsys):
    folder = Path(os.fsdecode(bytes(tmp_path) + b"/sessions-\xfe"))
    assert main(["run", "--demo", "--protocol", "single", "--text", str(demo_text(tmp_path)),
                 "--sessions-dir", str(folder)]) == 0
    made = json.loads(capsys.readouterr().out)["session"]
    assert main(["sessions", "--no-examples", "--sessions-dir", str(folder)]) == 0
    assert made in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["run", "--demo", "--protocol", "single", "--text", "-"],
                                  ["batch", "-", "--out", "{out}", "--demo"]])
def test_standard_input_closed_is_one_line(tmp_path, capsys, monkeypatch, argv):
    monkeypatch.setattr(sys, "stdin", None)  # as `debate-tui run --text - <&-` starts
    assert main([arg.replace("{out}", str(tmp_path / "r.jsonl")) for arg in argv]) == 2
    assert "standard input is closed" in one_error(capsys.readouterr().err)


def test_export_to_a_closed_standard_output_is_one_line(tmp_path, capsys, monkeypatch):
    from debate_tui.locations import examples_dir

    monkeypatch.setattr(sys, "stdout", None)  # as `debate-tui export ID >&-` starts
    assert main(["export", str(examples_dir() / "single-example.json")]) == 2
    assert "standard output is closed; pass --out FILE" in one_error(capsys.readouterr().err)


def _year_one(store: SessionStore) -> None:
    """A good session, and one dated 0001-01-01T00:00:00 with no time zone (a hand-made or foreign file)."""
    good = make_session("single", criteria="coherence")
    good.id = "20260301-120000-good"
    store.save(good)
    old = make_session("single", criteria="coherence")
    old.id = "00010101-000000-old"
    path = store.path_for(old.id)
    write_session(path, old)
    data = json.loads(path.read_text())
    data["created_at"] = data["updated_at"] = "0001-01-01T00:00:00"
    path.write_text(json.dumps(data))


def test_a_session_dated_year_one_without_a_zone_does_not_hide_the_others(capsys):
    from debate_tui.config import load_config

    store = load_config().session_store()
    _year_one(store)
    assert [row.id for row in store.list()] == ["20260301-120000-good", "00010101-000000-old"]
    assert main(["sessions", "--no-examples"]) == 0
    out = capsys.readouterr().out
    assert "20260301-120000-good" in out and "00010101-000000-old" in out


async def test_the_sessions_screen_lists_beside_a_session_dated_year_one():
    from debate_tui.config import load_config
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.launch import Launch
    from debate_tui.ui.screens.sessions import SessionsScreen

    _year_one(load_config().session_store())
    app = DebateTUI(Launch(), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        await open_setup(pilot)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.rows) >= 2,
                         what="both rows, not Loading... for good")
