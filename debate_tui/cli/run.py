"""`debate-tui run`: one evaluation, headless. The debate streams to stderr; one JSON line goes to stdout."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import TextIO

from debate_tui.cli.common_flags import add_sessions_dir
from debate_tui.cli.outputs import SaveGuard, fail, print_line, silence
from debate_tui.cli.task_args import (
    build_task,
    input_files,
    say_endpoints,
    session_from_args,
    sessions_dir,
    warn_stderr,
)
from debate_tui.cli.task_flags import add_history_arguments, add_limit_arguments, add_task_arguments
from debate_tui.config import Config, flag_values, load_config, resolve_current
from debate_tui.domain import Session, task_injection_signs
from debate_tui.engine.budget import Budget
from debate_tui.engine.condense import history_state, preflight
from debate_tui.engine.control import RunControl
from debate_tui.engine.events import (
    Event,
    Finished,
    NeedsHuman,
    Notice,
    TextDelta,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    Waiting,
)
from debate_tui.engine.runner import RetryPolicy, Runner
from debate_tui.factory import runner_for
from debate_tui.inputs import InputError
from debate_tui.llm.router import ModelRouter
from debate_tui.report.exports import report_help, report_text
from debate_tui.report.facts import confidence_lines
from debate_tui.safefile import SessionLock, check_distinct, check_target, is_report_of, write_problem
from debate_tui.store import write_atomic
from debate_tui.textsafe import inert

EXIT = {"completed": 0, "failed": 3, "cancelled": 4, "needs_human": 5}


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


REPLY_MARGIN = "  | "
"""Begins every line of a model's reply on the stream: the tool's own lines ("--- Scorer ... ---", "[note]",
"=== completed ===") start at the margin, so a reply that writes one of them cannot pass for it."""


class PlainPrinter:
    """Writes the debate as readable plain text; model text is made inert first, each of its lines indented.

    One turn at a time streams live; turns running beside it in parallel
    (ChatEval's simultaneous talk) are held back and printed whole when they
    finish, so their texts never interleave.
    """

    def __init__(self, out: TextIO):
        self.out: TextIO | None = out
        self.live: int | None = None
        self.held: dict[int, list[str]] = {}
        self.mid_line: set[int] = set()
        """Slots whose reply has begun a line the margin was written for."""

    def _reply(self, slot: int, text: str) -> str:
        """A piece of a slot's reply with the margin before each of its lines (one streamed piece may end mid-line)."""
        if not text:
            return ""
        start = "" if slot in self.mid_line else REPLY_MARGIN
        body = text.replace("\n", "\n" + REPLY_MARGIN)
        if body.endswith(REPLY_MARGIN):  # the next piece opens the next line
            body = body[: -len(REPLY_MARGIN)]
            self.mid_line.discard(slot)
        else:
            self.mid_line.add(slot)
        return start + body

    def _write(self, text: str) -> None:
        if self.out is None:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except OSError:  # the reader went away (`2>&1 | head`, a closed terminal): stop streaming, not judging
            silence(self.out)
            self.out = None

    def _emit(self, slot: int, text: str) -> None:
        if slot == self.live:
            self._write(text)
        else:
            self.held.setdefault(slot, []).append(text)

    def _end(self, slot: int, tail: str) -> None:
        self.mid_line.discard(slot)
        if slot == self.live:
            self.live = None
            self._write(tail)
        else:
            self._write("".join(self.held.pop(slot, [])) + tail)

    def __call__(self, event: Event) -> None:
        match event:
            case TurnStarted(slot=slot, agent=agent, role=role, round=rnd, criterion=criterion):
                if self.live is None:
                    self.live = slot
                self.held.pop(slot, None)
                about = f", {criterion}" if criterion else ""  # names may come from a user's TOML file
                self._emit(slot, inert(f"\n--- {agent} ({role.replace('_', ' ')}), round {rnd}{about} ---") + "\n")
            case TextDelta(slot=slot, text=text):
                self._emit(slot, self._reply(slot, inert(text)))
            case TurnCompleted(turn=turn, replayed=replayed):
                if replayed:
                    self._emit(turn.slot, self._reply(turn.slot, inert(turn.content)) + "\n(replayed from the session)")
                self._end(turn.slot, f"\n[{turn.ending}]\n" if turn.ending else "\n")
            case TurnFailed(slot=slot, error=error, will_retry=retry):
                self._end(slot, f"\n[turn failed: {inert(error)}{'; retrying' if retry else ''}]\n")
            case Notice(message=message):
                self._write(f"[note] {inert(message)}\n")
            case Waiting(what=what):
                self._write(f"[waiting] {inert(what)} ...\n")
            case NeedsHuman(question=question):
                self._write(f"[needs a human decision] {inert(question)}\n")
            case Finished(status=status, error=error):
                self._write(f"\n=== {status}{': ' + inert(error) if error else ''} ===\n")


def summary_line(session: Session, **extra: str) -> str:
    outcome = session.outcome
    usage = session.usage
    return json.dumps({
        "session": session.id,
        "protocol": session.protocol,
        "status": session.status,
        "scores": dict(outcome.scores) if outcome else {c.name: None for c in session.criteria},
        "verdict": outcome.verdict if outcome else None,
        "calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cost_usd": round(usage.cost_usd, 6),
        "error": session.error,
        "unscored": sum(turn.unscored for turn in session.turns),
        "truncated": sum(turn.truncated for turn in session.turns),
        "confidence": dict(outcome.confidence) if outcome else {c.name: None for c in session.criteria},
        "confidence_basis": confidence_lines(session),
        "injection_signs": task_injection_signs(session.task),
        **extra,
        **({"forked_from": session.forked_from.model_dump()} if session.forked_from is not None else {}),
    })


def play(session: Session, session_path: Path, config: Config | None = None) -> str | None:
    """Run to the end, saving after every turn, the debate on stderr; the reason when the file could not be
    written (the session is then marked failed)."""
    limits = (config or load_config()).limits
    say_endpoints(session.agents)
    control = RunControl()
    save = SaveGuard(session_path, control)  # a session file that cannot be written stops the run
    budget = Budget(max_cost=limits.max_cost, max_tokens=limits.max_tokens)
    if (unenforceable := budget.unenforceable([agent.model for agent in session.agents])) is not None:
        warn_stderr(unenforceable)
    runner = runner_for(session, ModelRouter(timeout_s=limits.timeout), emit=PlainPrinter(sys.stderr),
                        control=control, retry=RetryPolicy.of(limits), budget=budget, save=save)
    _run_on_new_loop(runner, control)
    if save.error is not None:
        save.mark_failed(session)
    return save.error


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
    return EXIT[session.status]


def check_report(named: str | None, session_path: Path, *, force: bool, session_id: str | None = None) -> Path:
    """--report, else the report beside the session: either replaced only with --force (a resume replaces the
    report its session wrote before, `session_id`), never a directory, device, FIFO or dangling link."""
    if named:
        return check_target(Path(named).expanduser(), force=force, flag="--report")
    beside = session_path.with_suffix(".md")
    own = session_id is not None and is_report_of(beside, session_id)
    return check_target(beside, force=force or own, flag="the report beside the session,")


def _run_on_new_loop(runner: Runner, control: RunControl) -> None:
    """`asyncio.Runner` also cancels what litellm leaves running (its logging worker) before the loop closes."""
    with asyncio.Runner() as loop_runner:
        loop = loop_runner.get_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, control.stop, "interrupted (Ctrl+C)")
            loop.add_signal_handler(signal.SIGTERM, control.stop, "terminated")
        except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
            pass
        loop_runner.run(runner.run())


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
