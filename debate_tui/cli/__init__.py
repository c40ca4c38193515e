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
import gc
import importlib
import os
import sys

from debate_tui.batch.heap import settle
from debate_tui.cli.exits import Exit, epilog
from debate_tui.inputs import ConfigError
from debate_tui.textsafe import inert

COMMANDS = {
    "tui": "tui", "run": "run", "sessions": "sessions", "resume": "sessions", "fork": "fork", "export": "sessions",
    "dataset": "dataset", "meta": "meta", "config": "config", "models": "models", "batch": "batch", "review": "review",
    "probe": "probe", "calibrate": "trust", "escalate": "trust", "compare": "compare",
    "labels": "labels", "audit": "audit", "serve": "serve", "completion": "completion",
}
"""Command -> module of this package that registers it, in the order `--help` lists them."""

def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command, or only with the module that registers `command`."""
    parser = argparse.ArgumentParser(
        prog="debate-tui",
        description="Judge text with debating LLM agents. Without a command, opens the TUI.",
    )
    parser.add_argument("--version", action="version", version=version_line(),
                        help="print the installed version and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = [COMMANDS[command]] if command in COMMANDS else dict.fromkeys(COMMANDS.values())
    for module in modules:
        importlib.import_module(f"{__name__}.{module}").add_parser(subparsers)
    for name, sub in subparsers.choices.items():
        sub.epilog = epilog(name)
    return parser


def parse(argv: list[str]) -> argparse.Namespace:
    """The command line, read by its command's parser. The TUI's is first read without the protocols' option flags
    (`cli.tui.quick_parse`: no pydantic before the first frame), and by the whole parser only when needed."""
    if argv[0] == "tui":
        from debate_tui.cli.tui import quick_parse

        if (quick := quick_parse(argv)) is not None:
            return quick
    from debate_tui.cli.task_flags import spelled_out

    parser = build_parser(argv[0])
    return parser.parse_args(spelled_out(argv, parser))


def version_line() -> str:
    """"debate-tui 0.1.0": the installed distribution's metadata, the one place the version is written."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"debate-tui {version('debate-tui')}"
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "debate-tui (not installed: no version metadata)"
def _escape_unencodable() -> None:
    """Output in any encoding: with stdout in a legacy one (PYTHONIOENCODING=latin-1), a character it cannot
    encode (a Chinese session) is shown as an escape (\\u4e2d), as Python already does on stderr."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # a stream that cannot change is left as it is
                reconfigure(errors="backslashreplace")


_program = False
"""True once `main()` runs as the command line: this process is the program's own, not a test's."""


def main(argv: list[str] | None = None) -> int:
    """The program (`argv` None: the command line) or a call from code (a test) with its own arguments."""
    global _program
    if argv is not None:
        return _main(list(argv))
    _program = True
    try:
        return _main(sys.argv[1:])
    finally:
        leave_quickly()


def leave_quickly() -> None:
    """Spare the interpreter's last garbage collections a walk over every object the imports made.

    Once litellm is imported, those collections took 4 s after the last line was printed (a Ctrl+C'd `run`
    took 4-5 s to give the prompt back); frozen objects are not walked, so the process ends at once. Only
    for the program: a test process that froze its objects would never collect the ones that became garbage.
    """
    gc.freeze()


def freeze_loaded() -> None:
    """Before a long run, once its imports are done: the collector settled for it (`batch.heap`). Only for the
    program, as `leave_quickly`."""
    if _program:
        settle()


def cwd_gone() -> str | None:
    """Why nothing relative can be found, when the working directory was deleted (or cannot be read) under us."""
    try:
        os.getcwd()
    except OSError as exc:
        return f"the working directory is gone ({exc.strerror}): cd to one that exists, or give absolute paths"
    return None


def _main(argv: list[str]) -> int:
    if argv[:1] == ["--version"]:  # before the TUI rewrite below would read it as the TUI's option
        print(version_line())
        return 0
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["tui", *argv]
    from debate_tui.envfile import load_env_file, notice

    if warning := load_env_file():  # before any command can import litellm
        print(f"debate-tui: warning: {inert(warning)}", file=sys.stderr)
    if (read := notice()) is not None:  # a file someone else may have written: say what it set
        print(f"debate-tui: note: {inert(read)}", file=sys.stderr)
    if argv[:2] == ["batch", "merge"]:  # `batch` takes an input file first; see cli/batch_merge.py
        from debate_tui.cli.batch_merge import main as merge

        return merge(argv[2:])
    _escape_unencodable()
    args = parse(argv)
    try:
        return args.handler(args)
    except ConfigError as exc:
        from debate_tui.cli.outputs import fail  # here: not light enough for every start

        return fail(str(exc))
    except KeyboardInterrupt:  # Ctrl+C before a command's own handler is in place (imports take seconds)
        print("debate-tui: interrupted", file=sys.stderr)
        return Exit.INTERRUPTED
    except BrokenPipeError:  # `debate-tui sessions | head`: the reader has all it wanted; end quietly
        from debate_tui.cli.outputs import silence

        silence(sys.stdout)
        return Exit.OK
    except Exception as exc:  # a full disk, a used-up quota or a read-only file system, wherever it struck
        from debate_tui.cli.outputs import fail
        from debate_tui.safefile import disk_problem, write_problem

        if isinstance(exc, OSError) and (gone := cwd_gone()) is not None:  # a relative path needed it
            return fail(gone)
        if (full := disk_problem(exc)) is None:
            raise
        return fail(write_problem(full, full.filename or "a file"))

