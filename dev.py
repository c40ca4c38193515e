#!/usr/bin/env python3
"""One entry point for set-up and daily work, needing only Python 3.11+.

    python3 dev.py app [ARGS]   set up .venv if needed, then run debate-tui
    python3 dev.py test [ARGS]  set up .venv if needed, then run the test suite
    python3 dev.py bench        set up .venv if needed, then run the benchmarks
    python3 dev.py test-local-model [ARGS]
                                the opt-in suite against a real small model: builds llama.cpp's
                                server and the model into the user's cache if missing (once,
                                5-15 minutes), serves it on a free 127.0.0.1 port, runs
                                tests/local_model, and stops the server whatever happens

The virtual environment is (re)installed only when pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import importlib.util
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


def test_local_model(rest: list[str]) -> int:
    """Serve the real local model for tests/local_model; an already running server can be named instead.

    DEBATE_TUI_LOCAL_MODEL_API_BASE set beforehand skips the build and the server (someone serves it).
    """
    spec = importlib.util.spec_from_file_location("local_model_serve", ROOT / "tests" / "local_model" / "serve.py")
    serve = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(serve)
    pytest = [str(BIN / "python"), "-m", "pytest", "tests/local_model", "-p", "no:cacheprovider", *rest]
    if os.environ.get("DEBATE_TUI_LOCAL_MODEL_API_BASE"):
        return subprocess.call(pytest, cwd=ROOT)
    home = serve.ensure_installed()
    log = home / "server.log"
    print(f"serving {serve.model_file(home).name} with llama.cpp (log: {log}) ...", file=sys.stderr)
    try:
        with serve.serving(home, log) as base_url:
            env = {**os.environ, "DEBATE_TUI_LOCAL_MODEL_API_BASE": base_url,
                   "DEBATE_TUI_LOCAL_MODEL": f"openai/{serve.MODEL_ALIAS}"}
            return subprocess.call(pytest, cwd=ROOT, env=env)
    except KeyboardInterrupt:
        return 130


def main(argv: list[str]) -> int:
    command, rest = (argv[0], argv[1:]) if argv else ("app", [])
    ensure_venv()
    if command == "app":
        return subprocess.call([str(BIN / "debate-tui"), *rest])
    if command == "test":
        return subprocess.call([str(BIN / "python"), "-m", "pytest", *rest], cwd=ROOT)
    if command == "bench":
        return subprocess.call([str(BIN / "python"), "-m", "benchmarks", *rest], cwd=ROOT)
    if command == "test-local-model":
        return test_local_model(rest)
    sys.exit(f"unknown command {command!r}: use app, test, bench or test-local-model")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
