"""The headless command line: `debate-tui [COMMAND] ...`.

Each sub-command lives in its own module exposing `add_parser(subparsers)`,
which registers the parser and sets `handler` (a function `args -> exit code`).
Without a command (or with only options), the TUI starts: `debate-tui --text f`
means `debate-tui tui --text f`. Only the module of the command being run is
imported, so opening the TUI pays for no other command's imports.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys

from debate_tui.inputs import ConfigError
from debate_tui.textsafe import inert

COMMANDS = {
    "tui": "tui", "run": "run", "sessions": "sessions", "resume": "sessions", "export": "sessions",
    "dataset": "dataset", "meta": "meta", "config": "config", "models": "models", "batch": "batch", "review": "review",
    "probe": "probe",
}
"""Command -> module of this package that registers it, in the order `--help` lists them."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command, or only with the module that registers `command`."""
    parser = argparse.ArgumentParser(
        prog="debate-tui",
        description="Judge text with debating LLM agents. Without a command, opens the TUI.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = [COMMANDS[command]] if command in COMMANDS else dict.fromkeys(COMMANDS.values())
    for module in modules:
        importlib.import_module(f"{__name__}.{module}").add_parser(subparsers)
    return parser


def _escape_unencodable() -> None:
    """Output in any encoding: with stdout in a legacy one (PYTHONIOENCODING=latin-1), a character it cannot
    encode (a Chinese session) is shown as an escape (\\u4e2d), as Python already does on stderr."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # a stream that cannot change is left as it is
                reconfigure(errors="backslashreplace")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["tui", *argv]
    if argv[:2] == ["batch", "merge"]:  # `batch` takes an input file first; see cli/batch_merge.py
        from debate_tui.cli.batch_merge import main as merge

        return merge(argv[2:])
    _escape_unencodable()
    args = build_parser(argv[0]).parse_args(argv)
    try:
        return args.handler(args)
    except ConfigError as exc:
        print(f"debate-tui: error: {inert(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl+C before a command's own handler is in place (imports take seconds)
        print("debate-tui: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `debate-tui sessions | head`: the reader has all it wanted; end quietly
        from debate_tui.cli.outputs import silence

        silence(sys.stdout)
        return 0
    except Exception as exc:  # a full disk, a used-up quota or a read-only file system, wherever it struck
        from debate_tui.safefile import disk_problem, write_problem

        if (full := disk_problem(exc)) is None:
            raise
        print(f"debate-tui: error: {inert(write_problem(full, full.filename or 'a file'))}", file=sys.stderr)
        return 2
