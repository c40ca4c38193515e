"""Target 3, batch: throughput at concurrency 16 against raw litellm and a sequential loop; memory.

Throughput. 200 items, the `single` protocol (one call per item, so an item
is a call and the comparison is like for like), concurrency 16, the fake
server in its own process answering after 200 ms. `debate-tui batch` runs as
the real command in a child process and its own summary gives the elapsed
time of the run (after litellm's import, which the baselines skip too). The
baselines are children that call `litellm.acompletion` directly: 16 workers
over 200 prompts of the same size, started cold like the batch, and a plain
sequential loop (what the papers' scripts do) timed on a 10-item sample after
one warm-up call and scaled. Batch and raw runs are interleaved
and the median of the per-pair ratios is reported.

Memory. Peak RSS of the batch command on 200 and on 2,000 items (server
latency 10 ms), each read with wait4 for that child alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import (
    KNOWN_MODEL,
    PYTHON,
    ROOT,
    Row,
    Section,
    emit,
    fake_server,
    median,
    quiet_env,
    run_child,
    work_dir,
)

ITEMS = 200
CONCURRENCY = 16
LATENCY_S = 0.2
SEQUENTIAL_SAMPLE = 10
RSS_SMALL, RSS_LARGE = 200, 2000
REPLY = "The story is short but it holds together: one event follows the other.\nScore: 4"
STORY = ("Tom came home late from the harbour. He ate the soup his sister had left on the stove, "
         "read a page of his book and fell asleep before the ferry's last horn.")


def write_items(path: Path, count: int) -> Path:
    lines = [json.dumps({"id": f"i{i}", "text": f"Story {i}. {STORY}", "human": {"coherence": 1 + i % 5}})
             for i in range(count)]
    path.write_text("\n".join(lines) + "\n")
    return path


def prompt(index: int) -> list[dict[str, str]]:
    """About the size of the single protocol's prompt for one item."""
    return [{"role": "system", "content": "You are a careful evaluator of text quality."},
            {"role": "user", "content": (
                f"[Text to evaluate]\nStory {index}. {STORY}\n[End of text]\n\nEvaluation criterion: coherence (1-5)\n"
                "The collective quality of all sentences: the text should build from sentence to sentence "
                "into a coherent body of information about a topic.\n"
                "Give your reasoning, then end with a line 'Score: N' where N is between 1 and 5.")}]


# ----- children -----------------------------------------------------------------------------------


async def raw_calls(url: str, count: int, concurrency: int, warm_up: bool) -> dict:
    """`count` calls through litellm alone, `concurrency` at a time; the baseline the batch is held to.

    `warm_up` makes one call before the clock starts: a sequential rate is scaled up from a
    small sample, which one-off costs (the first connection) would distort.
    """
    from debate_tui.generation import DEFAULT_REPLY_TOKENS
    from debate_tui.llm.litellm_client import load_litellm

    litellm = load_litellm()
    pending = iter(range(count))

    async def call(index: int) -> None:  # the request the single judge sends: its temperature and reply cap
        response = await litellm.acompletion(model=KNOWN_MODEL, messages=prompt(index), api_base=url,
                                             temperature=0.0, max_tokens=DEFAULT_REPLY_TOKENS, timeout=60,
                                             num_retries=0)
        assert "Score" in (response.choices[0].message.content or "")

    async def worker() -> None:
        for index in pending:
            await call(index)

    if warm_up:
        await call(-1)
    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return {"items": count, "elapsed_s": time.perf_counter() - started}


def batch_command(items: Path, work: Path, url: str, out: str, *, concurrency: int = CONCURRENCY) -> list[str]:
    return [str(Path(PYTHON).parent / "debate-tui"), "batch", str(items), "--out", str(work / out),
            "--protocol", "single", "--criteria", "coherence", "--model", KNOWN_MODEL, "--api-base", url,
            "--concurrency", str(concurrency), "--no-cache", "--sessions-dir", str(work / f"sessions-{out}"),
            "--progress-interval", "1000"]


class MeasuredPopen(subprocess.Popen):
    """A Popen that reaps its child with wait4 and keeps that child's own peak RSS (KiB on Linux)."""

    peak_rss_kib = 0

    def _try_wait(self, wait_flags):  # type: ignore[override]
        try:
            pid, status, usage = os.wait4(self.pid, wait_flags)
        except ChildProcessError:
            return self.pid, 0
        if pid == self.pid:
            self.peak_rss_kib = usage.ru_maxrss
        return pid, status


