"""Files the product writes through (issue 45): a lock file is never followed nor truncated when it is not one, the
lock is the file's (a link to the same session or results file takes the same lock), and a clean exit removes it.

Each test failed before safefile.LockFile: the planted link's target was emptied, both runs went ahead, or the
lock file stayed behind.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from debate_tui.batch.results import ResultsFile
from debate_tui.cli import main
from debate_tui.safefile import SessionLock, SessionLocked
from debate_tui.store import write_session
from tests.helpers.sessions import make_session

PRECIOUS = "the user's own file: not a byte of it may change\n"


def victim(tmp_path: Path) -> Path:
    path = tmp_path / "precious.txt"
    path.write_text(PRECIOUS)
    return path


def text_file(tmp_path: Path) -> Path:
    path = tmp_path / "t.txt"
    path.write_text("A short text to judge. It has two sentences.")
    return path


def interrupted_session(directory: Path) -> Path:
    session = make_session("single", criteria="coherence")
    session.status = "running"
    path = directory / f"{session.id}.json"
    write_session(path, session)
    return path


def error_line(err: str) -> str:
    assert "Traceback" not in err, err
    [line] = [line for line in err.splitlines() if line.startswith("debate-tui: error:")]
    return line


def test_a_planted_session_lock_link_is_not_followed_on_resume(tmp_path, capsys):
    target = victim(tmp_path)
    path = interrupted_session(tmp_path / "sessions")
    (path.parent / f".{path.name}.lock").symlink_to(target)
    assert main(["resume", str(path)]) == 2
    assert "is a symbolic link" in error_line(capsys.readouterr().err)
    assert target.read_text() == PRECIOUS


def test_a_planted_lock_beside_a_session_file_is_not_followed_on_run(tmp_path, capsys):
    target = victim(tmp_path)
    session = tmp_path / "out" / "s.json"
    session.parent.mkdir()
    (session.parent / ".s.json.lock").symlink_to(target)
    assert main(["run", "--demo", "--protocol", "single", "--text", str(text_file(tmp_path)),
                 "--session", str(session)]) == 2
    assert "a lock file is never followed" in error_line(capsys.readouterr().err)
    assert target.read_text() == PRECIOUS and not session.exists()


def test_a_planted_results_lock_link_or_hard_link_is_never_truncated(tmp_path, capsys):
    target = victim(tmp_path)
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "text": "Some text. Two sentences."}) + "\n")
    out = tmp_path / "results.jsonl"
    lock = tmp_path / "results.jsonl.lock"
    lock.symlink_to(target)
    assert main(["batch", str(items), "--out", str(out), "--demo", "--protocol", "single"]) == 2
    assert "is a symbolic link" in error_line(capsys.readouterr().err)
    lock.unlink()
    os.link(target, lock)  # a hard link: the same file under the lock's name
    assert main(["batch", str(items), "--out", str(out), "--demo", "--protocol", "single"]) == 2
    assert "has other names" in error_line(capsys.readouterr().err)
    assert target.read_text() == PRECIOUS


def test_a_link_to_a_results_file_takes_the_same_lock(tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "text": "Some text. Two sentences."}) + "\n")
    real = tmp_path / "results.jsonl"
    alias = tmp_path / "alias.jsonl"
    real.write_text("")
    alias.symlink_to(real)
    with ResultsFile(real).locked("a batch"):
        code = main(["batch", str(items), "--out", str(alias), "--demo", "--protocol", "single"])
    assert code != 0 and "is in use (a batch, pid" in capsys.readouterr().err
    assert not real.exists() or real.read_text() == ""


def test_a_link_to_a_session_takes_the_same_lock(tmp_path, capsys):
    path = interrupted_session(tmp_path / "sessions")
    alias = tmp_path / "alias.json"
    alias.symlink_to(path)
    with SessionLock(path, "it"):
        assert main(["resume", str(alias)]) == 2
    assert "is being run by another process" in error_line(capsys.readouterr().err)
    assert json.loads(path.read_text())["status"] == "running"  # not run by the second


def test_clean_exits_leave_no_lock_file(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "text": "Some text. Two sentences."}) + "\n")
    out = tmp_path / "out" / "results.jsonl"
    assert main(["batch", str(items), "--out", str(out), "--demo", "--protocol", "single"]) == 0
    assert main(["review", str(out), "--list"]) == 0
    session = tmp_path / "run" / "s.json"
    assert main(["run", "--demo", "--protocol", "single", "--text", str(text_file(tmp_path)),
                 "--session", str(session)]) == 0
    resumable = interrupted_session(tmp_path / "sessions")
    assert main(["resume", str(resumable)]) == 0
    assert list(tmp_path.rglob("*.lock")) == []


def test_a_lock_file_removed_by_its_last_holder_is_not_shared(tmp_path, monkeypatch):
    """The race removing a lock file opens: a process that opened the file just before its holder removed it must
    not hold that removed file as the lock while another process locks the new one."""
    from debate_tui import safefile

    path = tmp_path / "s.json"
    first = SessionLock(path, "s").acquire()
    stale = os.open(first.path, os.O_RDWR)  # opened before the release removes it
    first.release()
    assert not first.path.exists()
    opened = iter([stale])
    real_open = safefile._open_lock
    monkeypatch.setattr(safefile, "_open_lock", lambda lock: next(opened, None) or real_open(lock))
    second = SessionLock(path, "s").acquire()  # locked the stale file first, saw it gone, took a new one
    try:
        assert second.path.exists()
        with pytest.raises(SessionLocked, match="being run by another process"):
            SessionLock(path, "s").acquire()
    finally:
        second.release()
