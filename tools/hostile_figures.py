"""The figures of docs/RELIABILITY.md's "Hostile files and environments, round two", measured again.

    python tools/hostile_figures.py zero [TREE]           # resume, export, meta, --criteria on /dev/zero
    python tools/hostile_figures.py huge [TREE] [MB]      # a session with an MB-megabyte turn in the TUI

`zero`: each command in a child process with its address space capped at 3 GB (RLIMIT_AS, as `ulimit -v`):
exit code, seconds, peak memory (the child's maxrss) and its last line on stderr.
`huge`: the TUI under Textual's Pilot: seconds from asking for the report screen (and for a replay) to its
first settled frame, and from a replay's stop to its end, with the peak memory of the process.
TREE: a checkout of debate-tui to measure (default: this one), so a commit before a fix can be compared.
Everything runs in a temporary directory; no network.
"""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
PROBE = """import resource, subprocess, sys, time
def cap():
    resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
start = time.monotonic()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, preexec_fn=cap)
print(done.returncode, round(time.monotonic() - start, 1),
      round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
      repr(done.stderr.strip().splitlines()[-1][:110]))"""


def zero(tree: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "sessions").mkdir()
        (root / "sessions" / "zero.json").symlink_to("/dev/zero")
        (root / "zero.toml").symlink_to("/dev/zero")
        (root / "story.txt").write_text("A short story to judge. It ends here.")
        env = dict(os.environ, DEBATE_TUI_SESSIONS_DIR=str(root / "sessions"),
                   DEBATE_TUI_CONFIG_DIR=str(root / "config"), DEBATE_TUI_CACHE_DIR=str(root / "cache"))
        cli = [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv.pop(1)); "
               "from debate_tui.cli import main; sys.exit(main())", str(tree)]
        commands = {"resume /dev/zero": ["resume", "/dev/zero"], "resume zero (a link)": ["resume", "zero"],
                    "export /dev/zero": ["export", "/dev/zero"], "meta /dev/zero": ["meta", "/dev/zero"],
                    "run --criteria zero.toml": ["run", "--demo", "--text", str(root / "story.txt"),
                                                 "--criteria", str(root / "zero.toml")]}
        for name, argv in commands.items():
            done = subprocess.run([sys.executable, "-c", PROBE, *cli, *argv], env=env, capture_output=True,
                                  text=True, timeout=600)
            print(f"{name}: exit, seconds, peak MB, last line: {done.stdout.strip()}", flush=True)


async def huge(tree: Path, megabytes: float) -> None:
    sys.path.insert(0, str(tree))
    from debate_tui.store import read_session, write_session
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.launch import Launch

    with tempfile.TemporaryDirectory() as scratch:
        os.environ.update(DEBATE_TUI_SESSIONS_DIR=f"{scratch}/sessions", DEBATE_TUI_CONFIG_DIR=f"{scratch}/config",
                          DEBATE_TUI_CACHE_DIR=f"{scratch}/cache")
        path = Path(scratch) / "huge.json"
        session = read_session(sorted((tree / "debate_tui" / "data" / "sessions").glob("*.json"))[0])
        line = "The judge wrote at length. " * 40 + "\n"
        session.turns[0].content = line * int(megabytes * 1_000_000 // len(line))
        write_session(path, session)
        for how in ("report", "replay"):
            start = time.monotonic()
            session = read_session(path)
            read = time.monotonic() - start
            app = DebateTUI(Launch())
            async with app.run_test(size=(120, 36)) as pilot:
                await pilot.pause(1.0)  # the setup form mounted (closing while it mounts is issue 30's Select crash)
                start = time.monotonic()
                app.open_report(session) if how == "report" else app.replay(session)
                wanted = "ReportScreen" if how == "report" else "DebateScreen"
                while type(app.screen).__name__ != wanted:
                    await pilot.pause(0.01)
                await pilot.pause()
                first = time.monotonic() - start
                said = f"{how}: read {read:.1f} s, first screen {first:.1f} s"
                if how == "replay":
                    await pilot.press("a")  # play on, then stop within the long turn
                    await pilot.pause(1.0)
                    stop = time.monotonic()
                    app.screen.control.stop("stopped by the user")
                    while not app.screen.finished and time.monotonic() - stop < 120:
                        await pilot.pause(0.01)
                    said += f", stop took {time.monotonic() - stop:.2f} s"
                await pilot.pause(0.5)
            print(f"{said}, peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB", flush=True)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "zero"
    tree = Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else HERE
    if what == "zero":
        zero(tree)
    else:
        asyncio.run(huge(tree, float(sys.argv[3]) if len(sys.argv) > 3 else 100.0))
