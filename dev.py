#!/usr/bin/env python3
"""One entry point for set-up and daily work, needing only Python 3.11+.

    python3 dev.py app [ARGS]   set up .venv if needed, then run debate-tui
    python3 dev.py test [ARGS]  set up .venv if needed, then run the test suite
                                (the whole suite in parallel, pytest-xdist; named files serially)
    python3 dev.py lint         ruff, mypy and import-linter, as CI runs them
    python3 dev.py bench        set up .venv if needed, then run the benchmarks
    python3 dev.py lock         write requirements.lock from .venv (after an upgrade that passed)
    python3 dev.py docs [serve] the documentation site from docs/: a strict build into site/ (as CI
                                runs it), or served at http://127.0.0.1:8000 while you edit; installs
                                the docs group (mkdocs-material) into .venv the first time
    python3 dev.py test-local-model [ARGS]
                                the opt-in suite against a real small model: builds llama.cpp's
                                server and the model into the user's cache if missing (once,
                                5-15 minutes), serves it on a free 127.0.0.1 port, runs
                                tests/local_model, and stops the server whatever happens
    python3 dev.py test-browser [ARGS]
                                the opt-in suite in headless Chromium (tests/browser): installs
                                Chromium from the system's packages if missing (apt-get, as root),
                                opens an HTML report and the served app; screenshots go to
                                DEBATE_TUI_SCREENSHOTS when set

The virtual environment gets the project with its `plot` and `serve` extras and
the `test` and `lint` dependency groups, at exactly the versions in
requirements.lock (the ones the suite last passed with), and is reinstalled only
when pyproject.toml or the lock changes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".installed-from"
LOCK = ROOT / "requirements.lock"
PIP = [str(BIN / "python"), "-m", "pip", "--disable-pip-version-check"]


def ensure_venv() -> None:
    """Create the venv and install the project with its extras, pinned by the lock, when stale."""
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py runs on any python3, before the venv exists
        sys.exit("debate-tui needs Python 3.11 or newer")
    if STAMP.exists() and STAMP.read_text() == _fingerprint():
        return
    if not (BIN / "python").exists():
        print("creating .venv ...", file=sys.stderr)
        venv.create(VENV, with_pip=True)
    print(f"installing debate-tui and its dependencies (pinned by {LOCK.name}) into .venv"
          " (a few minutes the first time) ...", file=sys.stderr)
    _install_with_progress([*PIP, "install", "-c", str(LOCK), "-e", f"{ROOT}[plot,serve]", *group("test", "lint")])
    STAMP.write_text(_fingerprint())


def _install_with_progress(command: list[str]) -> None:
    """pip's run with one line per package it takes (counted against the lock's pins, with the elapsed time):
    minutes of silence read as a hang, and pip's own output is hundreds of lines. Everything pip said is
    shown when it fails."""
    import time

    pins = sum(1 for line in LOCK.read_text().splitlines() if "==" in line)
    started, taken, said = time.monotonic(), 0, []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as pip:
        for line in pip.stdout or ():
            said.append(line)
            if line.startswith(("Collecting ", "Obtaining ")):
                taken += 1
                name = line.split()[1]
                print(f"  [{taken}/{pins + 1}] {name}  ({time.monotonic() - started:.0f} s)", file=sys.stderr)
            elif line.startswith(("Installing collected packages", "Building editable", "Successfully installed")):
                print(f"  {line.split(':')[0].strip()}  ({time.monotonic() - started:.0f} s)", file=sys.stderr)
    if pip.returncode != 0:
        sys.stderr.write("".join(said[-60:]))
        sys.exit(f"pip failed (exit {pip.returncode}): its last lines are above")


def group(*names: str) -> list[str]:
    """The requirements of pyproject's [dependency-groups] (PEP 735), includes resolved: pip before 25.1 has no
    --group option, so they are passed as plain requirements."""
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text())["dependency-groups"]
    found: list[str] = []
    for name in names:
        for item in groups[name]:
            found += group(item["include-group"]) if isinstance(item, dict) else [item]
    return found


def _fingerprint() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + LOCK.read_bytes()).hexdigest()


def lock() -> int:
    """Pin every installed distribution but the project itself (pip is the venv's own)."""
    frozen = subprocess.run([*PIP, "freeze", "--all", "--exclude-editable"], check=True,
                            capture_output=True, text=True).stdout.splitlines()
    pins = sorted((line for line in frozen if line.split("==")[0].lower() not in {"pip", "debate-tui"}),
                  key=str.lower)
    header = ["# The versions the suite passed with; dev.py installs them (pip -c). Upgrade: see docs/development.md.",
              f"# Python {sys.version_info.major}.{sys.version_info.minor}"]
    LOCK.write_text("\n".join([*header, *pins]) + "\n")
    STAMP.write_text(_fingerprint())  # .venv is what the lock now says
    print(f"{LOCK.name}: {len(pins)} pins", file=sys.stderr)
    return 0


def lint() -> int:
    """Every gate, even after one fails, so a run shows all findings; nonzero when any failed."""
    gates = [[str(BIN / "ruff"), "check", "."], [str(BIN / "mypy")]]
    if "importlinter" in tomllib.loads((ROOT / "pyproject.toml").read_text()).get("tool", {}):
        gates.append([str(BIN / "lint-imports")])
    failed = [gate[0] for gate in gates if subprocess.call(gate, cwd=ROOT) != 0]
    if failed:
        print(f"lint failed: {', '.join(Path(name).name for name in failed)}", file=sys.stderr)
    return 1 if failed else 0


def test(rest: list[str]) -> int:
    """Without a file or folder named, the whole suite in parallel, then the `serial` tests alone, and one
    summary of both phases at the end.

    Tests marked `serial` assert wall time or kill a process on a deadline: beside
    a busy worker they measure the neighbour. `-n 0` runs everything serially.
    """
    pytest = [str(BIN / "python"), "-m", "pytest"]
    named = any(not arg.startswith("-") and (ROOT / arg.split("::")[0]).exists() for arg in rest)
    if named or any(arg.startswith(("-n", "--numprocesses")) for arg in rest):
        return subprocess.call([*pytest, *rest], cwd=ROOT)
    import tempfile
    import time

    with tempfile.TemporaryDirectory(prefix="debate-tui-test-") as scratch:
        phases = [("parallel", ["-n", "auto", "-m", "not serial"]), ("serial", ["-m", "serial"])]
        results = []
        for name, args in phases:
            report = Path(scratch) / f"{name}.xml"
            started = time.monotonic()
            code = subprocess.call([*pytest, *args, f"--junitxml={report}", *rest], cwd=ROOT)
            results.append((name, code, time.monotonic() - started, _outcomes(report)))
            if code not in (0, 5) and "-x" in rest:  # 5: nothing collected
                break
    return _summarize(results)


def _outcomes(report: Path) -> dict[str, list[str]]:
    """passed / failed / skipped test ids from a phase's JUnit XML (empty when pytest wrote none)."""
    import xml.etree.ElementTree as ElementTree

    found: dict[str, list[str]] = {"passed": [], "failed": [], "skipped": []}
    if not report.exists():
        return found
    for case in ElementTree.parse(report).iter("testcase"):
        test_id = _node_id(case.get("classname", ""), case.get("name", ""))
        kinds = {child.tag for child in case}
        outcome = "failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds else "passed"
        found[outcome].append(test_id)
    return found


def _node_id(classname: str, name: str) -> str:
    """pytest's own id (tests/a/test_b.py::TestC::test_d) from JUnit's dotted class name, to paste back."""
    parts = [part for part in classname.split(".") if part]
    for cut in range(len(parts), 0, -1):
        module = Path(*parts[:cut]).with_suffix(".py")
        if (ROOT / module).is_file():
            return "::".join([module.as_posix(), *parts[cut:], name])
    return f"{classname}::{name}"


def _summarize(results: list[tuple[str, int, float, dict[str, list[str]]]]) -> int:
    """One closing summary of every phase, naming what failed (the serial phase's own last line would
    otherwise be all a reader sees, far below the parallel phase's failures)."""
    print("\n" + "=" * 30 + " both phases " + "=" * 30)
    totals = {"passed": 0, "failed": 0, "skipped": 0}
    worst = 0
    for name, code, seconds, found in results:
        counts = {kind: len(ids) for kind, ids in found.items()}
        for kind, count in counts.items():
            totals[kind] += count
        failed = counts["failed"] or (code not in (0, 5))
        print(f"{name} phase: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
              f" in {seconds:.0f} s" + (f" (pytest exit {code})" if failed else ""))
        for test_id in found["failed"]:
            print(f"  FAILED {test_id}")
        worst = max(worst, 0 if code == 5 else code)
    print(f"tests: {totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped")
    return worst


def docs(rest: list[str]) -> int:
    """Strict, so a broken link, a missing page or an unlisted one fails the build (CI runs this)."""
    python = str(BIN / "python")
    if subprocess.call([python, "-c", "import material, mkdocs"], stderr=subprocess.DEVNULL) != 0:
        print("installing the docs group (mkdocs-material) into .venv ...", file=sys.stderr)
        subprocess.run([*PIP, "install", "-q", "-c", str(LOCK), *group("docs")], check=True)
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    args = rest if rest[:1] == ["serve"] else ["build", "--strict", *rest]
    return subprocess.call([python, "-m", "mkdocs", *args], cwd=ROOT, env=env)


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


def chromium() -> str:
    """The system's Chromium, installed from its packages (Debian: `chromium`) when missing."""
    import shutil

    found = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    if found:
        return found
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        sys.exit("test-browser needs Chromium: install it with your system's packages (e.g. apt-get install chromium)")
    print("installing chromium (apt-get) ...", file=sys.stderr)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.call(["apt-get", "install", "-y", "-q", "chromium"], env=env) != 0:
        subprocess.run(["apt-get", "update", "-q"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], check=True, env=env)
    return shutil.which("chromium") or sys.exit("apt-get installed chromium, but it is not on PATH")


def test_browser(rest: list[str]) -> int:
    """tests/browser against the system's Chromium; the suite starts and stops its own browser and server."""
    env = {**os.environ, "DEBATE_TUI_BROWSER_TESTS": "1", "DEBATE_TUI_CHROMIUM": chromium()}
    return subprocess.call([str(BIN / "python"), "-m", "pytest", "tests/browser", "-p", "no:cacheprovider", *rest],
                           cwd=ROOT, env=env)


def main(argv: list[str]) -> int:
    command, rest = (argv[0], argv[1:]) if argv else ("app", [])
    if command not in ("app", "test", "lint", "bench", "lock", "docs", "test-local-model", "test-ray", "test-browser"):
        sys.exit(f"unknown command {command!r}: use app, test, lint, bench, lock, docs, test-local-model, test-ray "
                 "or test-browser")
    if command == "lock":  # pins .venv as it is: installing from the old lock first would undo an upgrade
        return lock()
    ensure_venv()
    if command == "app":
        return subprocess.call([str(BIN / "debate-tui"), *rest])
    if command == "test":
        return test(rest)
    if command == "lint":
        return lint()
    if command == "docs":
        return docs(rest)
    if command == "test-local-model":
        return test_local_model(rest)
    if command == "test-browser":
        return test_browser(rest)
    if command == "test-ray":  # the suite starts (and stops) its own local Ray head; Ray itself is an extra
        if subprocess.call([str(BIN / "python"), "-c", "import ray"], stderr=subprocess.DEVNULL) != 0:
            sys.exit("test-ray needs Ray in .venv: .venv/bin/pip install -e '.[ray]'")
        return subprocess.call([str(BIN / "python"), "-m", "pytest", "tests/ray_cluster", "-p", "no:cacheprovider",
                                *rest], cwd=ROOT, env={**os.environ, "DEBATE_TUI_RAY_TESTS": "1"})
    return subprocess.call([str(BIN / "python"), "-m", "benchmarks", *rest], cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
