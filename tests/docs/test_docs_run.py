"""Every fenced block of README.md and docs/ is run, compared, parsed, or marked with why not.

Commands run as a reader would type them, in a fresh working folder per page (with
`examples/`, `docs/`, `tools/`, `dev.py` and `.venv` beside them, as in a clone) and a temporary HOME,
so the config, data, cache and state folders start empty. The blocks of a page run in their
order: a later block may read what an earlier one wrote (dataset, then batch, then meta).
Each block is its own test id, so pytest-xdist spreads the pages; a worker that gets a later
block of a page runs the earlier ones first, once. The rules and markers: tests/docs/doc_blocks.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.docs.doc_blocks import Block, check_data, collect, compare
from tests.helpers.sessions import run

BLOCKS = collect(REPO)
TIMEOUT_S = 120
LINKED = ("examples", "docs", "dev.py", "tools")
"""What a block may name by a relative path, linked into its page's folder."""


@dataclass
class Ran:
    returncode: int
    stdout: str
    output: str
    """stdout, stderr, then the reports the run wrote."""
    seconds: float


def _env(work: Path) -> dict[str, str]:
    """The user's environment without this project's settings or any provider key; an empty home."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("DEBATE_TUI_", "PYTEST_", "VIRTUAL_ENV")) and not key.endswith("_API_KEY")}
    home = work / "home"
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
               XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local/state"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               LITELLM_LOCAL_MODEL_COST_MAP="True", NO_COLOR="1", COLUMNS="200")
    return env


class Page:
    """One page's folder and what its commands printed, run in the page's order."""

    def __init__(self, work: Path) -> None:
        self.work = work
        (work / "home").mkdir(parents=True)
        for name in LINKED:
            (work / name).symlink_to(REPO / name)
        (work / ".venv").symlink_to(Path(sys.prefix))
        self.env = _env(work)
        self.runs: dict[int, Ran] = {}

    def run(self, script: str, background: bool = False) -> Ran:
        started = time.perf_counter()
        server = None
        if background:  # the first line serves; the rest talks to the port it printed
            first, _, script = script.partition("\n")
            server = subprocess.Popen(["bash", "-c", f"exec {first}"], cwd=self.work, env=self.env,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            assert server.stdout is not None
            url = re.search(r"http://127\.0\.0\.1:(\d+)", server.stdout.readline())
            assert url, "the server printed no address"
            script = script.replace("PORT", url.group(1))
        try:
            done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=self.work, env=self.env,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT_S)
        finally:
            if server is not None:
                server.terminate()
                server.wait(10)
        output = done.stdout + done.stderr + _reports(done.stdout)
        return Ran(done.returncode, done.stdout, output, time.perf_counter() - started)


def _reports(stdout: str) -> str:
    """The reports a run wrote (`report` in its JSON line): what the docs show of a run is often there."""
    texts = []
    for line in stdout.splitlines():
        if line.startswith("{") and '"report"' in line:
            report = json.loads(line).get("report")
            if report and Path(report).is_file():
                texts.append(Path(report).read_text(encoding="utf-8"))
    return "\n".join(texts)


_pages: dict[str, Page] = {}


def _runs_here(block: Block) -> bool:
    return block.kind == "command" and "skip" not in block.marker


def _ran(block: Block, tmp_path_factory: pytest.TempPathFactory) -> Ran:
    """This command block's run, after the page's earlier ones (each once per worker)."""
    if block.page not in _pages:
        _pages[block.page] = Page(tmp_path_factory.mktemp(block.page.replace("/", "-")))
    page = _pages[block.page]
    for earlier in BLOCKS:
        if earlier.page == block.page and earlier.line <= block.line and _runs_here(earlier) \
                and earlier.line not in page.runs:
            page.runs[earlier.line] = page.run(earlier.text, background="background" in earlier.marker)
    return page.runs[block.line]


def _marks(block: Block) -> list[pytest.MarkDecorator]:
    marker = {**block.command.marker, **block.marker} if block.command is not None else block.marker
    if "skip" in marker:
        return [pytest.mark.skip(reason=marker.get("reason") or "no reason given")]
    if "xfail" in marker:
        return [pytest.mark.xfail(strict=True, reason=f"issue 33 item {marker.get('item')} (a program fix)")]
    return []


@pytest.mark.parametrize("block", [pytest.param(b, id=b.id, marks=_marks(b)) for b in BLOCKS])
def test_doc_block(block: Block, tmp_path_factory: pytest.TempPathFactory) -> None:
    if block.kind == "unmarked":
        pytest.fail(f"{block.id}: a ```{block.lang} block the suite cannot check: make it a command (sh), "
                    "an output right after one, or mark it (see tests/docs/doc_blocks.py)")
    if block.kind == "data":
        check_data(block)
        return
    if block.kind == "command":
        ran = _ran(block, tmp_path_factory)
        assert ran.returncode == 0, f"{block.id} exited {ran.returncode}:\n{ran.output[-4000:]}"
        return
    ran = _ran(block.command, tmp_path_factory) if block.command is not None else _pages_run(block, tmp_path_factory)
    tolerance = float(block.marker["tolerance"]) if "tolerance" in block.marker else None
    match = block.marker.get("match", "lines")
    difference = compare(block.text, ran.output if match == "lines" else ran.stdout, match, tolerance)
    assert difference is None, f"{block.id}: {difference}"


def _pages_run(block: Block, tmp_path_factory: pytest.TempPathFactory) -> Ran:
    """An output block naming its command (`command="..."`), run after the page's earlier blocks."""
    earlier = [b for b in BLOCKS if b.page == block.page and b.line < block.line and _runs_here(b)]
    if earlier:
        _ran(earlier[-1], tmp_path_factory)
    elif block.page not in _pages:
        _pages[block.page] = Page(tmp_path_factory.mktemp(block.page.replace("/", "-")))
    return _pages[block.page].run(block.marker["command"])


def test_markers_say_why() -> None:
    """A skip names its reason, an xfail the numbered fix it waits for; an output names its command."""
    for block in BLOCKS:
        if "skip" in block.marker:
            assert block.marker.get("reason"), f"{block.id}: a skip without reason=\"...\""
        if "xfail" in block.marker:
            assert block.marker.get("item", "").isdigit() and 1 <= int(block.marker["item"]) <= 20, \
                f"{block.id}: an xfail names the numbered fix of issue 33 it waits for (item=1..20)"
        if "command" in block.marker:
            assert block.kind == "output", f"{block.id}: command= on a block that is not an output"
