"""Batch past one core: `batch --processes 1`, `batch` (default processes) and litellm alone, side by side.

    python -m benchmarks.batch_cores                      # the comparison at 10 ms and 200 ms latency
    python -m benchmarks.batch_cores --latency 0.01 --items 2000
    python -m benchmarks.batch_cores --rss 1000 20000 100000   # peak RSS of `batch --processes 1` at each size
    python -m benchmarks.batch_cores --engine                 # the engine's own CPU per item, litellm left out

2,000 single-judge items (one call each), concurrency 32, no cache, against the
fake server in its own process. Each of the three runs one after the other in
a child: the two batches as the real command (elapsed time from their own
summary, which starts after litellm's import, as the baseline's clock does),
the baseline a plain single-process script making the same 2,000
`litellm.acompletion` calls with 32 workers (`benchmarks.batch --raw`). The
three are repeated `repeats` times, interleaved, and the median of the
per-round ratios is reported.

The engine alone. The same `batch --processes 1` as the command line runs it
(the collector frozen once the imports are done), with litellm's call replaced
by an instant reply: what is left is the engine's own CPU per item, printed
under the table beside litellm's per call (one over its items/s at 10 ms,
where one core is saturated), with what a session file cost on the disk then.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.batch import REPLY, batch_command, measured_batch, write_items
from benchmarks.common import PYTHON, ROOT, Row, Section, fake_server, median, quiet_env, run_child, work_dir
from debate_tui.safefile import write_all_atomic

ITEMS = 2000
CONCURRENCY = 32
LATENCIES = (0.01, 0.2)
RSS_SIZES = (1000, 20000)
"""In `python -m benchmarks`; the 100,000-item run is `--rss 1000 100000`, recorded in docs/BATCH.md."""
KILL_ITEMS = 1000
SETTLED_US, SETTLE_S, SETTLE_CHECK_S = 100, 420, 15
"""A session file costing at most 100 us of CPU counts as a settled disk (45-80 us here). After 20,000 files
were deleted in /tmp, one created there cost about 1,000 us for 40 s, 150-600 us until about 130 s, then 50 us
(ext4 without a journal skips inodes deleted in the last 60 s, or 360 s while their inode table block is
unwritten)."""
REPEATS = 5
"""Interleaved rounds per latency in `python -m benchmarks`: one round's ratio moved by 5-10% from run to run
(litellm alone's rate with it), more than the distance between either batch and its goal."""


def file_cost(directory: Path, count: int = 500) -> float:
    """CPU (user and kernel, microseconds) to write one item session's file here, as the batch writes them.

    Every batch item creates one; litellm alone creates none. On this machine's disk (ext4 without a journal)
    it was 45-80 us, and up to 1,000 us for a minute or two after thousands of files were deleted nearby
    (see `work_dir`; a test run deletes that many in /tmp): the one-process ratio is read with it."""
    probe = Path(tempfile.mkdtemp(prefix="file-cost-", dir=directory))  # new files each time: none replaced
    files = [(probe / f"{n}.json", "x" * 3000) for n in range(count)]
    before = os.times()
    write_all_atomic(files, durable=False)
    after = os.times()
    return 1e6 * (after.user - before.user + after.system - before.system) / count


def settled_file_cost(directory: Path) -> float:
    """`file_cost`, once it is down to what a file costs on a settled disk (SETTLED_US), or after SETTLE_S.

    The batch rows measure the client's CPU against litellm's; a kernel that spends ten times the usual on
    each new file because files were deleted a minute ago would be measured instead. Waiting is bounded: after
    SETTLE_S the rows are measured anyway, and they print the figure."""
    deadline = time.monotonic() + SETTLE_S
    while (cost := file_cost(directory)) > SETTLED_US and time.monotonic() < deadline:
        print(f"[bench] a new file costs {cost:.0f} us of CPU in {directory} (recent deletions nearby?): "
              f"waiting for the disk to settle", file=sys.stderr, flush=True)
        time.sleep(SETTLE_CHECK_S)
    return cost


def compare(latency: float, items: int = ITEMS, repeats: int = 1) -> dict[str, float]:
    """items/s of `batch --processes 1`, `batch` and litellm alone; medians over `repeats` interleaved rounds."""
    one, default, raw, processes = [], [], [], 0
    with work_dir("cores") as work, fake_server(latency=latency, reply=REPLY) as url:
        env = quiet_env(work)
        path = write_items(work / "items.jsonl", items)
        file_us = settled_file_cost(work)
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
            "file_us": file_us, "rounds": repeats,
            "one_ratio": median([a / b for a, b in zip(one, raw, strict=True)]),
            "default_ratio": median([a / b for a, b in zip(default, raw, strict=True)])}


