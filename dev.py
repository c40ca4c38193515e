#!/usr/bin/env python3
"""One entry point for set-up and daily work, needing only Python 3.11+.

    python3 dev.py app [ARGS]   set up .venv if needed, then run debate-tui
    python3 dev.py test [ARGS]  set up .venv if needed, then run the test suite
    python3 dev.py bench        set up .venv if needed, then run the benchmarks

The virtual environment is (re)installed only when pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".installed-from"


def ensure_venv() -> None:
    """Create the venv and install the project with its test extras when stale."""
    if sys.version_info < (3, 11):
        sys.exit("debate-tui needs Python 3.11 or newer")
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    if not (BIN / "python").exists():
        print("creating .venv ...", file=sys.stderr)
        venv.create(VENV, with_pip=True)
    print("installing debate-tui and its dependencies into .venv ...", file=sys.stderr)
    pip = [str(BIN / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "-e", f"{ROOT}[test]"], check=True)
    STAMP.write_text(wanted)


def main(argv: list[str]) -> int:
    command, rest = (argv[0], argv[1:]) if argv else ("app", [])
    ensure_venv()
    if command == "app":
        return subprocess.call([str(BIN / "debate-tui"), *rest])
    if command == "test":
        return subprocess.call([str(BIN / "python"), "-m", "pytest", *rest], cwd=ROOT)
    if command == "bench":
        return subprocess.call([str(BIN / "python"), "-m", "benchmarks", *rest], cwd=ROOT)
    sys.exit(f"unknown command {command!r}: use app, test or bench")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
