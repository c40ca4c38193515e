"""Provider batch: N single-judge items through the fake server's batch endpoints, then a kill and a rerun.

    python -m benchmarks.provider_batch --items 10000

Run 1: the whole batch with `--provider-batch`, timed by its own summary
(jobs, rounds, requests sent, cost at the batch price and at the live price;
the model is named `openai/gpt-4o-mini` so litellm prices it, while the fake
server answers). Run 2, into a new results file without the cache: SIGKILL
while the job is being polled (the fake job takes 3 x `--step` seconds), then
the same command again. The server counts every request line it accepted into
a job, so "sent twice" is counted on the server side. One JSON line out.
"""

from __future__ import annotations

import argparse
import json
import resource
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

from benchmarks.common import KNOWN_MODEL, PYTHON, ROOT, emit, quiet_env, work_dir
from debate_tui.testing.fake_server import FakeLLMServer

CLI = "import sys; from debate_tui.cli import main; sys.exit(main())"


def items_file(path: Path, count: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"i{i}", "text": f"Story number {i}. Tom went home and slept."}) + "\n"
                            for i in range(count)))
    return path


def argv(server: FakeLLMServer, items: Path, out: Path, *more: str) -> list[str]:
    return [PYTHON, "-c", CLI, "batch", str(items), "--out", str(out), "--protocol", "single",
            "--criteria", "coherence", "--model", KNOWN_MODEL, "--api-base", server.base_url,
            "--provider-batch", "--poll-interval", "0.5", "--progress-interval", "5", *more]


def summary(done: subprocess.CompletedProcess[str]) -> dict:
    if done.returncode != 0:
        raise RuntimeError(f"batch failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--step", type=float, default=2.0, help="seconds per job status step on the fake server")
    args = parser.parse_args()
    with work_dir("provider-batch") as work, FakeLLMServer(default_reply="Reasoning.\nScore: 4") as server:
        server.batches.step_s = args.step
        env = quiet_env(work)
        items = items_file(work / "in.jsonl", args.items)
        started = time.monotonic()
        first = summary(subprocess.run(argv(server, items, work / "a.jsonl"), env=env, cwd=ROOT,
                                       capture_output=True, text=True, timeout=3600))
        wall = time.monotonic() - started
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the only child waited for so far
        sent_first = server.batches.submitted

        server.batches.submitted, server.batches.submitted_ids = 0, []
        rerun_argv = argv(server, items, work / "b.jsonl", "--no-cache")
        child = subprocess.Popen(rerun_argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not any(job.status == "in_progress" for job in list(server.batches.jobs.values())[1:]):
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait()
        killed_at = server.batches.submitted
        second = summary(subprocess.run(rerun_argv, env=env, cwd=ROOT, capture_output=True, text=True,
                                        timeout=3600))
        ids = Counter(json.loads(line)["id"] for line in (work / "b.jsonl").read_text().splitlines())
        twice = sum(n - 1 for n in Counter(server.batches.submitted_ids).values() if n > 1)
        emit({
            "items": args.items, "wall_s": round(wall, 1), "batch_elapsed_s": first["elapsed_s"],
            "jobs": first["provider_batch"]["jobs"], "rounds": first["provider_batch"]["rounds"],
            "requests_sent": sent_first, "cost_batch_usd": first["cost_usd"],
            "cost_live_usd": first["provider_batch"]["live_cost_usd"], "peak_rss_mb": round(peak_kb / 1024),
            "kill": {"sent_before_kill": killed_at, "sent_by_rerun": server.batches.submitted - killed_at,
                     "sent_twice": twice, "rerun_summary_requests_sent": second["provider_batch"]["requests_sent"],
                     "rerun_elapsed_s": second["elapsed_s"],
                     "result_lines": sum(ids.values()), "distinct_items": len(ids),
                     "lost": args.items - len(ids), "duplicated": sum(ids.values()) - len(ids)},
        })


if __name__ == "__main__":
    main()
