"""An installed wheel carries its own data: themes, example sessions and the data sets.

The wheel is built from a copy of the sources and installed with `pip install
--target` into a folder outside the source tree; everything then runs from there
(cwd elsewhere, no DEBATE_TUI_DATA_DIR), as after `pip install --user`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
APP_STARTS = """
import asyncio
from debate_tui.cli import build_parser
from debate_tui.cli.tui import tui_request
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import launch_from
from debate_tui.ui.state import load_state

async def main():
    app = DebateTUI(launch_from(tui_request(build_parser().parse_args(["tui", "--demo"])), load_state()))
    async with app.run_test() as pilot:
        for _ in range(400):  # leave once the form is whole: quitting while it mounts is another test's business
            if app.screen.query("#option-form") and app.screen.query("#start"):
                break
            await pilot.pause(0.05)
        await app.workers.wait_for_complete()  # the catalog's loader may rebuild the option form once more
        await pilot.pause(0.2)
        print("theme", app.theme, sorted(name for name in app.available_themes if name.startswith("debate-")))

asyncio.run(main())
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the wheel was installed into with `pip install --target`."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "debate_tui", source / "debate_tui", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([*PIP, "wheel", "--no-deps", "--no-build-isolation", "-w", str(root / "dist"), str(source)],
                   check=True, cwd=root)
    (wheel,) = (root / "dist").glob("debate_tui-*.whl")
    target = root / "target"
    subprocess.run([*PIP, "install", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
                   check=True, cwd=root)
    return target


def run(installed: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """`argv` under the installed copy: its folder first on the path, run from an unrelated cwd."""
    env = {k: v for k, v in os.environ.items() if k != "DEBATE_TUI_DATA_DIR"}
    env["PYTHONPATH"] = str(installed)
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env,
                          cwd=installed.parent, timeout=120)


def test_the_installed_copy_is_the_one_imported(installed: Path) -> None:
    done = run(installed, "-c", "import debate_tui; print(debate_tui.__file__)")
    assert Path(done.stdout.strip()).is_relative_to(installed), done.stdout


def test_dataset_from_the_installed_wheel(installed: Path) -> None:
    done = run(installed, str(installed / "bin" / "debate-tui"), "dataset", "summeval", "--limit", "5")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in done.stdout.splitlines()]
    criteria = {"coherence", "consistency", "fluency", "relevance"}
    assert len(lines) == 12 and all(set(x["human"]) == criteria for x in lines)  # --limit: one whole article


def test_sessions_lists_the_installed_examples(installed: Path, tmp_path: Path) -> None:
    done = run(installed, str(installed / "bin" / "debate-tui"), "sessions", "--sessions-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    examples = [line.split()[0] for line in done.stdout.splitlines() if line.split(" ", 1)[0].endswith(".json")]
    assert sorted(Path(p).name for p in examples) == [
        f"{name}-example.json" for name in ("chateval", "debate", "mateval", "scaleeval", "single")
    ]
    assert all(Path(p).is_relative_to(installed) for p in examples)


def test_the_app_starts_with_the_installed_themes(installed: Path) -> None:
    done = run(installed, "-c", APP_STARTS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "theme debate-dark ['debate-dark', 'debate-paper']"


def imported_distributions(folder: Path) -> dict[str, set[str]]:
    """Distribution -> the files of `folder` that import one of its modules (the standard library left out)."""
    import ast
    from importlib.metadata import packages_distributions

    owners = packages_distributions()
    found: dict[str, set[str]] = {}
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]  # the repository's own folders are not distributions
                ours = top in ("debate_tui", "tests", "benchmarks", "tools") or top.startswith("test_")
                if ours or top in sys.stdlib_module_names:
                    continue
                for distribution in owners.get(top, [f"(no distribution has {top})"]):
                    found.setdefault(distribution, set()).add(str(path.relative_to(REPO)))
    return found


def declared(*tables: list[str]) -> set[str]:
    import re

    return {re.split(r"[<>=!~ ;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")
            for table in tables for requirement in table if isinstance(requirement, str)}


def test_every_imported_package_is_declared() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    runtime = declared(project["project"]["dependencies"])
    extras = declared(*project["project"]["optional-dependencies"].values())
    missing = {d: f for d, f in imported_distributions(REPO / "debate_tui").items()
               if d.lower().replace("_", "-") not in runtime | extras}
    assert missing == {}  # numpy, rich, markdown-it-py, openai and PyYAML were imported and not declared
    test_group = declared(project["dependency-groups"]["test"])
    missing = {d: f for d, f in imported_distributions(REPO / "tests").items()
               if d.lower().replace("_", "-") not in runtime | extras | test_group}
    assert missing == {}


def test_the_version_is_written_once() -> None:
    import re

    written = [path for path in [REPO / "pyproject.toml", *(REPO / "debate_tui").rglob("*.py")]
               if re.search(r"""(?m)^\s*(__version__|version)\s*=\s*["']\d""", path.read_text(encoding="utf-8"))]
    assert written == [REPO / "pyproject.toml"]