ENGINE_CHILD = """
import asyncio, os, sys
from debate_tui import cli
from debate_tui.domain import Usage
from debate_tui.llm import litellm_client
from debate_tui.llm.base import Completion

async def instant(self, request, on_delta=None):
    await asyncio.sleep(0)
    return Completion(text=os.environ["BENCHMARK_REPLY"], usage=Usage(calls=1, prompt_tokens=120, completion_tokens=20),
                      finish_reason="stop")

litellm_client.LiteLLMClient.complete = instant
sys.argv = ["debate-tui", *sys.argv[1:]]
sys.exit(cli.main())
"""
"""`batch` as the command line runs it (`main()` reading sys.argv), every reply instant: no litellm in the way."""


def engine_alone(items: int = ITEMS, repeats: int = 3) -> dict[str, float]:
    """The engine's own CPU per item (microseconds): `batch --processes 1` with every reply instant, the median of
    `repeats` runs; with what a session file cost on the same disk just before."""
    per_item = []
    with work_dir("cores-engine") as work:
        env = quiet_env(work)
        path = write_items(work / "items.jsonl", items)
        file_us = settled_file_cost(work)
        for attempt in range(repeats):
            argv = [*batch_command(path, work, "http://127.0.0.1:9/v1", f"engine-{attempt}.jsonl",
                                   concurrency=CONCURRENCY)[1:], "--processes", "1"]
            done = subprocess.run([PYTHON, "-c", ENGINE_CHILD, *argv], env={**env, "BENCHMARK_REPLY": REPLY},
                                  cwd=ROOT, capture_output=True, text=True, timeout=600)
            summary = json.loads(done.stdout.strip().splitlines()[-1])
            if summary["done"] != items:
                raise RuntimeError(f"the engine's batch did not finish: {done.stderr[-2000:]}")
            per_item.append(1e6 * summary["elapsed_s"] / items)
    return {"engine_us_per_item": median(per_item), "file_us": file_us}


def peak_rss(counts: list[int]) -> dict[int, float]:
    """Peak RSS (MiB, wait4 for that child alone) of `batch --processes 1` over each number of items, 10 ms."""
    peaks = {}
    with work_dir("cores-rss") as work, fake_server(latency=0.01, reply=REPLY) as url:
        env = quiet_env(work)
        for count in counts:
            path = write_items(work / f"items-{count}.jsonl", count)
            argv = [*batch_command(path, work, url, f"rss-{count}.jsonl", concurrency=CONCURRENCY),
                    "--processes", "1"]
            summary, peak = measured_batch(argv, env, timeout=None)
            if summary["done"] != count:
                raise RuntimeError(f"batch of {count} did not finish: {summary}")
            peaks[count] = peak / 1024
    return peaks


def rows(latency: float, figures: dict[str, float]) -> list[Row]:
    ms = f"{latency * 1000:.0f} ms"
    what = f"items/s, {ITEMS:,} single-judge items, concurrency {CONCURRENCY}, {ms} latency, no cache"
    fast = latency < 0.1
    one_goal, default_goal = (0.95, 1.3) if fast else (0.9, 0.9)
    detail = (f"{figures['one']:.0f} (1 process) / {figures['default']:.0f} ({figures['processes']:.0f} processes) "
              f"vs {figures['raw']:.0f} items/s, medians of {figures['rounds']:.0f} rounds; a session file cost "
              f"{figures['file_us']:.0f} us of CPU")
    return [
        Row("3 batch", f"{what}: batch --processes 1", "litellm.acompletion alone, 32 workers, 1 process",
            figures["one_ratio"], f">= {one_goal}x", figures["one_ratio"] >= one_goal, detail),
        Row("3 batch", f"{what}: batch (default processes)", "litellm.acompletion alone, 32 workers, 1 process",
            figures["default_ratio"], f">= {default_goal}x", figures["default_ratio"] >= default_goal, detail),
    ]


def lines_of(out: Path) -> Counter[str]:
    """Complete result lines per item id."""
    text = out.read_text() if out.exists() else ""
    return Counter(json.loads(line)["id"] for line in text.splitlines() if line.endswith("}"))


def killed_and_rerun(victim: str) -> dict[str, int]:
    """`batch --processes 2` killed -9 (the parent, or one worker) mid-run, then the same command again."""
    with work_dir("cores-kill") as work, fake_server(latency=0.05, reply=REPLY) as url:
        env = quiet_env(work)
        path, out = write_items(work / "items.jsonl", KILL_ITEMS), work / "out.jsonl"
        argv = [*batch_command(path, work, url, "out.jsonl", concurrency=8), "--processes", "2"]
        # no pipes: the orphaned workers (and multiprocessing's resource tracker) would hold them open
        child = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while sum(lines_of(out).values()) < KILL_ITEMS // 4 and child.poll() is None:
            time.sleep(0.05)
        workers = Path(f"/proc/{child.pid}/task/{child.pid}/children").read_text().split()
        os.kill(child.pid if victim == "parent" else int(workers[-1]), signal.SIGKILL)
        child.wait(timeout=120)
        time.sleep(2)  # orphaned workers stop within half a second
        before = lines_of(out)
        summary, _ = measured_batch(argv, env)
        after = lines_of(out)
    return {"before": len(before), "twice_before": sum(n > 1 for n in before.values()), "after": len(after),
            "twice": sum(n > 1 for n in after.values()), "missing": KILL_ITEMS - len(after),
            "rerun_skipped": summary["skipped"]}


