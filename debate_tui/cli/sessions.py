"""`debate-tui sessions`, `resume` and `export`: saved sessions from the command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from debate_tui.choices import Choices
from debate_tui.cli.common_flags import add_sessions_dir
from debate_tui.cli.outputs import fail, standard_output
from debate_tui.cli.run import add_limit_arguments, check_report, execute
from debate_tui.config import effective_config, flag_values, resolve_current
from debate_tui.domain import HumanAction, Session
from debate_tui.endpoints import resumed_connections
from debate_tui.engine.judged import stamp
from debate_tui.factory import check_session, kept_settings_note
from debate_tui.inputs import InputError
from debate_tui.locations import examples_dir
from debate_tui.report.exports import DEFAULT, FORMATS, export_text, format_help, formats_named, report_help
from debate_tui.resolver import resolve_choices
from debate_tui.safefile import SessionLock, TargetError, check_distinct, check_target, write_problem
from debate_tui.store import SessionFileError, SessionStore, SessionSummary, write_atomic
from debate_tui.textsafe import aligned, inert, inert_json, inert_line


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    listing = subparsers.add_parser("sessions", help="list saved sessions, then the shipped example sessions")
    add_sessions_dir(listing)
    listing.add_argument("--no-examples", action="store_true",
                         help="leave out the example sessions shipped with debate-tui")
    listing.add_argument("--json", action="store_true",
                         help='print one JSON object: {"sessions": [...], "examples": [...]}, a row per file')
    listing.set_defaults(handler=handle_list)

    resume = subparsers.add_parser("resume", help="continue an interrupted, failed or undecided session")
    resume.add_argument("session", metavar="SESSION", help="a session id or a session file path")
    resume.add_argument("--decide", metavar="1|2|0|SCORE",
                        help="the human decision the session is waiting for (a trust ladder no tier trusted: its "
                             "answer, without a rerun; NAME=SCORE,... for several criteria)")
    resume.add_argument("--report", metavar="PATH.md", help=report_help("PATH.md beside the session"))
    add_sessions_dir(resume)
    resume.add_argument("--force", action="store_true",
                        help="overwrite --report if it exists (the session's own report beside it is replaced "
                             "without it; never a directory, device or FIFO)")
    add_limit_arguments(resume)
    resume.set_defaults(handler=handle_resume)

    export = subparsers.add_parser("export", help=f"write a session's report as {formats_named()}")
    export.add_argument("session", metavar="SESSION", help="a session id or a session file path")
    export.add_argument("--format", choices=[fmt.name for fmt in FORMATS], default=DEFAULT.name, help=format_help())
    export.add_argument("--out", metavar="PATH", help="output file (default: stdout)")
    export.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    add_sessions_dir(export)
    export.set_defaults(handler=handle_export)


def _store(args: argparse.Namespace) -> SessionStore:
    """--sessions-dir, else the configured sessions directory (ConfigError when the configuration cannot be used)."""
    return effective_config(args).session_store(Path(args.sessions_dir).expanduser() if args.sessions_dir else None)


LIST_HEAD = ["ID", "DATE", "PROTOCOL", "STATUS", "MODEL", "CRITERIA", "RESULT", "TEXT"]
"""`debate-tui sessions`'s columns; the text last, so a long one never pushes the others out of line."""


def _print_rows(rows: list[SessionSummary], *, by_path: bool = False) -> None:
    """A header, then a row per file in aligned columns (an unreadable file: its name, UNREADABLE and why, on a
    line of its own). Every field may come from a file someone else wrote: printed inert, on one line (the text as
    written, not quoted)."""
    table = [LIST_HEAD if not by_path else ["PATH", *LIST_HEAD[1:]]]
    for row in rows:
        if not row.problem:
            fork = f"  fork of {row.forked_from[0]} at turn {row.forked_from[1]}" if row.forked_from else ""
            table.append([str(row.path) if by_path else row.id,
                          f"{row.created_at:%Y-%m-%d %H:%M}" if row.created_at else "?", row.protocol,
                          row.shown_status, row.model or "-", ",".join(row.criteria) or "-", row.result or "-",
                          row.snippet + fork])
    lines = iter(aligned([[inert_line(cell) for cell in cells] for cells in table]))
    print(next(lines))
    for row in rows:
        name = str(row.path) if by_path else row.id
        print(inert_line(f"{name}  UNREADABLE  {row.problem}") if row.problem else next(lines))


