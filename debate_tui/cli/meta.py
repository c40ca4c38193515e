"""`debate-tui meta RESULTS.jsonl`: how closely batch results follow the human judgments."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from debate_tui.cli.common_flags import add_resampling
from debate_tui.cli.dataset import FILE_FLAGS, add_column_flags, columns_of
from debate_tui.cli.exits import Exit
from debate_tui.inputs import InputError
from debate_tui.meta.evaluate import format_table, meta_evaluate, validate_row
from debate_tui.meta.labels import Columns, LabelsError, join, load_labels
from debate_tui.meta.plots import PlotError, plot_data, write_plot
from debate_tui.meta.stats import check_bootstrap
from debate_tui.meta.trust import format_risk_coverage, risk_coverage
from debate_tui.readfile import MissingFile, jsonl_lines, jsonl_value, read_text
from debate_tui.safefile import TargetError, check_target, write_atomic, write_problem
from debate_tui.textsafe import inert


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
    add_resampling(parser)
    parser.add_argument(
        "--labels", metavar="FILE",
        help="human labels in a separate .csv, .tsv or .jsonl file, joined with the results by id: "
             "`dataset` output as it is, or any file with the column flags below (--id names the id column)",
    )
    parser.add_argument(
        "--plot", metavar="FILE.svg|png",
        help="also draw judge against human (or the verdicts' confusion matrix), calibration and cost against "
             "agreement into this file (needs matplotlib: pip install 'debate-tui[plot]')",
    )
    parser.add_argument("--html", metavar="FILE.html",
                        help="also write one self-contained HTML page: the tables, the plots (inline SVG, no "
                             "extra needed), the vote and cost tables, and the text meta prints")
    parser.add_argument("--force", action="store_true", help="overwrite the --html file if it exists")
    parser.add_argument("--tui", action="store_true",
                        help="open the meta screen: the table, judge against human, calibration and cost against "
                             "agreement, drawn in the terminal (keys 1-4 switch, q quits)")
    trust = parser.add_argument_group("risk against coverage")
    trust.add_argument("--risk-coverage", action="store_true",
                       help="also show, per tier (or protocol), the agreement among the lines trusted at each "
                            "confidence threshold against their share (see docs/TRUST.md)")
    trust.add_argument("--alpha", type=float, default=0.2, metavar="A",
                       help="with --risk-coverage: mark agreement of at least 1 - A (default 0.2)")
    trust.add_argument("--tolerance", type=float, default=0.5, metavar="T",
                       help="with --risk-coverage: a score agrees with a label within T (default 0.5)")
    add_column_flags(parser)
    parser.set_defaults(handler=handle)


class BadInput(Exception):
    """The results file cannot be read; the message is the one line shown to the user."""


def read_results(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSONL results file; blank lines are skipped, any other bad line is named."""
    return [row for _, row in numbered_results(path)]


def numbered_results(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, row) of every row of a results file, so that a later check can name the line too."""
    try:
        text = read_text(path, "results")  # bounded, never a device or FIFO
    except MissingFile:
        raise BadInput(f"cannot read {path}: no such file") from None
    except InputError as exc:
        raise BadInput(str(exc)) from None
    rows = []
    for number, line in jsonl_lines(text):
        try:
            row = jsonl_value(line)
            validate_row(row)
        except ValueError as exc:  # readfile's FileError is a ValueError
            raise BadInput(f"{path}:{number}: {exc}") from None
        rows.append((number, row))
    return rows


def with_labels(rows: list[dict[str, Any]], path: str, columns: Columns | None = None,
                where: str = "results") -> list[dict[str, Any]]:
    """The results with the labels file's human judgments put in by id (`columns` None: a file in `dataset` form);
    no shared id at all is an error. `where` names the results in the note about rows left without labels."""
    labels = load_labels(path, columns)
    joined, matched = join(rows, labels)
    if rows and not matched:
        sample = ", ".join(repr(str(r.get("id"))) for r in rows[:3])
        raise BadInput(f"{path}: no id of the {where} ({sample}, ...) is in the labels file; "
                       "name its id column with --id")
    if matched < len(rows):
        print(f"note: {len(rows) - matched} of {len(rows)} {where} rows have no labels in {path}", file=sys.stderr)
    return joined


def labels_columns(args: argparse.Namespace) -> Columns | None:
    """The labels file's columns as the flags name them; None when no column flag was given (`dataset` form)."""
    return columns_of(args, default_text=None) if any(getattr(args, f) is not None for f in FILE_FLAGS) else None


def printed_table(args: argparse.Namespace, result: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """What meta prints (and its HTML page quotes): the tables, with the risk-coverage one when asked."""
    table = format_table(result, rows)
    if args.risk_coverage:
        table += "\n\n" + format_risk_coverage(result["risk_coverage"]["curves"], args.alpha)
    return table


def write_html(args: argparse.Namespace, result: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    from debate_tui.meta.html import render_meta_html

    out = check_target(Path(args.html).expanduser(), force=args.force, flag="--html")
    page = render_meta_html(f"meta: {Path(args.results).name} ({args.level} level)", result,
                            printed_table(args, result, rows), plot_data(rows, result))
    try:
        write_atomic(out, page)
    except OSError as exc:
        raise BadInput(write_problem(exc, out, "or pass --html elsewhere")) from None
    print(f"wrote {out}", file=sys.stderr)


def handle(args: argparse.Namespace) -> int:
    try:
        check_bootstrap(args.bootstrap)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return Exit.BAD_INPUT
    try:
        rows = read_results(Path(args.results))
        if args.labels is not None:
            rows = with_labels(rows, args.labels, labels_columns(args))
        elif given := [f"--{f.replace('_', '-')}" for f in FILE_FLAGS if getattr(args, f) is not None]:
            raise ValueError(f"{', '.join(given)} name columns of a --labels file; give --labels FILE")
        result = meta_evaluate(rows, args.level, bootstrap=args.bootstrap, seed=args.seed)
        if args.risk_coverage:
            if not 0 < args.alpha < 1 or not 0 <= args.tolerance < math.inf:  # NaN fails both comparisons
                raise ValueError("--alpha must be between 0 and 1 and --tolerance a finite number, 0 or more")
            result["risk_coverage"] = {"alpha": args.alpha, "tolerance": args.tolerance,
                                       "curves": risk_coverage(rows, args.tolerance)}
        if args.plot is not None:
            write_plot(Path(args.plot), plot_data(rows, result))
        if args.html is not None:
            write_html(args, result, rows)
    except (BadInput, LabelsError, PlotError, ValueError, TargetError) as exc:
        print(f"error: {inert(str(exc))}", file=sys.stderr)
        return Exit.BAD_INPUT
    table = printed_table(args, result, rows)
    if args.tui:
        from debate_tui.ui.meta_view import MetaApp

        MetaApp(f"meta: {args.results} ({args.level} level)", table, plot_data(rows, result)).run()
        return 0
    print(json.dumps(result) if args.json else table)
    return 0
