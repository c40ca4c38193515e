"""#46 "Never block the screen": a key pressed while the first real call starts, to the frame that answers it.

With a real provider configured, the first call imports litellm (seconds of CPU) and opens the first
connection: on the loop, that froze the screen (F1 pressed 3 s after ctrl+r was answered 8.8 s later).
Each try launches debate-tui afresh on a 120x36 pty against the fake server (0.5 s latency, a chunk
every 50 ms), waits for the whole setup form, types ctrl+r and at once F1, and times F1 to the first
output holding the help's title. The baseline, interleaved with it: the same launch and F1 with no
run started (the idle form). p95 is the nearest-rank percentile over the tries.

    python -m benchmarks.first_call                 this checkout
    python -m benchmarks.first_call --code DIR      another checkout's code (e.g. main, for "before")
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from benchmarks.common import ROOT, Row, Section, fake_server, median, percentile, quiet_env, work_dir
from benchmarks.startup import WHOLE_FORM_MARKER, debate_tui
from benchmarks.terminal import PtyRun

TRIES = 7
LATENCY_S, CHUNK_DELAY_S = 0.5, 0.05
CTRL_R, F1 = b"\x12", b"\x1bOP"
HELP_MARKER = b"Keys on the"
"""The help's title ("Keys on the debate screen", or the setup's when the run has not begun yet)."""
GOAL_MS = 150


def key_to_frame(argv: list[str], env: dict[str, str], start_run: bool) -> float:
    """Seconds from F1 to the help's frame, F1 typed right after ctrl+r (`start_run`) or on the idle form."""
    run = PtyRun(argv, env, cwd=ROOT, markers=[WHOLE_FORM_MARKER, HELP_MARKER])
    try:
        if run.wait_for(WHOLE_FORM_MARKER, timeout=60) is None:
            raise RuntimeError(f"no setup form within 60 s:\n{bytes(run.output[-2000:]).decode(errors='replace')}")
        time.sleep(0.3)  # a person reads the form before starting: the frame after it is drawn, not mid-mount
        if start_run:
            run.send(CTRL_R)
        pressed = time.perf_counter() - run.started
        run.send(F1)
        shown = run.wait_for(HELP_MARKER, timeout=60)
    finally:
        run.close()
    if shown is None:
        raise RuntimeError("F1 never showed the help within 60 s")
    return shown - pressed


def measure(tries: int = TRIES, code: Path = ROOT) -> Section:
    with work_dir("first-call") as work, fake_server(latency=LATENCY_S, chunk_delay=CHUNK_DELAY_S) as url:
        env = quiet_env(work, PYTHONPATH=str(code), OPENAI_API_KEY="sk-fake")
        argv = [debate_tui(), "--model", "openai/fake-model", "--api-base", url,
                "--text", str(ROOT / "examples" / "story.txt")]
        key_to_frame(argv, env, start_run=False)  # warm the file cache
        during, idle = [], []
        for index in range(tries):
            order = (True, False) if index % 2 == 0 else (False, True)
            for start_run in order:
                (during if start_run else idle).append(key_to_frame(argv, env, start_run) * 1000)
    p95, p50 = percentile(during, 0.95), median(during)
    row = Row("never block", "key (F1) to frame right after ctrl+r starts the first real call, p50 / p95",
              "F1 on the idle setup form, same launch", None, f"p95 <= {GOAL_MS} ms", p95 <= GOAL_MS,
              f"{tries} fresh launches each; idle p50 / p95 {median(idle):.0f} / {percentile(idle, 0.95):.0f} ms; "
              f"fake server {LATENCY_S:g} s latency, a chunk every {CHUNK_DELAY_S * 1000:.0f} ms",
              value=f"{p50:.0f} / {p95:.0f} ms")
    return Section([row])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.first_call", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose debate_tui is launched")
    parser.add_argument("--tries", type=int, default=TRIES)
    args = parser.parse_args(argv)
    section = measure(args.tries, args.code.resolve())
    for row in section.rows:
        print(" | ".join(row.cells()))
    return 0 if all(row.ok for row in section.rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
