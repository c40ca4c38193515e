"""The headless command line: `debate-tui [COMMAND] ...`.

Each sub-command lives in its own module exposing `add_parser(subparsers)`,
which registers the parser and sets `handler` (a function `args -> exit code`).
Without a command (or with only options), the TUI starts: `debate-tui --text f`
means `debate-tui tui --text f`.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from debate_tui.config import ConfigError

COMMANDS = ["tui", "run", "sessions", "dataset", "meta", "config", "models", "batch", "review"]
"""Modules of this package, one per sub-command, in the order `--help` lists them."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="debate-tui",
        description="Judge text with debating LLM agents. Without a command, opens the TUI.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["tui", *argv]
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except ConfigError as exc:
        print(f"debate-tui: error: {exc}", file=sys.stderr)
        return 2
