"""kill -9 in the middle of a headless debate, then `resume`: no completed turn is lost.

A real `debate-tui run` process debates against the fake server, whose
latency keeps every call in flight for a while. Once the session file holds
at least two completed turns and the next call has reached the server, the
process is killed with SIGKILL: no handler runs, nothing is flushed. The file
must still parse (atomic writes), `resume` is killed the same way once more,
and a last `resume` must finish with every turn completed before each kill
unchanged and the same result as a run that was never interrupted.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from debate_tui.cli import main
from debate_tui.store import SessionFileError, read_session
from debate_tui.testing.fake_server import FakeLLMServer, Request, prompt_text
from tests.helpers.scripts import CRITIC

ROUNDS = 4
CALLS = 2 * ROUNDS + 1
"""The Critic never agrees: the Scorer speaks ROUNDS + 1 times, the Critic ROUNDS times."""
LAUNCH = [sys.executable, "-c", "from debate_tui.cli import main; raise SystemExit(main())"]


def reply(request: Request) -> str:
    """Deterministic from the prompt alone, so a resumed debate gets the answers an uninterrupted one got."""
    prompt = prompt_text(request)
    if CRITIC in prompt:
        return "The score ignores the repeated sentence; it is too high."
    objections = prompt.count("The Critic replies")
    return f"Reconsidered after {objections} objections.\nScore: {max(1, 5 - objections)}"


@pytest.fixture
def server() -> FakeLLMServer:
    with FakeLLMServer(default_reply=reply, latency=0.4, chunk_delay=0.01) as running:
        yield running


def completed(path: Path) -> list:
    try:
        return [t for t in read_session(path).turns if t.error is None]
    except SessionFileError:  # not written yet
        return []


def kill_when(process: subprocess.Popen, path: Path, server: FakeLLMServer, turns: int) -> None:
    """SIGKILL once `turns` turns are saved and the next call is in flight at the server."""
    lost = server.calls - (len(completed(path)) if path.exists() else 0)
    """Calls of earlier processes that never completed: killed in flight."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read()
        done = len(completed(path)) if path.exists() else 0
        if done >= turns and server.calls - lost > done:
            time.sleep(0.1)  # well inside the 0.4 s the server takes to answer
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
            assert process.returncode == -signal.SIGKILL
            return
        time.sleep(0.02)
    pytest.fail("the run never reached the point to kill it")


def spawn(*argv: str) -> subprocess.Popen:
    return subprocess.Popen([*LAUNCH, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ))


