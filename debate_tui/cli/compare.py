"""`debate-tui compare A B`: two judgments side by side, with paired statistics.

compare A.jsonl B.jsonl [--labels FILE] [--tolerance T] [--bootstrap N] [--seed S] [--json] [--html FILE] [--tui]
    Two results files (batch or escalate output, or any JSONL in the form calibrate
    reads), paired by (id, criterion): B - A on the scores (paired bootstrap, Wilcoxon),
    the verdicts that flipped, agreement with people (exact McNemar) and cost, then the
    items that changed most. --fail-if-worse exits 1 when B agrees with people less than
    A (the interval of the difference wholly below 0), for CI. --tui lists the changed items
    in the terminal; Enter on one opens its two sessions side by side.

compare SESSION_A SESSION_B [--tui]
    Two sessions (ids in the sessions directory, or session files): the turns they share,
    the scores per criterion, the verdicts, and the errors found by both, by A only, by B only.
    --tui shows the two debates side by side, rounds aligned, where they part marked.

A file whose name ends in .jsonl or .ndjson is a results file; anything else is a session.
The last stdout line is a JSON summary (with --json the only line). See docs/compare.md.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from debate_tui.cli.common_flags import add_resampling, add_sessions_dir
from debate_tui.cli.exits import Exit
from debate_tui.cli.outputs import fail
from debate_tui.domain import AGREE_TOLERANCE
from debate_tui.meta.stats import check_bootstrap
from debate_tui.textsafe import inert_json, inert_line

if TYPE_CHECKING:
    from debate_tui.meta.compare import ResultsComparison
    from debate_tui.meta.trust import Judgment, Key
    from debate_tui.store import SessionStore
RESULTS_SUFFIXES = (".jsonl", ".ndjson")
NAMED = 5
"""Keys of one side only named on stderr (the JSON counts them all)."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("compare", help="two results files or two sessions side by side",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", metavar="A", help="a results file (.jsonl), or a session id or file")
    parser.add_argument("b", metavar="B", help="the same kind as A: what A is compared with (B - A)")
    parser.add_argument("--labels", metavar="FILE",
                        help="results only: human labels in a .csv, .tsv or .jsonl file in `dataset` form, joined "
                             "by id into both files (as meta --labels)")
    parser.add_argument("--tolerance", type=float, default=AGREE_TOLERANCE, metavar="T",
                        help="a score agrees with a label within T, and has changed when it moved by more than T, "
                             f"in the criterion's units (default {AGREE_TOLERANCE:g}, as calibrate)")
    add_resampling(parser)
    parser.add_argument("--json", action="store_true", help="print only the JSON summary line")
    parser.add_argument("--html", metavar="FILE.html",
                        help="results only: also write one self-contained HTML page: the summary, A against B "
                             "per item (inline SVG) and the changed items")
    parser.add_argument("--force", action="store_true", help="overwrite the --html file if it exists")
    parser.add_argument("--fail-if-worse", action="store_true",
                        help="results only: exit 1 when B agrees with people less than A (the 95%% interval of "
                             "B - A wholly below 0), else 0; needs labels")
    parser.add_argument("--tui", action="store_true",
                        help="show it in the terminal instead of printing: two sessions side by side, or the "
                             "changed items of two results files (Enter opens an item's two sessions)")
    add_sessions_dir(parser)
    parser.set_defaults(handler=handle)


def is_results(ref: str) -> bool:
    return Path(ref).suffix.lower() in RESULTS_SUFFIXES


def handle(args: argparse.Namespace) -> int:
    kinds = is_results(args.a), is_results(args.b)
    if kinds[0] != kinds[1]:
        results, session = (args.a, args.b) if kinds[0] else (args.b, args.a)
        return fail(f"compare takes two results files or two sessions, not one of each: {results} is a results "
                     f"file, {session} a session")
    if not math.isfinite(args.tolerance) or args.tolerance < 0:
        return fail("--tolerance must be a number, 0 or more")
    return handle_results(args) if kinds[0] else handle_sessions(args)


# ----- two results files --------------------------------------------------------------------------------------

def _side(path: str, labels: str | None) -> dict[Key, Judgment]:
    """One file's judgments by key, labels joined in; BadInput, LabelsError or TrustError name what is wrong."""
    from debate_tui.cli.meta import numbered_results, with_labels
    from debate_tui.meta.compare import by_key

    numbered = numbered_results(Path(path))
    if labels is None:
        return by_key(numbered, path)
    joined = with_labels([row for _, row in numbered], labels, where=path)
    return by_key([(number, row) for (number, _), row in zip(numbered, joined, strict=True)], path)


