"""`debate-tui audit`: does the trust policy's guarantee still hold on blind audits?

audit POLICY.json RESULTS.jsonl --labels LABELS.jsonl [--json] [--any-labels]
    RESULTS.jsonl: the lines of `batch --policy` (or of `escalate`): each trusted
    line names its tier. LABELS.jsonl: label lines (`debate-tui labels`). Among the
    audited trusted lines, per tier and all: `audited`, `disagreements`, the observed
    `rate`, the exact one-sided binomial `p_value` of that many disagreements if the
    true rate were the policy's alpha (scipy.stats.binomtest, alternative "greater"),
    and `holds`: false when the p-value is below delta, null (with the `reason`) with
    fewer than 10 audited items. Only blind audit labels (source audit, blind true)
    count unless --any-labels is given. The last stdout line is the JSON summary:
    `tiers`, `all`, `labels_used`, `holds`.

Method and the loop it belongs to: docs/TRUST.md. Exit codes: 0 holds (or too few to
tell), 1 violated, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from debate_tui.cli.exits import Exit
from debate_tui.cli.outputs import fail
from debate_tui.textsafe import inert


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("audit", help="check a trust policy's guarantee against blind audits",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy", metavar="POLICY.json", help="the policy the results were run under")
    parser.add_argument("results", metavar="RESULTS.jsonl", help="the lines of batch --policy (or escalate)")
    parser.add_argument("--labels", required=True, metavar="LABELS.jsonl", help="label lines (debate-tui labels)")
    parser.add_argument("--any-labels", action="store_true",
                        help="count every label, not only blind audits (they lean toward the judge: see docs/TRUST.md)")
    parser.add_argument("--json", action="store_true", help="print only the JSON summary, not the table first")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from debate_tui.meta.audit import ANY, BLIND_ONLY, check, format_check, read_labels
    from debate_tui.meta.labels import LabelsError, read_rows
    from debate_tui.meta.trust import TrustError, read_jsonl, read_policy

    try:
        policy = read_policy(Path(args.policy).expanduser())
        rows = read_jsonl(Path(args.results).expanduser())
        lines = read_rows(Path(args.labels).expanduser())
    except (TrustError, LabelsError) as exc:
        return fail(str(exc))
    if not any(isinstance(r.get("tiers"), list) or r.get("status") == "trusted" for r in rows):
        return fail(f"{args.results}: no line says which tier trusted it; give the output of "
                    "batch --policy (or of escalate)")
    labels, counts = read_labels(lines, args.any_labels)
    result = check(rows, labels, policy)
    result["labels_used"] = {"file": str(args.labels), "rule": ANY if args.any_labels else BLIND_ONLY, **counts}
    if not args.json:
        print(inert(format_check(result)))
    print(json.dumps(result))
    return Exit.CHECK_FAILED if result["holds"] is False else Exit.OK
