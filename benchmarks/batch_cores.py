"""Batch past one core: `batch --processes 1`, `batch` (default processes) and litellm alone, side by side.

    python -m benchmarks.batch_cores                      # the comparison at 10 ms and 200 ms latency
    python -m benchmarks.batch_cores --latency 0.01 --items 2000

2,000 single-judge items (one call each), concurrency 32, no cache, against the
fake server in its own process. Each of the three runs one after the other in
a child: the two batches as the real command (elapsed time from their own
summary, which starts after litellm's import, as the baseline's clock does),
the baseline a plain single-process script making the same 2,000
`litellm.acompletion` calls with 32 workers (`benchmarks.batch --raw`). The
three are repeated `repeats` times, interleaved, and the median of the
per-round ratios is reported.
"""

from __future__ import annotations

import argparse
import json
import sys

from benchmarks.batch import REPLY, batch_command, measured_batch, write_items
from benchmarks.common import Row, Section, fake_server, median, quiet_env, run_child, work_dir

ITEMS = 2000
CONCURRENCY = 32
LATENCIES = (0.01, 0.2)


def compare(latency: float, items: int = ITEMS, repeats: int = 1) -> dict[str, float]:
    """items/s of `batch --processes 1`, `batch` and litellm alone; medians over `repeats` interleaved rounds."""
    one, default, raw, processes = [], [], [], 0
    with work_dir("cores") as work, fake_server(latency=latency, reply=REPLY) as url:
        env = quiet_env(work)
        path = write_items(work / "items.jsonl", items)
        for attempt in range(repeats):
            runs = {}
            for name, extra in (("one", ["--processes", "1"]), ("default", [])):
                argv = [*batch_command(path, work, url, f"{name}-{attempt}.jsonl", concurrency=CONCURRENCY), *extra]
                summary, _ = measured_batch(argv, env)
                if summary["done"] != items or summary["calls"] != items:
                    raise RuntimeError(f"batch did not finish cleanly: {summary}")
                runs[name] = items / summary["elapsed_s"]
                processes = summary.get("processes", 1) if name == "default" else processes
            baseline = run_child("batch", ["--raw", url, str(items), str(CONCURRENCY), "cold"], env)
            one.append(runs["one"])
            default.append(runs["default"])
            raw.append(baseline["items"] / baseline["elapsed_s"])
    return {"one": median(one), "default": median(default), "raw": median(raw), "processes": processes,
            "one_ratio": median([a / b for a, b in zip(one, raw, strict=True)]),
            "default_ratio": median([a / b for a, b in zip(default, raw, strict=True)])}


def rows(latency: float, figures: dict[str, float]) -> list[Row]:
    ms = f"{latency * 1000:.0f} ms"
    what = f"items/s, {ITEMS:,} single-judge items, concurrency {CONCURRENCY}, {ms} latency, no cache"
    fast = latency < 0.1
    one_goal, default_goal = (0.95, 1.3) if fast else (0.9, 0.9)
    detail = (f"{figures['one']:.0f} (1 process) / {figures['default']:.0f} ({figures['processes']:.0f} processes) "
              f"vs {figures['raw']:.0f} items/s")
    return [
        Row("3 batch", f"{what}: batch --processes 1", "litellm.acompletion alone, 32 workers, 1 process",
            figures["one_ratio"], f">= {one_goal}x", figures["one_ratio"] >= one_goal, detail),
        Row("3 batch", f"{what}: batch (default processes)", "litellm.acompletion alone, 32 workers, 1 process",
            figures["default_ratio"], f">= {default_goal}x", figures["default_ratio"] >= default_goal, detail),
    ]


def measure() -> Section:
    return Section([row for latency in LATENCIES for row in rows(latency, compare(latency))])


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.batch_cores")
    parser.add_argument("--latency", type=float, action="append", help="seconds (repeatable; default 0.01 and 0.2)")
    parser.add_argument("--items", type=int, default=ITEMS)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    for latency in args.latency or LATENCIES:
        figures = compare(latency, args.items, args.repeats)
        print(json.dumps({"latency_s": latency, **{k: round(v, 3) for k, v in figures.items()}}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
