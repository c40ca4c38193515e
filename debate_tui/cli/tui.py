"""`debate-tui [tui]`: the terminal UI, with the same task options as `run`."""

from __future__ import annotations

import argparse
import gc
import typing
from typing import TYPE_CHECKING

from debate_tui.cli.common_flags import add_sessions_dir
from debate_tui.cli.task_flags import (
    add_history_arguments,
    add_limit_arguments,
    add_task_arguments,
    choices_from_args,
)
from debate_tui.inputs import InputError

if TYPE_CHECKING:
    from debate_tui.ui.opening import TuiRequest


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("tui", help="open the terminal UI (the default command)", description=__doc__)
    add_arguments(parser)


def add_arguments(parser: argparse.ArgumentParser, *, protocol_options: bool = True) -> None:
    add_task_arguments(parser, text_required=False, protocol_options=protocol_options)
    add_history_arguments(add_limit_arguments(parser))
    parser.add_argument("--autostart", action="store_true", help="start the debate at once")
    parser.add_argument("--step", action="store_true", help="start in step mode (one turn per key press)")
    add_sessions_dir(parser)
    parser.add_argument("--policy", metavar="POLICY.json",
                        help="judge the text up a trust ladder (from `debate-tui calibrate`), starting at once: "
                             "each next tier plays in its own panes while the one before is not sure; you decide "
                             "when no tier is (docs/TRUST.md)")
    parser.set_defaults(handler=handle)


class _QuickParser(argparse.ArgumentParser):
    """Says it cannot read a command line instead of ending the program: the whole parser then reads it."""

    def error(self, message: str) -> typing.NoReturn:
        raise argparse.ArgumentError(None, message)


def quick_parse(argv: list[str]) -> argparse.Namespace | None:
    """`debate-tui tui ...` read without the protocols' option flags, whose specs import pydantic (1.4 s before
    the first frame), when each flag given is exactly one of the others; None: the whole parser must read it (a
    protocol option, an abbreviation, --help, a mistake it reports)."""
    parser = _QuickParser(prog="debate-tui tui", add_help=False, allow_abbrev=False)
    add_arguments(parser, protocol_options=False)
    known = parser._option_string_actions  # argparse offers no public way to list a parser's flags
    if any(word.startswith("-") and word != "-" and word.split("=", 1)[0] not in known for word in argv[1:]):
        return None
    try:
        args = parser.parse_args(argv[1:])
    except argparse.ArgumentError:
        return None
    args.command = "tui"
    return args


def tui_request(args: argparse.Namespace) -> TuiRequest:
    """What the command line asks of the TUI, without argparse: the task flags as the factory's `Choices`."""
    from debate_tui.ui.opening import TuiRequest

    return TuiRequest(choices=choices_from_args(args),
                      config_flags={key: value for key, value in vars(args).items() if value is not None},
                      autostart=args.autostart or bool(args.policy), step=args.step, sessions_dir=args.sessions_dir,
                      history={"max_history_tokens": args.max_history_tokens, "condense": args.condense},
                      policy=args.policy)


def handle(args: argparse.Namespace) -> int:
    gc.disable()  # until the first frame (`ui.app.tune_gc`): start-up allocates much and frees little
    from debate_tui.ui.app import run_app

    try:
        request = tui_request(args)
    except InputError as exc:
        from debate_tui.cli.outputs import fail  # here: the TUI's start-up path stays light

        return fail(str(exc))
    return run_app(request)
