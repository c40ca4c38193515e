"""Ctrl+C on `run`: the real command, stopped mid-call, gives the prompt back at once, its session saved.

The process used to print its summary at once and then spend 4-5 s in the interpreter's last garbage
collections over litellm's objects (cli.leave_quickly). What this test holds is what it does, not how fast this
machine is today: the call in flight is dropped (the server sees the hang-up) rather than waited for (a minute of
stream or of silence here), and the objects are frozen before the interpreter's last collections (the count
`gc.get_freeze_count()` gives at exit), so those collections do not walk them. Seconds are a benchmark's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from debate_tui.testing.fake_server import FakeLLMServer
from tests.helpers import STORY

SAYS_WHAT_IS_FROZEN = (
    "import atexit, gc, runpy, sys\n"
    "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count(), file=sys.stderr))\n"
    "sys.argv[0] = 'debate-tui'\n"
    "runpy.run_module('debate_tui', run_name='__main__')\n"
)
"""`python -m debate_tui`, saying on stderr, after the program's last line, how many objects the interpreter's last
collections will pass over."""
UNWAITED_S = 60.0
"""Well short of what waiting would take (the stream's 140 chunks a second apart, or the 120 s timeout of the
call that never answers), and long enough for a machine whose cores are busy with other work."""


@pytest.mark.serial
@pytest.mark.parametrize("fault", [None, "hang"])
def test_ctrl_c_on_run_exits_within_a_second_with_the_session_saved_as_interrupted(tmp_path, isolated_dirs,
                                                                                    fault):
    story = tmp_path / "story.txt"
    story.write_text(STORY)
    with FakeLLMServer(chunk_delay=1.0, chunk_size=4, hang_seconds=600) as server:  # a slow stream, or silence
        server.add_rule("The story is clear and ordered in every part. " * 12 + "\nScore: 4", fault=fault)
        run = subprocess.Popen(
            [sys.executable, "-c", SAYS_WHAT_IS_FROZEN, "run", "--text", str(story), "--protocol", "single",
             "--model", "openai/fake-model", "--api-base", server.base_url, "--timeout", "120"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            deadline = time.monotonic() + 600  # litellm's import takes seconds, a minute on a busy machine
            while server.calls == 0 and time.monotonic() < deadline and run.poll() is None:
                time.sleep(0.02)
            assert server.calls == 1, "the run never called the model"
            time.sleep(0.3)  # mid-call
            pressed = time.monotonic()
            run.send_signal(signal.SIGINT)
            out, err = run.communicate(timeout=3 * UNWAITED_S)
            took = time.monotonic() - pressed
            while not server.hangups and time.monotonic() < deadline:  # the server's thread may not have run yet
                time.sleep(0.02)
        finally:
            if run.poll() is None:
                run.kill()
        assert server.hangups  # the call in flight was dropped, not left to the server
    summary = json.loads(out.splitlines()[0])
    assert run.returncode == 4 and summary["status"] == "cancelled", err
    saved = json.loads(Path(summary["session_path"]).read_text())
    assert saved["status"] == "cancelled" and saved["error"] == "interrupted (Ctrl+C)"
    assert took < UNWAITED_S, f"Ctrl+C took {took:.2f} s: the call in flight was waited for"
    frozen = int(err.rsplit("frozen at exit: ", 1)[1].split()[0])
    assert frozen > 100_000, "the last collections walk every object the imports made"
