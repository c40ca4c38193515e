"""`debate-tui run`: one evaluation, headless. The debate streams to stderr; one JSON line goes to stdout."""

from __future__ import annotations

import argparse
from pathlib import Path

from debate_tui.cli.common_flags import add_sessions_dir
from debate_tui.cli.exits import STATUS_EXIT
from debate_tui.cli.headless import play, summary_line
from debate_tui.cli.outputs import fail, print_line
from debate_tui.cli.task_args import build_task, input_files, session_from_args, sessions_dir, warn_stderr
from debate_tui.cli.task_flags import add_history_arguments, add_limit_arguments, add_task_arguments
from debate_tui.config import Config, flag_values, resolve_current
from debate_tui.domain import Session
from debate_tui.engine.condense import history_state, preflight
from debate_tui.inputs import InputError
from debate_tui.report.exports import report_help, report_text
from debate_tui.safefile import SessionLock, check_distinct, check_target, is_report_of, write_problem
from debate_tui.store import write_atomic


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("run", help="run one evaluation headless", description=__doc__)
    add_task_arguments(parser, text_required=True)
    add_history_arguments(add_limit_arguments(parser))
    add_output_arguments(parser)
    parser.add_argument("--policy", metavar="POLICY.json",
                        help="judge with a trust ladder (from `debate-tui calibrate`): tier 1 first, the next tier "
                             "only while the one before is not sure; the tiers' own task settings replace the "
                             "judging flags; exit 5 when no tier trusts its answer (docs/TRUST.md)")
    parser.set_defaults(handler=handle)


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    out = parser.add_argument_group("output")
    out.add_argument("--report", metavar="PATH.md", help=report_help("PATH.md beside the session file"))
    out.add_argument("--session", metavar="PATH.json",
                     help="write the session file here (default: in the sessions directory)")
    add_sessions_dir(out)
    out.add_argument("--force", action="store_true",
                     help="overwrite the files named by --report and --session if they exist (never a directory, "
                          "device or FIFO)")


def execute(session: Session, *, session_path: Path, report_path: Path, config: Config | None = None) -> int:
    """Run to the end, saving after every turn; shared by `run` and `resume`."""
    if (error := play(session, session_path, config)) is not None:
        print_line(summary_line(session, session_path=str(session_path)))
        return fail(error)
    try:
        write_atomic(report_path, report_text(session, report_path))
    except OSError as exc:
        return fail(write_problem(exc, f"the report {report_path}", "or pass --report elsewhere"))
    print_line(summary_line(session, session_path=str(session_path), report=str(report_path)))
    return STATUS_EXIT[session.status]


def check_report(named: str | None, session_path: Path, *, force: bool, session_id: str | None = None) -> Path:
    """--report, else the report beside the session: either replaced only with --force (a resume replaces the
    report its session wrote before, `session_id`), never a directory, device, FIFO or dangling link."""
    if named:
        return check_target(Path(named).expanduser(), force=force, flag="--report")
    beside = session_path.with_suffix(".md")
    own = session_id is not None and is_report_of(beside, session_id)
    return check_target(beside, force=force or own, flag="the report beside the session,")


def handle(args: argparse.Namespace) -> int:
    if args.policy:
        from debate_tui.cli.run_ladder import run_ladder

        return run_ladder(args)
    try:
        resolved = resolve_current(flag_values(args))
        config = resolved.config
        session = session_from_args(args, build_task(args, warn_stderr), warn_stderr, resolved).session
        session.keep_history(history_state(args.max_history_tokens, args.condense))
        preflight(session)
        store = config.session_store(sessions_dir(args))
        session_path = (check_target(Path(args.session).expanduser(), force=args.force, flag="--session")
                        if args.session else store.path_for(session.id))
        report_path = check_report(args.report, session_path, force=args.force)
        check_distinct({"--session": session_path, "--report": report_path}, inputs=input_files(args))
        lock = SessionLock(session_path, session.id).acquire()
    except InputError as exc:
        return fail(str(exc))
    store.remember(session_path, session.id)  # written elsewhere (--session): listed with the others all the same
    try:
        return execute(session, session_path=session_path, report_path=report_path, config=config)
    finally:
        lock.release()