def _row_data(row: SessionSummary) -> dict[str, object]:
    return {"id": row.id, "path": str(row.path), "created_at": row.created_at.isoformat() if row.created_at else None,
            "protocol": row.protocol, "status": row.shown_status, "criteria": list(row.criteria),
            "result": row.result, "snippet": row.snippet, "problem": row.problem, "model": row.model,
            "forked_from": {"session": row.forked_from[0], "turns": row.forked_from[1]} if row.forked_from else None}


def handle_list(args: argparse.Namespace) -> int:
    store = _store(args)
    rows = store.list()
    examples = examples_dir()
    shipped = (SessionStore(examples).list() if not args.no_examples and examples.is_dir()
               and examples.resolve() != store.root.resolve() else [])
    if args.json:  # every field may come from a file someone else wrote: JSON escapes, then inert for a terminal
        print(inert_json(json.dumps({"sessions": [_row_data(r) for r in rows],
                                     "examples": [_row_data(r) for r in shipped]})))
        return 0
    if rows:
        _print_rows(rows)
    else:
        print("no sessions yet", file=sys.stderr)
    if shipped:
        print("\nexamples shipped with debate-tui (debate-tui export PATH shows one):")
        _print_rows(shipped, by_path=True)
    return 0


def handle_resume(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        path = store.resolve(args.session)
        lock = SessionLock(path, store.load(args.session).id).acquire()
    except (SessionFileError, InputError) as exc:
        return fail(str(exc))
    try:
        return _resume(args, store, path)
    finally:
        lock.release()


def _resume(args: argparse.Namespace, store: SessionStore, path: Path) -> int:
    try:
        session = store.load(str(path))  # read again under the lock: another writer may have just finished it
    except SessionFileError as exc:
        return fail(str(exc))
    from debate_tui.meta.climb import waiting  # here: `debate-tui --help` does not read the trust ladder

    if waiting(session):  # a trust ladder no tier trusted: the person's answer is the result, nothing is rerun
        from debate_tui.cli.ladder_decide import decide_waiting

        return decide_waiting(args, session, path)
    if session.status == "completed":
        return fail(f"session {session.id} is already completed")
    try:
        check_session(session)
    except InputError as exc:
        return fail(f"session {session.id} cannot be resumed: {exc}")
    if args.decide is not None:
        if session.status != "needs_human":
            return fail(f"session {session.id} is not waiting for a decision (status {session.status})")
        session.actions.append(stamp(HumanAction(kind="decide", value=args.decide, who="cli",
                                                 after_turn=sum(1 for t in session.turns if t.error is None),
                                                 text=session.pending_question or "", criterion=asked_about(session),
                                                 where="resume --decide", source="decision"), session))
    try:
        report = check_report(args.report, path, force=args.force, session_id=session.id)
        check_distinct({"--report": report}, inputs={"SESSION": path})
        resolved = resolve_current(flag_values(args))
    except InputError as exc:  # TargetError, ConfigError
        return fail(str(exc))
    if (note := kept_settings_note(session, resolve_choices(Choices(), resolved))) is not None:
        print(f"debate-tui: note: {inert(note)}", file=sys.stderr)
    for note in resumed_connections(session, path, resolved.config.model_params):
        print(f"debate-tui: warning: {inert(note)}", file=sys.stderr)
    return execute(session, session_path=path, report_path=report, config=resolved.config)


def asked_about(session: Session) -> str | None:
    """The criterion the waiting question is about, as the protocol asks it (replayed without a call)."""
    import asyncio

    from debate_tui.meta.review import ask

    return asyncio.run(ask(session)).criterion


def handle_export(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        session = store.load(args.session)
    except SessionFileError as exc:
        return fail(str(exc))
    text = export_text(session, args.format)  # inert: a terminal must not obey escapes from the text or models
    if args.out is None:
        try:
            standard_output("--out FILE").write(text)
        except InputError as exc:
            return fail(str(exc))
        return 0
    try:
        out = check_target(Path(args.out).expanduser(), force=args.force, flag="--out")
        check_distinct({"--out": out}, inputs={"SESSION": store.resolve(args.session)})
        write_atomic(out, text)
    except TargetError as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(write_problem(exc, args.out, "or pass --out elsewhere"))
    print(f"wrote {out}", file=sys.stderr)
    return 0
