"""`debate-tui labels`: every person's answer in the saved sessions, as a labels file.

labels [--sessions-dir DIR] [RESULTS.jsonl ...] --out LABELS.jsonl [--force] [--json]
    Reads every interactive session in the sessions directory, and the sessions the
    results files name (a batch item's session: its line gives the item's id). Each
    override, decision, review answer and blind audit answer becomes one line: `id`,
    `criterion`, `human` or `human_verdict`, `source` (override, decision, review,
    audit), `session`, `decided_at`, `blind`, and what the judge had answered (`judge`,
    `judge_confidence`), `who`, `where`. `meta --labels`, `calibrate --labels`,
    `compare --labels` and `audit --labels` read it as it is. Two answers on one (id,
    criterion): the later wins (counted as superseded). The last stdout line is a JSON
    summary: `labels`, a count per source, `blind`, `superseded`, `sessions`, `out`.

Which labels may be used for what: docs/TRUST.md. Exit codes: 0 written, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from debate_tui.cli.common_flags import add_sessions_dir
from debate_tui.cli.outputs import fail
from debate_tui.domain import Session
from debate_tui.textsafe import inert


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("labels", help="every person's decision in the sessions, as a labels file",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_sessions_dir(parser)
    parser.add_argument("results", nargs="*", metavar="RESULTS.jsonl",
                        help="batch results whose lines name the sessions of their items (and so their ids)")
    parser.add_argument("--out", required=True, metavar="LABELS.jsonl", help="where to write the label lines")
    parser.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    parser.add_argument("--json", action="store_true", help="print only the JSON summary, not the counts first")
    parser.set_defaults(handler=handle)


def item_ids(paths: list[str]) -> dict[str, str]:
    """Session id -> item id, from every line of the results files (a ladder line's tiers included)."""
    from debate_tui.batch.results import ResultsFile

    ids: dict[str, str] = {}
    for name in paths:
        results = ResultsFile(Path(name).expanduser())
        if not results.exists():
            raise ValueError(f"{name}: no such results file")
        for row in results.read().rows:
            sessions = [row.get("session"), *(t.get("session") for t in row.get("tiers") or [] if isinstance(t, dict))]
            ids |= {s: str(row.get("id")) for s in sessions if isinstance(s, str)}
    return ids


def sessions(args: argparse.Namespace, named: list[str], skipped: list[str]) -> Iterator[Session]:
    """The interactive sessions of the directory, then the batch sessions the results name; a file that
    cannot be read is noted in `skipped`, not fatal."""
    from debate_tui.cli.task_args import sessions_dir
    from debate_tui.config import effective_config
    from debate_tui.store import SessionFileError

    store = effective_config(args).session_store(sessions_dir(args))
    files = sorted(store.root.glob("*.json"))
    refs = [str(p) for p in files if not p.name.startswith("batch-")]
    refs += [s for s in named if s.startswith("batch-")]
    unnamed = sum(p.name.startswith("batch-") and p.stem not in set(named) for p in files)
    if unnamed:  # a batch item's session does not know its item's id: only its results line does
        print(f"debate-tui: note: {unnamed} batch session(s) in {inert(str(store.root))} are not named by the results "
              "files given; their decisions are left out (give their RESULTS.jsonl)", file=sys.stderr)
    for ref in dict.fromkeys(refs):
        try:
            yield store.load(ref)
        except (SessionFileError, OSError, ValueError) as exc:
            skipped.append(f"{ref}: {exc}")


def handle(args: argparse.Namespace) -> int:
    from debate_tui.batch.results import ResultsError
    from debate_tui.meta.decisions import export
    from debate_tui.safefile import TargetError, check_distinct, check_target, write_atomic, write_problem

    try:
        out = check_target(Path(args.out).expanduser(), force=args.force, flag="--out")
        check_distinct({"--out": out}, inputs={f"input {n}": Path(p).expanduser()
                                               for n, p in enumerate(args.results, start=1)})
        ids = item_ids(args.results)
    except (TargetError, ResultsError, ValueError) as exc:
        return fail(str(exc))
    skipped: list[str] = []
    read = list(sessions(args, list(ids), skipped))
    labels = export(read, ids)
    try:
        write_atomic(out, "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in labels.lines))
    except OSError as exc:
        return fail(write_problem(exc, out, "or pass --out elsewhere"))
    for problem in skipped:
        print(f"debate-tui: note: skipped {inert(problem)}", file=sys.stderr)
    summary = {**labels.summary(), "sessions": len(read), "out": str(out)}
    if not args.json:
        counts = ", ".join(f"{summary[s]} {s}" for s in ("override", "decision", "review", "audit"))
        print(inert(f"{summary['labels']} labels from {len(read)} sessions ({counts}; {summary['blind']} blind, "
                    f"{summary['superseded']} superseded by a later answer) -> {out}"))
    print(json.dumps(summary))
    return 0
