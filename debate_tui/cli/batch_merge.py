"""`debate-tui batch merge OUT... --out FILE`: join the results of a batch's shards, each line exactly once.

Reached through `batch` (`debate-tui batch merge ...`): `batch` itself takes
an input file as its first argument, so `main` hands `batch merge` here
before argparse sees it (an input file named `merge` is still `./merge`).
Exit codes: 0 merged, 2 a conflict or an unreadable file (one line on stderr;
nothing is written).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from debate_tui.textsafe import inert

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="debate-tui batch merge", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shards", nargs="+", metavar="OUT", help="results files of `batch --shard i/n` runs")
    parser.add_argument("--out", required=True, metavar="FILE", help="the merged results (written atomically)")
    return parser


def main(argv: list[str]) -> int:
    from debate_tui.batch.results import ResultsError, ResultsFile
    from debate_tui.batch.shards import merge_files
    from debate_tui.safefile import TargetError, check_distinct

    args = build_parser().parse_args(argv)
    paths = [Path(p).expanduser() for p in args.shards]
    out = ResultsFile(Path(args.out).expanduser())
    try:
        check_distinct({"--out": out.path}, inputs={str(path): path for path in paths})
        out.check_resumable(why="merge only replaces a results file (a previous merge)")
        merged = merge_files(paths)
        with out.locked("a merge"):
            out.rewrite(merged.rows.values())
    except (ResultsError, TargetError, OSError) as exc:
        print(f"debate-tui: error: {inert(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    items = len({key[0] for key in merged.rows})
    print(json.dumps({"files": len(paths), "items": items, "rows": len(merged.rows),
                      "duplicates": merged.duplicates, "out": str(out.path)}), flush=True)
    return EXIT_OK
