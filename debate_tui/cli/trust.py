"""`debate-tui calibrate` and `debate-tui escalate`: a confidence threshold per judge, with a guarantee.

calibrate TIER.jsonl [TIER.jsonl ...] --alpha A --delta D --out POLICY.json
    The files are the tiers, cheapest first: batch results, or any JSONL of judgments
    with `id`, `criterion`?, `predicted` or `predicted_verdict`, `confidence`, and the
    label as `human` / `human_verdict` (or from --labels FILE, joined by id). Per tier,
    fixed-sequence testing from the highest confidence down finds the lowest threshold
    whose trusted items disagree with people at most alpha of the time, with probability
    at least 1 - delta (exact Clopper-Pearson bound; each candidate with at least
    --min-trusted items). Tier k is calibrated on what tiers 1..k-1 did not trust.

escalate POLICY.json TIER.jsonl [TIER.jsonl ...] --out DECISIONS.jsonl
    Applies a policy to recorded judgments: per line the first tier that trusts itself,
    else "needs_human". The last stdout line is a JSON summary.

Method, sources and a worked example: docs/TRUST.md. Exit codes: 0 done, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debate_tui.cli.common_flags import add_sessions_dir
from debate_tui.cli.outputs import fail

if TYPE_CHECKING:
    from debate_tui.meta.trust import Judgment



def add_parser(subparsers: argparse._SubParsersAction) -> None:
    calibrate = subparsers.add_parser("calibrate", help="a confidence threshold per judge, with a guarantee",
                                      description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    calibrate.add_argument("tiers", nargs="+", metavar="TIER.jsonl", help="each tier's judgments, cheapest first")
    calibrate.add_argument("--alpha", type=float, required=True, metavar="A",
                           help="the disagreement with people allowed among trusted items (e.g. 0.15)")
    calibrate.add_argument("--delta", type=float, required=True, metavar="D",
                           help="the chance the guarantee may fail (e.g. 0.1)")
    _shared(calibrate)
    calibrate.add_argument("--min-trusted", type=int, default=30, metavar="N",
                           help="fewest items at or above a candidate threshold (default 30)")
    calibrate.add_argument("--out", required=True, metavar="POLICY.json", help="where to write the policy")
    calibrate.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    calibrate.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    add_sessions_dir(calibrate)  # where the tiers' sessions are, to record each tier's task settings
    calibrate.set_defaults(handler=handle_calibrate)
    escalate = subparsers.add_parser("escalate", help="apply a trust policy to recorded judgments",
                                     description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    escalate.add_argument("policy", metavar="POLICY.json", help="a policy written by calibrate")
    escalate.add_argument("tiers", nargs="+", metavar="TIER.jsonl", help="each tier's judgments, in the policy's order")
    escalate.add_argument("--labels", metavar="FILE", help="human labels joined by id, to report agreement")
    escalate.add_argument("--out", required=True, metavar="DECISIONS.jsonl", help="one line per (id, criterion)")
    escalate.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    escalate.set_defaults(handler=handle_escalate)


def _shared(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tolerance", type=float, default=0.5, metavar="T",
                        help="a score agrees with a label within T, in the criterion's units (default 0.5)")
    parser.add_argument("--labels", metavar="FILE",
                        help="human labels in a .csv, .tsv or .jsonl file in `dataset` form, or the label lines "
                             "of `debate-tui labels`, joined by id")


def _output(args: argparse.Namespace, *inputs: str) -> Path:
    """--out, checked before anything is read: not replaced without --force, never one of the inputs."""
    from debate_tui.safefile import check_distinct, check_target

    out = check_target(Path(args.out).expanduser(), force=args.force, flag="--out")
    named = {f"input {number}": Path(path).expanduser() for number, path in enumerate(inputs, start=1)}
    if args.labels is not None:
        named["--labels"] = Path(args.labels).expanduser()
    check_distinct({"--out": out}, inputs=named)
    return out


def _write(out: Path, text: str) -> int | None:
    """Write the command's one output; the exit code of a failure (one line), None when written."""
    from debate_tui.safefile import write_atomic, write_problem

    try:
        write_atomic(out, text)
    except OSError as exc:
        return fail(write_problem(exc, out, "or pass --out elsewhere"))
    return None