def budget_across_processes() -> dict[str, float]:
    """`--max-cost` of 100.5 items' cost over 2 processes (1 slot each): where the batch stops."""
    with work_dir("cores-budget") as work, fake_server(latency=0.01, reply=REPLY) as url:
        env = quiet_env(work)
        path = write_items(work / "items.jsonl", 1000)
        probe, _ = measured_batch([*batch_command(path, work, url, "probe.jsonl"), "--limit", "10",
                                   "--processes", "1"], env)
        per_item = probe["cost_usd"] / probe["calls"]
        limit = per_item * 100.5
        argv = [*batch_command(path, work, url, "out.jsonl", concurrency=2), "--processes", "2",
                "--max-cost", f"{limit:.9f}"]
        child = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
        summary = json.loads(child.stdout.strip().splitlines()[-1])
    return {"limit": limit, "per_item": per_item, "spent": summary["cost_usd"], "done": summary["done"],
            "processes": summary["processes"], "exit": child.returncode}


def measure() -> Section:
    figures = {latency: compare(latency, repeats=REPEATS) for latency in LATENCIES}
    out = [row for latency in LATENCIES for row in rows(latency, figures[latency])]
    notes = [engine_note(engine_alone(), figures[LATENCIES[0]]["raw"])]
    peaks = peak_rss(list(RSS_SIZES))
    growth = peaks[RSS_SIZES[1]] / peaks[RSS_SIZES[0]]
    out.append(Row("3 batch", f"peak RSS, {RSS_SIZES[1]:,}-item batch (--processes 1)", f"{RSS_SIZES[0]:,} items",
                   growth, "<= 1.2x", growth <= 1.2,
                   f"{peaks[RSS_SIZES[1]]:.0f} vs {peaks[RSS_SIZES[0]]:.0f} MiB; 100,000 items: docs/BATCH.md"))
    for victim in ("parent", "worker"):
        k = killed_and_rerun(victim)
        ok = k["twice"] == 0 and k["missing"] == 0 and k["twice_before"] == 0
        out.append(Row("3 batch", f"kill -9 of the {victim} of batch --processes 2 mid-run, then the same command",
                       f"{KILL_ITEMS:,} items, each line once", None, "none lost, none twice", ok,
                       f"{k['before']} lines before the rerun, {k['after']} after; {k['twice']} twice, "
                       f"{k['missing']} missing", value=f"{k['missing']} lost / {k['twice']} twice"))
    b = budget_across_processes()
    over = (b["spent"] - b["limit"]) / b["per_item"]
    out.append(Row("3 batch", "--max-cost over 2 processes: spent past the limit", "one item per process", None,
                   "<= 2 items", over <= 2 and b["exit"] == 4,
                   f"limit ${b['limit']:.6f} (100.5 items), spent ${b['spent']:.6f}, {b['done']:.0f} items done, "
                   f"{b['processes']:.0f} processes, exit {b['exit']:.0f}", value=f"{max(over, 0):.2f} items"))
    return Section(out, notes)


def engine_note(engine: dict[str, float], raw_items_per_s: float) -> str:
    """The engine's own CPU beside litellm's, under the table: a diagnostic, not a target. In a batch the engine's
    work and litellm's overlap (litellm's worker thread, the server on the other core): the ratio rows are the
    measure."""
    return (f"- the batch engine's own CPU per item (`batch --processes 1`, every reply instant, no litellm): "
            f"{engine['engine_us_per_item']:.0f} us, a session file costing {engine['file_us']:.0f} us of it on "
            f"this disk then; litellm's CPU per call (one over its items/s at 10 ms): {1e6 / raw_items_per_s:.0f} us")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.batch_cores")
    parser.add_argument("--latency", type=float, action="append", help="seconds (repeatable; default 0.01 and 0.2)")
    parser.add_argument("--items", type=int, default=ITEMS)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--rss", type=int, nargs="+", metavar="N", help="only peak RSS at these numbers of items")
    parser.add_argument("--engine", action="store_true", help="only the engine's own CPU per item")
    args = parser.parse_args(argv)
    if args.engine:
        figures = engine_alone(args.items, args.repeats)
        print(json.dumps({key: round(value, 1) for key, value in figures.items()}), flush=True)
        return
    if args.rss:
        print(json.dumps({f"peak_rss_mib_{n}": round(v, 1) for n, v in peak_rss(args.rss).items()}), flush=True)
        return
    for latency in args.latency or LATENCIES:
        figures = compare(latency, args.items, args.repeats)
        print(json.dumps({"latency_s": latency, **{k: round(v, 3) for k, v in figures.items()}}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