def _named(keys: list[Key]) -> str:
    shown = ", ".join(repr(i) + (f" ({c})" if c else "") for i, c in keys[:NAMED])
    return shown + (f" and {len(keys) - NAMED} more" if len(keys) > NAMED else "")


def handle_results(args: argparse.Namespace) -> int:
    from debate_tui.cli.meta import BadInput
    from debate_tui.meta.compare import compare_results
    from debate_tui.meta.labels import LabelsError
    from debate_tui.meta.trust import TrustError
    from debate_tui.safefile import TargetError, check_distinct, check_target

    try:
        check_bootstrap(args.bootstrap)
    except ValueError as exc:
        return fail(str(exc))
    if args.fail_if_worse and args.bootstrap == 0:
        return fail("--fail-if-worse needs the bootstrap interval: give --bootstrap N with N > 0")
    try:
        html = None
        if args.html is not None:
            html = check_target(Path(args.html).expanduser(), force=args.force, flag="--html")
            inputs = {"A": Path(args.a), "B": Path(args.b)} | ({"--labels": Path(args.labels)} if args.labels else {})
            check_distinct({"--html": html}, inputs=inputs)
        a, b = _side(args.a, args.labels), _side(args.b, args.labels)
    except (BadInput, LabelsError, TrustError, TargetError) as exc:
        return fail(str(exc))
    comparison = compare_results(a, b, tolerance=args.tolerance, bootstrap=args.bootstrap, seed=args.seed)
    if not comparison.pairs:
        return fail(f"no (id, criterion) is in both {args.a} ({len(a)} of them) and {args.b} ({len(b)}): "
                     "nothing to compare")
    for keys, path in ((comparison.only_a, args.a), (comparison.only_b, args.b)):
        if keys:
            print(inert_line(f"note: {len(keys)} (id, criterion) only in {path}: {_named(keys)}"), file=sys.stderr)
    if args.fail_if_worse and comparison.summary["agreement"] is None:
        return fail("--fail-if-worse needs labels: no pair has a human label (give them with the results, or "
                     "--labels FILE)")
    if html is not None and (failed := _write_html(args, html, comparison)) is not None:
        return failed
    if args.tui:
        from debate_tui.ui.compare_app import CompareApp
        from debate_tui.ui.screens.changed_items import ChangedItemsScreen

        title = (f"changed items: A = {args.a}, B = {args.b} "
                 f"({len(comparison.changed)} of {len(comparison.pairs)} pairs)")
        CompareApp(ChangedItemsScreen(title, comparison.changed, _store(args))).run()
        return Exit.CHECK_FAILED if args.fail_if_worse and comparison.summary["worse"] else 0
    if not args.json:
        from debate_tui.meta.compare_text import format_results

        print(format_results(comparison, args.a, args.b, args.tolerance))
    print(inert_json(json.dumps(comparison.summary)), flush=True)
    return Exit.CHECK_FAILED if args.fail_if_worse and comparison.summary["worse"] else 0


def _write_html(args: argparse.Namespace, out: Path, comparison: ResultsComparison) -> int | None:
    from debate_tui.meta.html import render_compare_html
    from debate_tui.safefile import write_atomic, write_problem

    try:
        write_atomic(out, render_compare_html(comparison, args.a, args.b, args.tolerance))
    except OSError as exc:
        return fail(write_problem(exc, out, "or pass --html elsewhere"))
    print(f"wrote {out}", file=sys.stderr)
    return None


# ----- two sessions -------------------------------------------------------------------------------------------

RESULTS_ONLY = ("labels", "html", "fail_if_worse")


def _store(args: argparse.Namespace) -> SessionStore:
    """The sessions directory as every command finds it (--sessions-dir, else the configuration's)."""
    from debate_tui.config import effective_config

    return effective_config(args).session_store(Path(args.sessions_dir).expanduser() if args.sessions_dir else None)


def handle_sessions(args: argparse.Namespace) -> int:
    from debate_tui.report.compare import compare_sessions, format_sessions
    from debate_tui.store import SessionFileError

    if given := [f"--{name.replace('_', '-')}" for name in RESULTS_ONLY if getattr(args, name)]:
        return fail(f"{', '.join(given)} compare results files; {args.a} and {args.b} are sessions")
    store = _store(args)
    try:
        a, b = store.load(args.a), store.load(args.b)
    except SessionFileError as exc:
        return fail(str(exc))
    comparison = compare_sessions(a, b)
    if args.tui:
        from debate_tui.ui.compare_app import CompareApp
        from debate_tui.ui.screens.compare import CompareScreen

        CompareApp(CompareScreen(comparison)).run()
        return 0
    if not args.json:
        print(format_sessions(comparison))
    print(inert_json(json.dumps(comparison.data())), flush=True)
    return 0
