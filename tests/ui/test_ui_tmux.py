"""The real binary in tmux, driven as a person would: does `p` show within 100 ms while three panes stream?

Opt-in (it takes about a minute and measures the machine as much as the app):

    DEBATE_TUI_TMUX_BENCH=1 .venv/bin/python -m pytest tests/ui/test_ui_tmux.py -s

Each sample checks the panes are streaming (two captures 50 ms apart differ),
sends `p` with `tmux send-keys`, and polls `tmux capture-pane` (3 ms apart, so
the poller does not starve the app) until the status line says "paused"; then
`p` again until it does not. The app is restarted whenever its debate ends,
until 20 samples were taken while streaming. An idle run (step mode, nothing
streaming) gives the floor: tmux's own round trip.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.skipif(
    not os.environ.get("DEBATE_TUI_TMUX_BENCH") or shutil.which("tmux") is None,
    reason="opt-in benchmark: set DEBATE_TUI_TMUX_BENCH=1 (needs tmux)",
)

SESSION = "debate-tui-latency"
SAMPLES = 20


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def screen() -> str:
    return tmux("capture-pane", "-p", "-t", SESSION)


def status_line(text: str) -> str:
    return next((line for line in text.splitlines() if " calls " in line and "round" in line), "")


def wait_for(predicate, timeout: float = 10.0) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        if predicate(screen()):
            return time.perf_counter() - start
        time.sleep(0.003)
    raise TimeoutError(screen())


def launch(tmp_path: Path, *extra: str) -> None:
    text = tmp_path / "story.txt"
    text.write_text("Tom wanted to learn to swim. He went to the pool every morning. He went to the pool every "
                    "morning. At first he was afraid of the water. After a month he could swim across the pool.")
    env = f"DEBATE_TUI_CONFIG_DIR={tmp_path}/config DEBATE_TUI_SESSIONS_DIR={tmp_path}/sessions"
    command = (f"cd {REPO} && {env} .venv/bin/debate-tui --demo --protocol chateval --strategy simultaneous-talk "
               f"--turns 10 --text {text} --autostart {' '.join(extra)}; sleep 60")
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    for _ in range(20):  # killing the last session stops the server; a new one may not be ready at once
        started = subprocess.run(["tmux", "new-session", "-d", "-s", SESSION, "-x", "160", "-y", "45", command],
                                 capture_output=True, text=True)
        if started.returncode == 0:
            return
        time.sleep(0.1)
    raise RuntimeError(f"tmux would not start: {started.stderr}")


def measure(tmp_path: Path, *, streaming: bool) -> tuple[list[float], list[float]]:
    pause: list[float] = []
    resume: list[float] = []
    launch(tmp_path, *([] if streaming else ["--step"]))
    wait_for(lambda t: ("speaking" if streaming else "step") in status_line(t), timeout=30)
    try:
        while len(pause) < SAMPLES:
            if "finished" in status_line(screen()):
                launch(tmp_path)
                wait_for(lambda t: "speaking" in status_line(t), timeout=30)
            if streaming:
                before = screen()
                time.sleep(0.05)
                if screen() == before or "speaking" not in status_line(before):
                    time.sleep(0.2)
                    continue
            sent = time.perf_counter()
            tmux("send-keys", "-t", SESSION, "p")
            wait_for(lambda t: "paused" in status_line(t))
            pause.append(time.perf_counter() - sent)
            time.sleep(0.05)
            sent = time.perf_counter()
            tmux("send-keys", "-t", SESSION, "p")
            wait_for(lambda t: "paused" not in status_line(t))
            resume.append(time.perf_counter() - sent)
            time.sleep(0.3)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    return pause, resume


def summary(name: str, samples: list[float]) -> str:
    ms = sorted(1000 * s for s in samples)
    return (f"{name}: n={len(ms)} p50={statistics.median(ms):.0f} ms p95={ms[int(0.95 * len(ms)) - 1]:.0f} ms "
            f"max={ms[-1]:.0f} ms")


def test_pause_key_answers_within_100_ms_while_three_panes_stream(tmp_path: Path):
    idle_pause, _ = measure(tmp_path, streaming=False)
    pause, resume = measure(tmp_path, streaming=True)
    print(f"\nload average: {Path('/proc/loadavg').read_text().strip()}")
    print(summary("idle (tmux round trip)", idle_pause))
    print(summary("streaming, p -> paused", pause))
    print(summary("streaming, p -> resumed", resume))
    assert statistics.median(pause) < 0.100
