"""`debate-tui meta RESULTS.jsonl`: how closely batch results follow the human judgments."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from debate_tui.meta.evaluate import format_table, meta_evaluate, validate_row

EXIT_BAD_INPUT = 2


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "meta", help="correlate batch results with human judgments", description=__doc__
    )
    parser.add_argument("results", metavar="RESULTS.jsonl", help="batch results, one JSON object a line")
    parser.add_argument(
        "--level", choices=("summary", "turn"), default="summary",
        help="summary: correlate within each group, then average (default); turn: over all rows",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                        help="resamples for the 95%% intervals (0: none)")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the resampling (default 0)")
    parser.set_defaults(handler=handle)


class BadInput(Exception):
    """The results file cannot be read; the message is the one line shown to the user."""


def read_results(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSONL results file; blank lines are skipped, any other bad line is named."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {path}: {exc}") from exc
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            validate_row(row)
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            raise BadInput(f"{path}:{number}: {exc}") from exc
        rows.append(row)
    return rows


def handle(args: argparse.Namespace) -> int:
    if args.bootstrap < 0:
        print("error: --bootstrap must be 0 or more", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        rows = read_results(Path(args.results))
        result = meta_evaluate(rows, args.level, bootstrap=args.bootstrap, seed=args.seed)
    except (BadInput, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(json.dumps(result) if args.json else format_table(result, rows))
    return 0
