"""`debate-tui [tui]`: the terminal UI, with the same task options as `run`."""

from __future__ import annotations

import argparse
import gc

from debate_tui.cli.task_flags import add_task_arguments


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("tui", help="open the terminal UI (the default command)", description=__doc__)
    add_task_arguments(parser, text_required=False)
    parser.add_argument("--autostart", action="store_true", help="start the debate at once")
    parser.add_argument("--step", action="store_true", help="start in step mode (one turn per key press)")
    parser.add_argument("--sessions-dir", metavar="DIR", help="sessions directory (default: user data dir)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    gc.disable()  # until the first frame (`ui.app.tune_gc`): start-up allocates much and frees little
    from debate_tui.ui.app import run_app

    return run_app(args)
