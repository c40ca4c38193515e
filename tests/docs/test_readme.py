"""The README and the docs cannot drift from the program: the CLI reference, the protocol table and the
front page's commands are checked (every command block of every page is run by tests/docs/test_docs_run.py)."""

from __future__ import annotations

import argparse
import re

from debate_tui.cli import build_parser
from debate_tui.cli.reference import (
    CLI_PAGE,
    PROTOCOLS_END,
    PROTOCOLS_PAGE,
    PROTOCOLS_START,
    protocol_table,
    readme_block,
    render,
)
from tests.helpers import REPO
from tests.helpers.sessions import run

TEST_COMMAND = "python3 dev.py test"
README = REPO / "README.md"
WORK_TALK = re.compile(r"\b[Ss]ession \d{1,2}\b(?! of)|\bthe lead\b|\blead's\b|\bzhparse\b|\bhelper\b|\bnext session\b"
                       r"|\b[Ii]ssues? \d+\b")
"""How work sessions, their people and their tracker were named in docs and fixtures: the product (its
commits, dates and methods) is spoken of instead."""


def test_cli_reference_block_is_the_generated_one():
    block = readme_block(CLI_PAGE.read_text(encoding="utf-8"))
    assert block is not None, "docs/cli.md has no CLI reference markers"
    assert block == render(), "run: python -m debate_tui.cli.reference --write"


def test_protocol_table_is_the_one_the_specs_give():
    block = readme_block(PROTOCOLS_PAGE.read_text(encoding="utf-8"), PROTOCOLS_START, PROTOCOLS_END)
    assert block == protocol_table(), "run: python -m debate_tui.cli.reference --write"


def test_every_command_and_option_appears_in_the_cli_reference():
    reference = CLI_PAGE.read_text(encoding="utf-8")
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subparsers.choices.items():
        assert f"`debate-tui {name}`" in reference
        for action in sub._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    found = re.search(rf"`{re.escape(option)}[ `]", reference)
                    assert found, f"{name} {option} missing from docs/cli.md"


def test_ci_runs_exactly_the_readme_test_command_and_the_strict_docs_build():
    readme = README.read_text(encoding="utf-8")
    assert TEST_COMMAND in readme and "python3 dev.py app" in readme and "python3 dev.py docs" in readme
    ci = (REPO / ".ci" / "run").read_text()
    assert TEST_COMMAND in ci and "python3 dev.py docs" in ci
    assert "strict: true" in (REPO / "mkdocs.yml").read_text()


def test_the_readme_is_a_front_page_that_links_every_page():
    readme = README.read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    pages = {path.relative_to(REPO).as_posix() for path in (REPO / "docs").glob("*.md")}
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)", readme))
    assert pages <= linked, f"pages the README does not link: {sorted(pages - linked)}"


def test_the_readme_inputs_ship_in_examples():
    readme = README.read_text(encoding="utf-8")
    named = set(re.findall(r"examples/[\w.-]+\.txt", readme))
    assert {"examples/story.txt", "examples/summary.txt", "examples/article.txt", "examples/question.txt",
            "examples/answer1.txt", "examples/answer2.txt", "examples/dialogue.txt"} <= named
    for path in named:
        assert (REPO / path).read_text(encoding="utf-8").strip(), path


def test_docs_and_fixtures_speak_of_the_product_not_of_who_worked_on_it():
    files = [README, *(REPO / "docs").rglob("*.md"), *(REPO / "tests" / "fixtures").glob("*")]
    for path in files:
        assert not WORK_TALK.search(path.name), path
        if path.is_file() and path.suffix in (".md", ".json", ".jsonl") and path.stat().st_size < 5_000_000:
            found = WORK_TALK.search(path.read_text(encoding="utf-8"))
            assert found is None, f"{path.relative_to(REPO)}: {found.group()!r}"
