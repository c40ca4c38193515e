"""The command line's exit codes come from one table (cli/exits.py): the numbers each command gives, what --help
says about them, and what the handlers return."""

from __future__ import annotations

import re
import typing

import pytest

from debate_tui.cli import COMMANDS as MODULES
from debate_tui.cli import build_parser
from debate_tui.cli.exits import COMMANDS, STATUS_EXIT, Exit, epilog
from debate_tui.domain import Status
from tests.helpers.cli import run_cli

NUMBERS = {
    "tui": [0, 2], "run": [0, 2, 3, 4, 5], "sessions": [0, 2], "resume": [0, 2, 3, 4, 5], "fork": [0, 2, 3, 4, 5],
    "export": [0, 2], "dataset": [0, 2], "meta": [0, 2], "config": [0, 2], "models": [0, 3], "batch": [0, 2, 3, 4],
    "review": [0, 2], "probe": [0, 2, 3], "calibrate": [0, 2], "escalate": [0, 2], "labels": [0, 2],
    "audit": [0, 1, 2], "compare": [0, 1, 2], "serve": [0, 2], "completion": [0],
}
"""Each command's exit codes as they were before the table (acceptance checks rely on them): written out here, not
read from the table, so a changed number fails."""


def test_every_command_keeps_its_exit_codes():
    assert {name: [int(code) for code, _ in codes] for name, codes in COMMANDS.items()} == NUMBERS
    assert set(COMMANDS) == set(MODULES)


@pytest.mark.parametrize("command", sorted(NUMBERS))
def test_each_help_ends_with_the_table_s_line_for_its_command(command):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]  # type: ignore[attr-defined]
    assert sub.epilog == epilog(command)
    said = re.findall(r"(?:^Exit codes: |, )(\d+) ", sub.epilog)
    assert [int(n) for n in said] == NUMBERS[command]


def test_a_run_s_exit_code_covers_every_status_a_session_can_end_in():
    ended = set(typing.get_args(Status)) - {"pending", "running"}
    assert ended == set(STATUS_EXIT)
    assert STATUS_EXIT == {"completed": 0, "failed": 3, "cancelled": 4, "needs_human": 5}


def test_a_code_is_a_number_with_its_name_and_meaning():
    assert Exit.BAD_INPUT == 2 and Exit(4) is Exit.STOPPED
    assert Exit.NEEDS_HUMAN.meaning == "waits for a person's decision"
    assert len({int(code) for code in Exit}) == len(Exit)


def test_a_refusal_is_one_line_and_the_bad_input_code(capsys, tmp_path):
    """`batch_merge`, `serve` and `batch` gave their own copies of the line and the number before."""
    code, _, err = run_cli(capsys, "serve", "--port", "0")
    assert code == Exit.BAD_INPUT and err == "debate-tui: error: --port 0 is not a port (1-65535)\n"
    code, _, err = run_cli(capsys, "batch", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o.jsonl"),
                           "--demo", "--limit", "-1")
    assert code == Exit.BAD_INPUT and err == "debate-tui: error: --limit must be 0 or more\n"