def measured_batch(argv: list[str], env: dict[str, str], timeout: float | None = 600) -> tuple[dict, int]:
    child = MeasuredPopen(argv, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = child.communicate(timeout=timeout)
    if child.returncode != 0:
        raise RuntimeError(f"batch failed ({child.returncode}): {stderr[-2000:]}")
    return json.loads(stdout.strip().splitlines()[-1]), child.peak_rss_kib


# ----- the measurement ---------------------------------------------------------------------------


def measure(repeats: int = 3) -> Section:
    rows: list[Row] = []
    with work_dir("batch") as work:
        env = quiet_env(work)
        items = write_items(work / "items.jsonl", ITEMS)
        with fake_server(latency=LATENCY_S, reply=REPLY) as url:
            ratios, ours, raws = [], [], []
            for attempt in range(repeats):
                summary, _ = measured_batch(batch_command(items, work, url, f"out-{attempt}.jsonl"), env)
                if summary["done"] != ITEMS or summary["calls"] != ITEMS:
                    raise RuntimeError(f"batch did not finish cleanly: {summary}")
                raw = run_child("batch", ["--raw", url, str(ITEMS), str(CONCURRENCY), "cold"], env)
                mine, theirs = ITEMS / summary["elapsed_s"], raw["items"] / raw["elapsed_s"]
                ours.append(mine)
                raws.append(theirs)
                ratios.append(mine / theirs)
            sequential = run_child("batch", ["--raw", url, str(SEQUENTIAL_SAMPLE), "1", "warm"], env)
            rerun, _ = measured_batch([a for a in batch_command(items, work, url, "cached.jsonl") if a != "--no-cache"]
                                      + ["--cache-dir", str(work / "cache")], env)
            again, _ = measured_batch([a for a in batch_command(items, work, url, "cached-again.jsonl")
                                       if a != "--no-cache"] + ["--cache-dir", str(work / "cache")], env)
        per_s = median(ours)
        seq_per_s = sequential["items"] / sequential["elapsed_s"]
        ratio = median(ratios)
        rows.append(Row("3 batch", f"items/s, {ITEMS} items at concurrency {CONCURRENCY}, 200 ms latency",
                        "raw litellm.acompletion, same concurrency", ratio, ">= 0.9x", ratio >= 0.9,
                        f"{per_s:.1f} vs {median(raws):.1f} items/s, median of {repeats} pairs"))
        rows.append(Row("3 batch", "items/s, same run", f"sequential litellm loop ({SEQUENTIAL_SAMPLE}-item sample)",
                        per_s / seq_per_s, ">= 10x", per_s / seq_per_s >= 10,
                        f"{per_s:.1f} vs {seq_per_s:.2f} items/s"))
        rows.append(Row("3 batch", "identical rerun into a new file, response cache on", "0 calls", None, "0 calls",
                        again["calls"] == 0 and again["cache_hits"] == ITEMS,
                        f"first run {rerun['calls']} calls; rerun {again['cache_hits']} cache hits",
                        value=f"{again['calls']} calls"))
        with fake_server(latency=0.01, reply=REPLY) as url:
            peaks = {}
            for count in (RSS_SMALL, RSS_LARGE):
                path = write_items(work / f"items-{count}.jsonl", count)
                summary, peak = measured_batch(batch_command(path, work, url, f"rss-{count}.jsonl"), env)
                if summary["done"] != count:
                    raise RuntimeError(f"batch of {count} did not finish: {summary}")
                peaks[count] = peak
        growth = peaks[RSS_LARGE] / peaks[RSS_SMALL]
        rows.append(Row("3 batch", f"peak RSS, {RSS_LARGE:,}-item batch", f"{RSS_SMALL}-item batch", growth,
                        "<= 1.2x", growth <= 1.2,
                        f"{peaks[RSS_LARGE] / 1024:.0f} vs {peaks[RSS_SMALL] / 1024:.0f} MiB"))
    return Section(rows)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.batch")
    parser.add_argument("--raw", nargs=4, metavar=("URL", "COUNT", "CONCURRENCY", "cold|warm"),
                        help="child: COUNT calls through litellm alone, CONCURRENCY at a time, "
                             "warm: after one call off the clock")
    args = parser.parse_args(argv)
    if args.raw:
        url, count, concurrency, start = args.raw
        emit(asyncio.run(raw_calls(url, int(count), int(concurrency), start == "warm")))
    else:
        for row in measure().rows:
            print(row.cells())


if __name__ == "__main__":
    main(sys.argv[1:])
