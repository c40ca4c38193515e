"""`debate-tui dataset NAME`: a public data set with human judgments as batch input, JSONL on stdout."""

from __future__ import annotations

import argparse
import json
import sys

from debate_tui.meta.datasets import LOADERS, load

EXIT_BAD_INPUT = 2


def _names(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _pair(value: str) -> tuple[str, str]:
    names = _names(value)
    if len(names) != 2:
        raise argparse.ArgumentTypeError("give exactly two model folders, e.g. gpt3.5,gemini")
    return names[0], names[1]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("dataset", help="write a data set as batch input (JSONL)", description=__doc__)
    parser.add_argument("name", choices=list(LOADERS), help="the data set")
    parser.add_argument("--criteria", type=_names, metavar="A,B", help="keep only these human criteria")
    parser.add_argument("--data-dir", metavar="DIR",
                        help="another copy of the data, plain or as the package ships it "
                             "(default: $DEBATE_TUI_DATA_DIR, else the copy in the package)")
    parser.add_argument("--limit", type=int, metavar="K", help="only the first K lines")
    parser.add_argument(
        "--models", type=_pair, metavar="A,B",
        help="scaleeval only: the two model folders to pair (default gpt3.5,claude-instant)"
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 0:
        print("error: --limit must be 0 or more", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        lines = load(args.name, root=args.data_dir, criteria=args.criteria, limit=args.limit, models=args.models)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {args.name}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    out = sys.stdout
    for line in lines:
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return 0
