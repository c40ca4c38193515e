"""`debate-tui run --text F --policy POLICY.json`: one text up a trust ladder, headless.

Tier 1 judges first; while a tier's confidence stays below its threshold on some
criterion, the next tier judges the same text in a session of its own (the
earlier ones are kept). Each tier's status goes to stderr: "trusted: >= 85%
agreement at 90% confidence, calibrated on 412 items" or "tier 1 (single, conf
0.61 < 0.78): not sure, escalating to tier 2 (chateval)". The last session run
carries the ladder (`state["ladder"]`), which its report shows: the guarantee,
each tier's answer, confidence, threshold and cost, the ladder's totals, and who
decided. When no tier trusts itself the session waits for a person
(`needs_human`, no result) and the run ends with exit code 5: `resume SESSION
--decide SCORE` decides it (the tiers' answers are in the report).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from debate_tui.cli.exits import STATUS_EXIT
from debate_tui.cli.headless import play, summary_line
from debate_tui.cli.outputs import fail, print_line
from debate_tui.cli.task_args import build_task, sessions_dir, warn_stderr
from debate_tui.config import effective_config
from debate_tui.engine.condense import preflight
from debate_tui.inputs import InputError
from debate_tui.meta.climb import lowest_confidence, record_ladder, rung, step_message, tier_session, totals
from debate_tui.meta.ladder import LadderError, load_tiers
from debate_tui.report.exports import report_text
from debate_tui.safefile import SessionLock, check_target
from debate_tui.store import write_atomic, write_session
from debate_tui.textsafe import inert


def say(message: str) -> None:
    print(f"[trust] {inert(message)}", file=sys.stderr, flush=True)


def run_ladder(args: argparse.Namespace) -> int:
    try:
        config = effective_config(args)
        task = build_task(args, warn_stderr)
        tiers = load_tiers(Path(args.policy).expanduser(), task, config.model_params, warn_stderr)
        store = config.session_store(sessions_dir(args))
        report_path = (check_target(Path(args.report).expanduser(), force=args.force, flag="--report")
                       if args.report else None)
    except (InputError, LadderError) as exc:
        return fail(str(exc))
    ladder: list[dict[str, Any]] = []
    session = path = None
    for index, tier in enumerate(tiers):
        session = tier_session(tier, task)
        path = store.path_for(session.id)
        try:
            preflight(session)
            lock = SessionLock(path, session.id).acquire()
        except InputError as exc:
            return fail(str(exc))
        say(f"tier {tier.number}: {tier.label} ({', '.join(session.models)}), threshold {tier.threshold:.3g}")
        try:
            error = play(session, path, config)
        finally:
            lock.release()
        if error is not None:
            return fail(error)
        confidence = lowest_confidence(session)
        trusted = tier.trusts(confidence)
        ladder.append(rung(tier, session, confidence, trusted))
        later = tiers[index + 1] if index + 1 < len(tiers) else None
        say(step_message(tier, confidence, trusted, later, session.status))
        if session.status != "completed" or trusted:
            break
    assert session is not None and path is not None
    decided = record_ladder(session, ladder, str(args.policy), tiers)
    if decided is None and session.status == "needs_human":
        say(f"no tier trusted its answer: session {session.id} waits for a person "
            f"(debate-tui resume {session.id} --decide SCORE)")
    try:
        write_session(path, session)
        report = report_path or path.with_suffix(".md")
        write_atomic(report, report_text(session, report))
    except OSError as exc:
        return fail(f"cannot write the session or report: {exc.strerror or exc}")
    summary = json.loads(summary_line(session, session_path=str(path), report=str(report)))
    spent = totals(ladder)
    summary |= {"ladder_status": session.status, "tier": ladder[-1]["tier"] if decided else None, "tiers": ladder,
                "decided_by": decided, "ladder_calls": spent["calls"], "ladder_cost_usd": spent["cost_usd"],
                "ladder_prompt_tokens": spent["prompt_tokens"], "ladder_completion_tokens": spent["completion_tokens"]}
    print_line(json.dumps(summary))
    return STATUS_EXIT[session.status]