def read_tiers(paths: list[str], labels: str | None) -> list[list[Judgment]]:
    """Every tier's lines, labels joined in, as judgments keyed alike across tiers."""
    from debate_tui.meta.labels import LabelsError, join, load_labels
    from debate_tui.meta.trust import joined, read_jsonl

    rows = [read_jsonl(Path(p)) for p in paths]
    if labels is not None:
        try:
            by_id = load_labels(labels, None)
        except LabelsError as exc:
            raise ValueError(str(exc)) from None
        rows = [join(tier, by_id)[0] for tier in rows]
    return joined(rows, paths)


def handle_calibrate(args: argparse.Namespace) -> int:
    from debate_tui.meta.trust import TrustError, calibrate, format_calibration, policy_of
    from debate_tui.safefile import TargetError

    if not 0 < args.alpha < 1 or not 0 < args.delta < 1:
        return fail("--alpha and --delta must be between 0 and 1")
    if not 0 <= args.tolerance < math.inf or args.min_trusted < 1:  # NaN fails both comparisons
        return fail("--tolerance must be a finite number, 0 or more, and --min-trusted at least 1")
    try:
        out = _output(args, *args.tiers)
        tiers = read_tiers(args.tiers, args.labels)
        fits = calibrate(tiers, args.alpha, args.delta, args.tolerance, args.min_trusted)
    except (TrustError, TargetError, ValueError) as exc:
        return fail(str(exc))
    tasks = [task_settings(tier, args) for tier in tiers]
    policy = policy_of(fits, tiers, args.tiers, tasks, alpha=args.alpha, delta=args.delta,
                       tolerance=args.tolerance, min_trusted=args.min_trusted)
    if (failed := _write(out, json.dumps(policy, indent=2, ensure_ascii=False) + "\n")) is not None:
        return failed
    print(json.dumps(policy) if args.json else format_calibration(policy))
    return 0


def task_settings(tier: list[Judgment], args: argparse.Namespace) -> dict[str, Any] | None:
    """The tier's task as its first session recorded it (protocol, options, criteria, agents), so the tier can
    be run live; None for judgments recorded elsewhere or whose sessions are not here."""
    from debate_tui.cli.task_args import sessions_dir
    from debate_tui.config import load_config
    from debate_tui.store import SessionFileError

    session_id = next((j.row["session"] for j in tier if isinstance(j.row.get("session"), str)), None)
    if session_id is None:
        return None
    try:
        store = load_config().session_store(sessions_dir(args))
        session = store.load(session_id)
    except (SessionFileError, OSError, ValueError):
        print(f"note: session {session_id} of these results is not in the sessions directory (--sessions-dir): "
              "no task settings recorded for this tier, so it cannot be run live", file=sys.stderr)
        return None
    options = {k: v for k, v in session.options.items() if k != "seed"}
    return {"protocol": session.protocol, "options": options,
            "criteria": [c.model_dump(mode="json") for c in session.criteria],
            "agents": [a.model_dump(mode="json", exclude={"context_window"}) for a in session.agents],
            "spec": None if session.spec is None else session.spec.data()}


def handle_escalate(args: argparse.Namespace) -> int:
    from debate_tui.meta.trust import TrustError, decision_lines, escalate, escalation_summary, read_policy
    from debate_tui.safefile import TargetError

    try:
        out = _output(args, args.policy, *args.tiers)
        policy = read_policy(Path(args.policy))
        if len(policy["tiers"]) != len(args.tiers):
            raise TrustError(f"{args.policy} has {len(policy['tiers'])} tiers; {len(args.tiers)} files were given")
        tiers = read_tiers(args.tiers, args.labels)
    except (TrustError, TargetError, ValueError) as exc:
        return fail(str(exc))
    decisions = escalate(tiers, [t["threshold"] for t in policy["tiers"]])
    lines = decision_lines(tiers, decisions)
    if (failed := _write(out, "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))) is not None:
        return failed
    summary = escalation_summary(tiers, decisions, float(policy["tolerance"]))
    print(json.dumps(summary), flush=True)
    return 0
