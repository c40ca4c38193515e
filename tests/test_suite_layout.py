"""The suite's own shape: what tests share comes from tests/helpers or a conftest's fixtures, never from another
test module or from a conftest by import (a conftest is pytest's to load; importing it runs it twice)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    names |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return names


def test_no_test_module_imports_a_conftest_or_another_test_module() -> None:
    wrong = sorted(
        f"{path.relative_to(TESTS)} imports {name}"
        for path in TESTS.rglob("*.py")
        for name in imported_modules(path)
        if name.startswith("tests.") and (name.split(".")[-1] == "conftest" or name.split(".")[-1].startswith("test_"))
    )
    assert wrong == []
