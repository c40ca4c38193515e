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
from tests.test_debate import CRITIC

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
