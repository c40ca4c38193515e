"""What every benchmark shares: the result row, the fake server in its own process, child runs.

Absolute times on a shared 2-core machine are noise, so every figure here is
a ratio against a baseline measured in the same run, side by side, and most
measurements run in child processes: each then starts from a clean
interpreter (no module, garbage-collector setting or cache left behind by the
previous one), and the fake server's CPU never counts against the client.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
KNOWN_MODEL = "openai/gpt-4o-mini"
"""A model litellm's price table knows, as a real run would use: for an unknown name litellm spends
extra CPU per call looking for a price, and the runner skips its context-window check."""


@dataclass
class Row:
    """One line of the table: a measured value against its baseline, and the issue's target."""

    target: str
    """The issue's target number and name, e.g. "1 start-up"."""
    measure: str
    baseline: str
    ratio: float | None
    """measured / baseline; None for a row that is a count or a latency, not a ratio."""
    limit: str
    """The target as written in the issue, e.g. "<= 1.5x"."""
    ok: bool
    detail: str = ""
    """Absolute figures behind the ratio, for the reader (noise on a shared machine)."""
    value: str = ""
    """What to print in the ratio column when `ratio` is None."""

    def cells(self) -> list[str]:
        shown = f"{self.ratio:.2f}x" if self.ratio is not None else self.value
        return [self.target, self.measure, self.baseline, shown, self.limit, "yes" if self.ok else "NO", self.detail]


@dataclass
class Section:
    """A benchmark's rows plus any extra table it wants printed under the main one."""

    rows: list[Row]
    notes: list[str] = field(default_factory=list)


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile: an observed value, never an interpolation between two."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(share * len(ordered) + 0.5)))
    return ordered[rank - 1]


def quiet_env(work: Path, **extra: str) -> dict[str, str]:
    """An environment whose config, state, sessions and cache live in `work`, so no run reads or leaves user state
    (a remembered setup changed the form a benchmark waits for)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATE_TUI_")}
    # An installed app has its bytecode cached; where the environment forbids writing it (as on the
    # machines these figures come from), every launch would pay for compiling the app's sources.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update({
        "DEBATE_TUI_CONFIG_DIR": str(work / "config"), "DEBATE_TUI_SESSIONS_DIR": str(work / "sessions"),
        "DEBATE_TUI_CACHE_DIR": str(work / "cache"), "DEBATE_TUI_STATE_DIR": str(work / "state"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_LOG": "ERROR", "OPENAI_API_KEY": "sk-fake-benchmark", "PYTHONPATH": str(ROOT),
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
    })
    env.update(extra)
    return env


_removed_at_exit: list[Path] = []


@atexit.register
def _remove_work_dirs() -> None:
    for path in _removed_at_exit:
        shutil.rmtree(path, ignore_errors=True)


@contextmanager
def work_dir(prefix: str) -> Iterator[Path]:
    """A new directory for one measurement, removed when the benchmark process ends rather than when the block does.

    Why later. On ext4 without a journal (this machine's disk) the allocator passes over every inode deleted in
    the last minute or so before it reuses one (`recently_deleted` in the kernel's ialloc.c): a file created
    right after thousands were deleted cost up to 1,000 us of CPU instead of 45-80. Removed at once, one measurement's
    sessions made the next one's session files slow (the batch rows, which create one file an item, came right
    after the `batch` section's 2,000-file cleanup).
    """
    path = Path(tempfile.mkdtemp(prefix=f"debate-bench-{prefix}-"))
    _removed_at_exit.append(path)
    yield path


@contextmanager
def fake_server(*, latency: float = 0.0, chunk_delay: float = 0.0, reply: str | None = None,
                rules: list[dict] | None = None, work: Path | None = None) -> Iterator[str]:
    """The fake OpenAI-compatible server in a child process; yields its base URL and stops it after."""
    argv = [PYTHON, "-m", "debate_tui.testing.fake_server",
            "--latency", str(latency), "--chunk-delay", str(chunk_delay)]
    if reply is not None:
        argv += ["--reply", reply]
    if rules is not None:
        assert work is not None, "rules are passed as a file in the work directory"
        path = work / "rules.json"
        path.write_text(json.dumps(rules))
        argv += ["--rules", str(path)]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        if not url.startswith("http"):
            raise RuntimeError(f"the fake server did not start (printed {url!r})")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


def run_child(module: str, args: Sequence[str], env: dict[str, str], timeout: float = 300) -> dict:
    """Run `python -m benchmarks.<module> ARGS`; its last stdout line is a JSON result."""
    done = subprocess.run([PYTHON, "-m", f"benchmarks.{module}", *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"benchmarks.{module} {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def emit(result: dict) -> None:
    """A child's answer to `run_child`: one JSON line on stdout."""
    print(json.dumps(result), flush=True)
