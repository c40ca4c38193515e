"""Issue 22's figures: a large live batch against raw litellm, its peak RSS, and Ray workers 2 vs 1.

    python -m benchmarks.batch_scale --items 100000            # batch vs raw litellm, RSS vs 1,000 items
    python -m benchmarks.batch_scale --items 2000 --ray HOST:PORT   # also --ray-tasks 1 vs 2 on that cluster

Not part of `python -m benchmarks` (a 100,000-item pair takes about an hour on a
2-core machine). The fake server runs in its own process (latency `--latency`);
`debate-tui batch` (protocol single: one call an item) and the raw baseline (the
same number of `litellm.acompletion` calls, same concurrency, `benchmarks.batch
--raw`) run one after the other in children; items/s of the batch come from its
own summary (after litellm's import, which the baseline skips too), peak RSS from
wait4 for that child alone. With --ray the cluster's workers must have
OPENAI_API_KEY set (any value: the fake server ignores it) and reach 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchmarks.batch import REPLY, MeasuredPopen, batch_command, write_items
from benchmarks.common import ROOT, fake_server, quiet_env, run_child, work_dir

RSS_BASE = 1000


def batch(argv: list[str], env: dict[str, str]) -> tuple[dict, float]:
    """The summary and the peak RSS (MiB) of one batch command."""
    child = MeasuredPopen(argv, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = child.communicate()
    if child.returncode != 0:
        raise RuntimeError(f"batch failed ({child.returncode}): {stderr[-2000:]}")
    return json.loads(stdout.strip().splitlines()[-1]), child.peak_rss_kib / 1024


def judgments(path: Path) -> dict[tuple[str, str], object]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {(r["id"], r["criterion"]): (r["status"], r["predicted"]) for r in rows}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.batch_scale")
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.01, help="fake server's seconds before replying")
    parser.add_argument("--ray", metavar="ADDRESS", help="also time --ray-tasks 1 and 2 on this cluster")
    parser.add_argument("--skip-live", action="store_true", help="only the Ray comparison")
    args = parser.parse_args(argv)
    report: dict[str, object] = {"items": args.items, "concurrency": args.concurrency, "latency_s": args.latency}
    with work_dir("scale") as work, fake_server(latency=args.latency, reply=REPLY) as url:
        env = quiet_env(work)
        items = write_items(work / "items.jsonl", args.items)
        if not args.skip_live:
            small = write_items(work / "small.jsonl", RSS_BASE)
            base, base_rss = batch(batch_command(small, work, url, "small.jsonl", concurrency=args.concurrency), env)
            big, big_rss = batch(batch_command(items, work, url, "big.jsonl", concurrency=args.concurrency), env)
            raw = run_child("batch", ["--raw", url, str(args.items), str(args.concurrency), "cold"], env,
                            timeout=None)  # type: ignore[arg-type]
            assert big["done"] == args.items and big["calls"] == args.items, big
            ours, theirs = args.items / big["elapsed_s"], raw["items"] / raw["elapsed_s"]
            report |= {"batch_items_per_s": round(ours, 1), "raw_litellm_items_per_s": round(theirs, 1),
                       "ratio": round(ours / theirs, 3), "batch_elapsed_s": big["elapsed_s"],
                       "raw_elapsed_s": round(raw["elapsed_s"], 1), f"peak_rss_mib_{args.items}": round(big_rss),
                       f"peak_rss_mib_{RSS_BASE}": round(base_rss), "rss_growth": round(big_rss / base_rss, 3),
                       f"items_per_s_{RSS_BASE}": round(RSS_BASE / base["elapsed_s"], 1)}
        if args.ray:
            for tasks in (1, 2):
                argv_ = [*batch_command(items, work, url, f"ray-{tasks}.jsonl", concurrency=args.concurrency),
                         "--ray", args.ray, "--ray-tasks", str(tasks)]
                summary, _ = batch(argv_, env)
                assert summary["done"] == args.items, summary
                report[f"ray_{tasks}_workers_items_per_s"] = round(args.items / summary["elapsed_s"], 1)
            report["ray_results_identical"] = judgments(work / "ray-1.jsonl") == judgments(work / "ray-2.jsonl")
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
