"""`debate-tui fork`: what if you had stepped in. A new session with the original's first N turns, a change, resumed.

The fork itself is made below the front ends (`debate_tui.forking`, shared with the TUI); it runs as `resume` runs a
session (`execute`), so its turns 1..N are replayed from the copy, never asked again.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from debate_tui.choices import Choices
from debate_tui.cli.outputs import fail
from debate_tui.cli.run import add_output_arguments, check_report, execute
from debate_tui.cli.task_args import sessions_dir
from debate_tui.cli.task_flags import add_limit_arguments, agent_models
from debate_tui.config import flag_values, resolve_current
from debate_tui.engine.condense import preflight
from debate_tui.factory import check_session
from debate_tui.forking import ForkChange, check_not_running, fork_session
from debate_tui.inputs import InputError
from debate_tui.resolver import resolve_choices
from debate_tui.safefile import SessionLock, check_distinct, check_target, held
from debate_tui.store import SessionFileError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fork", help="what if you had stepped in: a new session with a session's first N turns, a change, run on",
        description="A new session whose first N completed turns are SESSION's, copied verbatim (no call is made "
                    "for them); then the change (a remark before turn N+1, another model from there) and the debate "
                    "runs on, as resume would, to the protocol's end. stdout: run's JSON line plus forked_from.")
    parser.add_argument("original", metavar="SESSION", help="the original: a session id or a session file path")
    parser.add_argument("--at", type=int, required=True, metavar="N",
                        help="copy the original's first N completed turns (0 to its number of turns); the change "
                             "applies from turn N+1")
    parser.add_argument("--inject", metavar="TEXT",
                        help="a remark injected before turn N+1, as the TUI's inject key does")
    parser.add_argument("--model", metavar="MODEL", help="every agent's model from turn N+1 on")
    parser.add_argument("--agent-model", action="append", metavar="ROLE=MODEL", default=[],
                        help="the model of one role's agents (or of one agent, by name) from turn N+1 on, over "
                             "--model (repeatable)")
    parser.add_argument("--api-base", metavar="URL",
                        help="base URL of the OpenAI-compatible server of --model and --agent-model (an agent "
                             "whose model changes keeps no server of its old model)")
    add_limit_arguments(parser)
    add_output_arguments(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    try:
        resolved = resolve_current(flag_values(args))
        store = resolved.config.session_store(sessions_dir(args))
        original_path = store.resolve(args.original)
        original = store.load(str(original_path))
        check_not_running(original, held(original_path))
        change = ForkChange(remark=args.inject, model=args.model, agent_models=agent_models(args.agent_model),
                            api_base=args.api_base, model_settings=resolve_choices(Choices(), resolved).model_settings)
        fork = fork_session(original, args.at, change, who="cli")
        check_session(fork)
        preflight(fork)
        session_path = (check_target(Path(args.session).expanduser(), force=args.force, flag="--session")
                        if args.session else store.path_for(fork.id))
        report_path = check_report(args.report, session_path, force=args.force)
        check_distinct({"--session": session_path, "--report": report_path}, inputs={"SESSION": original_path})
        lock = SessionLock(session_path, fork.id).acquire()
    except (InputError, SessionFileError) as exc:
        return fail(str(exc))
    try:
        return execute(fork, session_path=session_path, report_path=report_path, config=resolved.config)
    finally:
        lock.release()
