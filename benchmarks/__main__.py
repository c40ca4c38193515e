"""Run every benchmark and print one table of ratios: `python -m benchmarks` (or `python3 dev.py bench`).

    python -m benchmarks                   all five targets (docs/PERFORMANCE.md says how long its last run took)
    python -m benchmarks --only batch      one or more of: startup first_call streaming batch batch_cores tokens
                                           sessions hostile_replies keys report_open
    python -m benchmarks --write docs/PERFORMANCE.md
                                           also put the table (and the command) into that file,
                                           between its BENCH-TABLE markers

Each row is a ratio against a baseline measured in the same run, side by
side: on a shared 2-core machine absolute times are noise, ratios are not.
The exit code is 0 when every target is met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.common import Row, Section

BENCHMARKS = ("startup", "first_call", "streaming", "batch", "batch_cores", "tokens", "sessions", "hostile_replies",
              "keys", "report_open")
HEADER = ["target", "measured", "baseline (same run)", "ratio / value", "target", "met", "detail"]
START, END = "<!-- BENCH-TABLE:START -->", "<!-- BENCH-TABLE:END -->"


def markdown(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(cell.replace("|", "/") for cell in row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def report(sections: dict[str, Section], command: str, seconds: float) -> str:
    rows = [row for section in sections.values() for row in section.rows]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    parts = [f"Produced by `{command}` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC in {seconds / 60:.1f} min "
             f"({platform.python_version()}, {os.cpu_count()} cores, load average {load:.1f} at the end).", "",
             markdown(rows)]
    for name, section in sections.items():
        if section.notes:
            parts += ["", f"{name}:", "", *section.notes]
    return "\n".join(parts)


def write(path: Path, text: str) -> None:
    """Replace what is between the markers; append the block when the file has none yet."""
    block = f"{START}\n{text}\n{END}"
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if START in old and END in old:
        new = re.sub(re.escape(START) + r".*?" + re.escape(END), lambda _: block, old, flags=re.S)
    else:
        new = (old.rstrip() + "\n\n" if old else "") + block + "\n"
    path.write_text(new, encoding="utf-8")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, default=list(BENCHMARKS))
    parser.add_argument("--write", type=Path, metavar="FILE.md", help="also write the table into FILE.md")
    args = parser.parse_args(argv)
    command = "python -m benchmarks" + (f" --only {' '.join(args.only)}" if args.only != list(BENCHMARKS) else "")
    started = time.perf_counter()
    sections: dict[str, Section] = {}
    for name in args.only:
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        begun = time.perf_counter()
        try:
            sections[name] = importlib.import_module(f"benchmarks.{name}").measure()
        except Exception as exc:  # one broken benchmark must not cost the others' figures
            sections[name] = Section([Row(name, "the benchmark failed", "", None, "", False,
                                          f"{type(exc).__name__}: {str(exc)[-300:]}", value="error")])
        print(f"[bench] {name} done in {time.perf_counter() - begun:.0f} s", file=sys.stderr, flush=True)
    text = report(sections, command, time.perf_counter() - started)
    print(text)
    if args.write:
        write(args.write, text)
    return 0 if all(row.ok for section in sections.values() for row in section.rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
