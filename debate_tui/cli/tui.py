"""`debate-tui [tui]`: the terminal UI, with the same task options as `run`."""

from __future__ import annotations

import argparse
import gc
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
    add_task_arguments(parser, text_required=False)
    add_history_arguments(add_limit_arguments(parser))
    parser.add_argument("--autostart", action="store_true", help="start the debate at once")
    parser.add_argument("--step", action="store_true", help="start in step mode (one turn per key press)")
    add_sessions_dir(parser)
    parser.add_argument("--policy", metavar="POLICY.json",
                        help="judge the text up a trust ladder (from `debate-tui calibrate`), starting at once: "
                             "each next tier plays in its own panes while the one before is not sure; you decide "
                             "when no tier is (docs/TRUST.md)")
    parser.set_defaults(handler=handle)


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
