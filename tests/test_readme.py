"""The README cannot drift from the program: its CLI reference and quickstart are checked."""

from __future__ import annotations

import argparse
import re

from debate_tui.cli import build_parser
from debate_tui.cli.reference import PROTOCOLS_END, PROTOCOLS_START, README, protocol_table, readme_block, render
from tests.conftest import REPO

TEST_COMMAND = "python3 dev.py test"


def test_cli_reference_block_is_the_generated_one():
    block = readme_block(README.read_text(encoding="utf-8"))
    assert block is not None, "README has no CLI reference markers"
    assert block == render(), "run: python -m debate_tui.cli.reference --write"


def test_protocol_table_is_the_one_the_specs_give():
    block = readme_block(README.read_text(encoding="utf-8"), PROTOCOLS_START, PROTOCOLS_END)
    assert block == protocol_table(), "run: python -m debate_tui.cli.reference --write"


def test_every_command_and_option_appears_in_the_readme():
    readme = README.read_text(encoding="utf-8")
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subparsers.choices.items():
        assert f"`debate-tui {name}`" in readme
        for action in sub._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert re.search(rf"`{re.escape(option)}[ `]", readme), f"{name} {option} missing from README"


def test_ci_runs_exactly_the_readme_test_command():
    readme = README.read_text(encoding="utf-8")
    assert TEST_COMMAND in readme and "python3 dev.py app" in readme
    assert TEST_COMMAND in (REPO / ".ci" / "run").read_text()
