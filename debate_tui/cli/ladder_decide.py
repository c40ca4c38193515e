"""A person's answer to a trust ladder no tier trusted, from the command line: `resume SESSION --decide` and
`review SESSION` (a one-text ladder's session, from `run --policy` or the TUI).

Nothing is run again: the answer becomes the session's result (`climb.decide`), recorded with who, when and
where, and the report beside the session is rewritten. Without an answer, one line says what the session waits
for. A batch's ladder lines are not sessions of this kind: `review RESULTS.jsonl` queues them.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from pathlib import Path

from debate_tui.cli.exits import STATUS_EXIT
from debate_tui.cli.headless import summary_line
from debate_tui.cli.outputs import fail, print_line
from debate_tui.cli.run import check_report
from debate_tui.domain import Session
from debate_tui.inputs import InputError
from debate_tui.meta.climb import DecisionError, decide, parse_decision, question_of, waiting
from debate_tui.report.exports import report_text
from debate_tui.safefile import SessionLock
from debate_tui.store import SessionFileError, SessionStore, read_session, write_atomic, write_session
from debate_tui.textsafe import inert

HOW = "a score, NAME=SCORE,... for several criteria, or 1/2/0 for a pair"


def user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        return "cli"


def _settle(session: Session, path: Path, given: str, who: str, where: str, report: Path | None) -> str:
    """Decide, save, rewrite the report (when there is one to write); DecisionError or OSError."""
    who = decide(session, parse_decision(session, given), who, where)
    write_session(path, session)
    if report is not None:
        write_atomic(report, report_text(session, report))
    return who


def decide_waiting(args: argparse.Namespace, session: Session, path: Path) -> int:
    """`resume SESSION [--decide ...]` on a waiting ladder; the caller holds the session's lock."""
    if args.decide is None:
        return fail(f"session {session.id} waits for a person: no tier of its trust ladder trusted its answer; give "
                     f"the answer with --decide ({HOW})")
    try:
        parse_decision(session, args.decide)
        report = check_report(args.report, path, force=args.force, session_id=session.id)
        who = _settle(session, path, args.decide, user(), "resume --decide", report)
    except DecisionError as exc:
        return fail(f"--decide: {exc}")
    except InputError as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"cannot write the session or report: {exc.strerror or exc}")
    print(f"[trust] decided by {inert(who)}", file=sys.stderr)
    summary = json.loads(summary_line(session, session_path=str(path), report=str(report)))
    print_line(json.dumps(summary | {"ladder_status": session.status, "decided_by": who}))
    return STATUS_EXIT[session.status]


def waiting_session(store: SessionStore, ref: str) -> Path | None:
    """`ref` (review's RESULTS.jsonl argument) as the file of a saved session that waits on a ladder, else None."""
    if ref.endswith(".jsonl"):
        return None
    path = store.resolve(ref)
    try:
        return path if path.is_file() and waiting(store.load(str(path))) else None
    except SessionFileError:
        return None


def review_waiting(args: argparse.Namespace, path: Path, who: str) -> int:
    """`review SESSION`: --list prints its question, --decide ID=VALUE (ID the session's id) answers it."""
    try:
        lock = SessionLock(path, path.stem).acquire()
    except InputError as exc:
        return fail(str(exc))
    try:
        session = read_session(path)
        if args.list:
            print(json.dumps({"id": session.id, "criterion": ",".join(c.name for c in session.criteria),
                              "session": session.id, "options": HOW, "question": session.pending_question}))
            return 0
        answers = [value for ident, _, value in (d.rpartition("=") for d in args.decide) if ident == session.id]
        if len(answers) != 1 or len(args.decide) != 1:
            return fail(f"session {session.id} waits for a person ({question_of(session)}): answer it with --decide "
                         f"{session.id}=VALUE ({HOW}), or from the TUI's sessions screen")
        beside = path.with_suffix(".md")
        who = _settle(session, path, answers[0], who, "review", beside if beside.exists() else None)
    except DecisionError as exc:
        return fail(f"--decide: {exc}")
    except (SessionFileError, OSError) as exc:
        return fail(f"cannot read or write the session: {getattr(exc, 'strerror', None) or exc}")
    finally:
        lock.release()
    print(json.dumps({"id": session.id, "criterion": ",".join(c.name for c in session.criteria),
                      "decided": answers[0], "status": session.status, "session": session.id, "decided_by": who}))
    return 0
