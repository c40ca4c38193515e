"""`debate-tui dataset NAME|FILE`: a public data set, or your own labelled CSV/JSONL file, as batch input
(JSONL on stdout).

With a file, name its columns: --text (default "text"), --text-b, --source,
--id (default: the row number, from 1), --group, --human CRITERION=COL
(repeatable) and --human-verdict (1, 2 or 0). An empty label cell is no
label; a bad file stops with exit code 2 and a one-line reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from debate_tui.cli.exits import Exit
from debate_tui.meta.datasets import LOADERS, keep_criteria, load, whole_groups
from debate_tui.meta.labels import Columns, LabelsError, is_table, load_table

FILE_FLAGS = ("text", "text_b", "source", "id", "human", "human_verdict", "group")


def _names(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _pair(value: str) -> tuple[str, str]:
    names = _names(value)
    if len(names) != 2:
        raise argparse.ArgumentTypeError("give exactly two model folders, e.g. gpt3.5,gemini")
    return names[0], names[1]


def human_column(value: str) -> tuple[str, str]:
    criterion, sep, column = value.partition("=")
    if not sep or not criterion.strip() or not column.strip():
        raise argparse.ArgumentTypeError(f"give CRITERION=COLUMN, e.g. coherence=coh_score, not {value!r}")
    return criterion.strip(), column.strip()


def add_column_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that name a labelled file's columns (shared with `meta --labels`)."""
    parser.add_argument("--text", metavar="COL", help="file only: the column of the text to judge (default: text)")
    parser.add_argument("--text-b", metavar="COL", help="file only: the second text of a pair")
    parser.add_argument("--source", metavar="COL", help="file only: the article, dialogue or question")
    parser.add_argument("--id", metavar="COL", help="file only: the id column (default: the row number, from 1)")
    parser.add_argument("--human", type=human_column, action="append", metavar="CRITERION=COL",
                        help="file only: a column of human scores for a criterion (repeatable)")
    parser.add_argument("--human-verdict", metavar="COL",
                        help="file only: a column of human verdicts, 1 (text), 2 (text_b) or 0 (tie)")
    parser.add_argument("--group", metavar="COL",
                        help="file only: the document or dialogue a text belongs to (summary-level correlation)")


def columns_of(args: argparse.Namespace, default_text: str | None = "text") -> Columns:
    return Columns(
        text=args.text or default_text, text_b=args.text_b, source=args.source, id=args.id,
        human=dict(args.human or []), human_verdict=args.human_verdict, group=args.group,
    )


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("dataset", help="write a data set or your labelled file as batch input (JSONL)",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", metavar="NAME|FILE",
                        help=f"a data set ({', '.join(LOADERS)}) or a .csv, .tsv or .jsonl file")
    parser.add_argument("--criteria", type=_names, metavar="A,B", help="keep only these human criteria")
    parser.add_argument("--data-dir", metavar="DIR",
                        help="another copy of the data, plain or as the package ships it "
                             "(default: $DEBATE_TUI_DATA_DIR, else the copy in the package)")
    parser.add_argument("--limit", type=int, metavar="K",
                        help="about K lines in whole groups: groups are taken in order until K lines are reached "
                             "(rounded up to a whole group, e.g. summeval --limit 36: 3 articles x 12 summaries), "
                             "so summary-level correlation has whole groups; a line without a group is its own")
    parser.add_argument(
        "--models", type=_pair, metavar="A,B",
        help="scaleeval only: the two model folders to pair (default gpt3.5,claude-instant)"
    )
    add_column_flags(parser)
    parser.set_defaults(handler=handle)


def _from_file(args: argparse.Namespace) -> list[dict]:
    if args.data_dir is not None or args.models is not None:
        raise ValueError("--data-dir and --models apply to the built-in data sets, not to a file")
    lines = load_table(Path(args.name), columns_of(args))
    if args.criteria is not None:
        lines = keep_criteria(lines, args.criteria)
    return lines if args.limit is None else whole_groups(lines, args.limit)


def handle(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 0:
        print("error: --limit must be 0 or more", file=sys.stderr)
        return Exit.BAD_INPUT
    try:
        if args.name in LOADERS:
            if given := [f"--{f.replace('_', '-')}" for f in FILE_FLAGS if getattr(args, f) is not None]:
                raise ValueError(f"{', '.join(given)} name columns of a file; {args.name} is a built-in data set")
            lines = load(args.name, root=args.data_dir, criteria=args.criteria, limit=args.limit, models=args.models)
        elif is_table(args.name) or Path(args.name).exists():
            lines = _from_file(args)
        else:
            raise ValueError(f"unknown data set; known: {', '.join(LOADERS)}, or a .csv, .tsv or .jsonl file")
    except LabelsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return Exit.BAD_INPUT
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {args.name}: {exc}", file=sys.stderr)
        return Exit.BAD_INPUT
    out = sys.stdout
    for line in lines:
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return 0
