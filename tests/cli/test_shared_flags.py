"""A flag several commands share is declared once: `--sessions-dir` has one name, metavar and help everywhere."""

from __future__ import annotations

import argparse

from debate_tui.cli import build_parser
from debate_tui.settings import SETTINGS


def commands(parser: argparse.ArgumentParser, path: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every command and sub-command by its words, e.g. "sessions list"."""
    found = {path: parser} if path else {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found |= commands(sub, f"{path} {name}".strip())
    return found


def test_sessions_dir_is_one_flag_with_one_help():
    having = {name: action for name, parser in commands(build_parser()).items()
              for action in parser._actions if "--sessions-dir" in action.option_strings
              and name != "config show"}  # there every configuration setting is a flag: "sets sessions_dir"
    assert set(having) == {"tui", "run", "batch", "sessions", "resume", "fork", "export", "review", "calibrate",
                           "probe", "labels", "compare"}
    assert {(a.dest, a.metavar, a.help, a.default) for a in having.values()} == {
        ("sessions_dir", "DIR", SETTINGS["sessions_dir"].help, None)}
    args = build_parser().parse_args(["sessions", "--sessions-dir", "~/s"])
    assert args.sessions_dir == "~/s"


def test_batch_s_concurrency_and_cache_dir_are_their_settings_flags():
    batch = commands(build_parser())["batch"]
    for name in ("concurrency", "cache_dir"):
        setting = SETTINGS[name]
        action = next(action for action in batch._actions if setting.flag in action.option_strings)
        assert (action.dest, action.metavar, action.help, action.type) == (
            name, setting.metavar, setting.help, setting.kind), name