@pytest.mark.serial
def test_kill_9_then_resume_keeps_every_completed_turn_and_finishes(server, story_file, tmp_path, capsys):
    path = tmp_path / "sessions" / "killed.json"
    task = ["--text", str(story_file), "--model", "openai/fake-model", "--api-base", server.base_url,
            "--rounds", str(ROUNDS), "--seed", "7"]

    run = spawn("run", *task, "--session", str(path))
    kill_when(run, path, server, turns=2)
    first = read_session(path)  # atomic writes: the file parses after a kill -9
    assert first.status == "running" and first.outcome is None
    kept_first = [t for t in first.turns if t.error is None]
    assert 2 <= len(kept_first) < CALLS

    resume = spawn("resume", str(path))
    kill_when(resume, path, server, turns=len(kept_first) + 2)
    second = read_session(path)
    assert second.turns[: len(first.turns)] == first.turns
    kept_second = [t for t in second.turns if t.error is None]
    assert len(kept_first) + 2 <= len(kept_second) < CALLS

    server.latency = server.chunk_delay = 0.0  # nothing left to kill: finish fast
    calls_before = server.calls
    assert main(["resume", str(path)]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    final = read_session(path)
    assert final.status == "completed" and final.turns[: len(second.turns)] == second.turns
    assert server.calls - calls_before == CALLS - len(kept_second)  # nothing completed was asked again
    assert len([t for t in final.turns if t.error is None]) == CALLS

    reference = tmp_path / "reference.json"
    assert main(["run", *task, "--session", str(reference)]) == 0
    capsys.readouterr()
    expected = read_session(reference)
    assert final.outcome == expected.outcome and summary["scores"] == {"coherence": 1}
    assert [t.content for t in final.turns if t.error is None] == [t.content for t in expected.turns]
    assert path.with_suffix(".md").exists()

    assert main(["sessions", "--sessions-dir", str(path.parent)]) == 0
    listing = capsys.readouterr().out
    assert re.search(rf"{final.id}\s+\S+ \S+\s+debate\s+completed", listing) and "UNREADABLE" not in listing


# ----- damaged and old session files ------------------------------------------------------------------


@pytest.mark.parametrize(("damage", "says"), [
    (lambda text: text[: len(text) // 2], "corrupt or truncated session file"),
    (lambda text: "", "corrupt or truncated session file"),
    (lambda text: "[1, 2]", "not a session object"),
    (lambda text: text.replace('"schema_version": 1', '"schema_version": 99'), "written by a newer debate-tui"),
    (lambda text: text.replace('"protocol": "debate"', '"protocol": 7'), "not a valid session file"),
])
def test_a_damaged_file_is_named_left_untouched_and_the_others_still_list(capsys, story_file, isolated_dirs,
                                                                          damage, says):
    for _ in range(2):
        assert main(["run", "--demo", "--text", str(story_file)]) == 0
    paths = sorted((isolated_dirs / "sessions").glob("*.json"))
    broken, healthy = paths
    broken.write_bytes(damage(broken.read_text()).encode())
    before = broken.read_bytes()
    capsys.readouterr()
    for command in (["resume", broken.stem], ["resume", str(broken)], ["export", broken.stem, "--format", "md"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert str(broken) in err and says in err and len(err.strip().splitlines()) == 1
    assert broken.read_bytes() == before  # never overwritten
    assert main(["sessions"]) == 0
    listing = capsys.readouterr().out
    assert f"{broken.stem}  UNREADABLE" in listing and says in listing
    assert re.search(rf"{healthy.stem}\s+\S+ \S+\s+debate\s+completed", listing)


def test_older_schema_versions_are_migrated_on_read_and_saved_in_the_new_one(monkeypatch, story_file, tmp_path,
                                                                            capsys):
    from debate_tui import store

    assert main(["run", "--demo", "--text", str(story_file), "--session", str(tmp_path / "old.json")]) == 0
    capsys.readouterr()
    old = json.loads((tmp_path / "old.json").read_text())
    old["status"], old["outcome"] = "failed", None
    old["turns"] = old["turns"][:1]
    old["options"]["iterations"] = old["options"].pop("rounds")  # as if version 1 had called it so
    (tmp_path / "old.json").write_text(json.dumps(old))

    def rename_iterations(data: dict) -> dict:
        options = dict(data["options"])
        options["rounds"] = options.pop("iterations")
        return {**data, "options": options}

    monkeypatch.setattr(store, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(store.MIGRATIONS, 1, rename_iterations)
    monkeypatch.setattr("debate_tui.domain.SCHEMA_VERSION", 2)
    session = read_session(tmp_path / "old.json")
    assert session.options["rounds"] == 4 and session.schema_version == 2
    assert json.loads((tmp_path / "old.json").read_text())["schema_version"] == 1  # reading changed nothing
    assert main(["resume", str(tmp_path / "old.json")]) == 0
    saved = json.loads((tmp_path / "old.json").read_text())
    assert saved["schema_version"] == 2 and saved["options"]["rounds"] == 4 and saved["status"] == "completed"
    monkeypatch.delitem(store.MIGRATIONS, 1)
    (tmp_path / "old.json").write_text(json.dumps(old))
    with pytest.raises(SessionFileError, match="no migration from schema 1"):
        read_session(tmp_path / "old.json")
