"""`debate-tui batch merge OUT... --out FILE`: join the results of a batch's shards, each line exactly once.

Reached through `batch` (`debate-tui batch merge ...`): `batch` itself takes
an input file as its first argument, so `main` hands `batch merge` here
before argparse sees it (an input file named `merge` is still `./merge`).
Exit codes: 0 merged, 2 a conflict, an unreadable file, a file named twice or a
shard of a set missing (unless --allow-partial) (one line on stderr; nothing is written).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from debate_tui.cli.exits import Exit
from debate_tui.cli.outputs import fail


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="debate-tui batch merge", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shards", nargs="+", metavar="OUT", help="results files of `batch --shard i/n` runs")
    parser.add_argument("--out", required=True, metavar="FILE", help="the merged results (written atomically)")
    parser.add_argument("--allow-partial", action="store_true",
                        help="merge although a shard of a set (I/N, recorded on each line by `batch --shard`) is "
                             "missing; without it a missing shard is refused, naming it")
    return parser


def main(argv: list[str]) -> int:
    from debate_tui.batch.results import ResultsError, ResultsFile
    from debate_tui.batch.shards import merge_files
    from debate_tui.safefile import TargetError, check_distinct, disk_problem, write_problem

    args = build_parser().parse_args(argv)
    paths = [Path(p).expanduser() for p in args.shards]
    out = ResultsFile(Path(args.out).expanduser())
    try:
        check_distinct({"--out": out.path}, inputs={str(path): path for path in paths})
        _check_named_once(paths)
        out.check_resumable(why="merge only replaces a results file (a previous merge)")
        merged = merge_files(paths)
        missing = merged.missing_shards()
        if missing and not args.allow_partial:
            raise ResultsError(f"shard {', '.join(missing)} missing: no file given holds its lines; give its results "
                               "file, or --allow-partial to merge the shards there are; nothing written")
        with out.locked("a merge"):
            out.rewrite(merged.rows.values())
    except (ResultsError, TargetError, OSError) as exc:
        full = disk_problem(exc)
        said = write_problem(full, out.path, "or pass --out elsewhere") if full is not None else str(exc)
        return fail(said)
    items = len({key[0] for key in merged.rows})
    summary = {"files": len(paths), "items": items, "rows": len(merged.rows), "duplicates": merged.duplicates,
               "out": str(out.path)}
    if missing:
        summary["missing_shards"] = missing
    print(json.dumps(summary), flush=True)
    return Exit.OK


def _check_named_once(paths: list[Path]) -> None:
    """A file named twice (`merge R1 R2 R1`) is most often a typo for the shard meant: refused, naming it."""
    from debate_tui.batch.results import ResultsError

    seen: dict[Path, Path] = {}
    for path in paths:
        same = path.resolve() if path.exists() else path.absolute()
        if same in seen:
            named = str(path) if str(path) == str(seen[same]) else f"{seen[same]} and {path}"
            raise ResultsError(f"{named} named twice (the same file); was another shard meant? nothing written")
        seen[same] = path
