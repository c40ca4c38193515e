"""Batch concurrency, proved by what the server sees; the resumable real command, interrupted or killed.

How fast a batch goes is a benchmark (benchmarks/batch.py: items per second at
concurrency 16 against raw litellm calls and a sequential loop, side by side),
not a test: a timing depends on the machine and what else runs on it. What a
test can assert everywhere is that the calls really overlap.

The interrupt tests run the fake server in its own process, as a real one would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from debate_tui.cli.exits import Exit
from tests.helpers.batch import model_args, read_rows, run_batch, write_items
from tests.helpers.scripts import CRITIC, agreeing_debate
from tests.helpers.serve import fake_server_child

HELD_S = 1.5
"""How long the server holds each request: requests arriving within that long of each other overlap."""


def most_in_flight(arrivals: list[float], held: float) -> int:
    """The largest number of requests the server was holding at one moment."""
    ordered = sorted(arrivals)
    return max(sum(1 for other in ordered if arrival - held < other <= arrival) for arrival in ordered)


def test_concurrency_16_keeps_16_calls_in_flight_and_a_rerun_makes_none(capsys, llm_server, tmp_path):
    """No more than 16 at once (each worker waits for its call), and all 16 at once."""
    llm_server.latency = HELD_S
    agreeing_debate(llm_server)
    items, out = write_items(tmp_path / "in.jsonl", 24), tmp_path / "out.jsonl"
    argv = [str(items), "--out", str(out), *model_args(llm_server), "--concurrency", "16", "--no-cache"]
    code, summary, _ = run_batch(capsys, *argv)
    assert code == 0 and summary["done"] == 24 and summary["calls"] == 48
    assert most_in_flight([r.at for r in llm_server.requests], HELD_S) == 16
    assert len(read_rows(out)) == 24

    code, summary, _ = run_batch(capsys, *argv)
    assert code == 0 and summary["skipped"] == 24 and summary["calls"] == 0  # a rerun makes zero calls


@pytest.fixture
def remote_server(tmp_path):
    """The fake server in a child process, latency 200 ms, scripted as an agreeing DEBATE."""
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"match": CRITIC, "reply": "NO ISSUE"},
                                 {"reply": "Reasoning about the text.\nScore: 4"}]))
    with fake_server_child("--latency", "0.2", "--rules", str(rules)) as url:
        yield url


@pytest.mark.serial
@pytest.mark.parametrize(("signal_name", "expected_exit"), [("SIGINT", 4), ("SIGKILL", -9)])
def test_the_real_command_interrupted_or_killed_resumes_without_redoing_finished_items(
        capsys, remote_server, tmp_path, signal_name, expected_exit):
    """The installed command, stopped by Ctrl+C or killed outright mid-batch, then run again."""
    import signal

    items, out = write_items(tmp_path / "in.jsonl", 120), tmp_path / "out.jsonl"
    argv = [str(items), "--out", str(out), "--protocol", "debate", "--criteria", "coherence",
            "--model", "openai/fake-model", "--api-base", remote_server, "--concurrency", "8", "--no-cache"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    batch = subprocess.Popen([sys.executable, "-c", "import sys; from debate_tui.cli import main; sys.exit(main())",
                              "batch", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 60
    while (not out.exists() or len(out.read_text().splitlines()) < 20) and time.monotonic() < deadline:
        time.sleep(0.05)
    batch.send_signal(getattr(signal, signal_name))
    stdout, stderr = batch.communicate(timeout=30)
    assert batch.returncode == expected_exit, stderr
    if signal_name == "SIGINT":
        summary = json.loads(stdout.splitlines()[-1])
        assert summary["stopped"] == "interrupted (Ctrl+C)" and "rerun the same command to resume" in stderr
    text = out.read_text()
    finished = {json.loads(line)["id"] for line in text.splitlines() if line.strip() and line.endswith("}")}
    assert 20 <= len(finished) < 120

    code, summary, _ = run_batch(capsys, *argv)
    assert code == 0
    rows = read_rows(out)
    assert sorted(r["id"] for r in rows) == sorted(f"i{i}" for i in range(120))  # each item exactly once
    assert summary["skipped"] >= len(finished) - 1  # a line cut by SIGKILL is rebuilt from its finished session
    assert summary["calls"] <= 2 * (120 - len(finished)) + 2  # finished turns were not asked again


def _crowded_batch(capsys, llm_server, tmp_path, out: str) -> tuple[dict, int]:
    """40 single-judge items, 16 workers, against a server that takes 3 calls at once (429 beyond)."""
    llm_server.reset()
    llm_server.latency, llm_server.max_in_flight, llm_server.retry_after = 0.5, 3, 0.05
    llm_server.add_rule("Reasoning about the text.\nScore: 4")
    items = write_items(tmp_path / "in.jsonl", 40)
    code, summary, _ = run_batch(capsys, str(items), "--out", str(tmp_path / out), "--protocol", "single",
                                 "--criteria", "coherence", "--model", "openai/fake-model", "--api-base",
                                 llm_server.base_url, "--concurrency", "16", "--no-cache", "--retries", "8")
    assert summary is not None and code == (Exit.FAILED if summary["failed"] else 0)
    return summary, sum(1 for r in llm_server.requests if r.fault == "429")


def test_a_provider_that_takes_three_calls_at_once_brings_sixteen_workers_down_to_three(
        capsys, llm_server, tmp_path):
    """Repeated 429s halve the calls in flight: every item done, each refusal counted.

    How many fewer refusals than a fixed 16 is the limiter's own test (test_batch_parts, on a provider whose
    calls take turns of the event loop): here, through real HTTP, the count depends on how fast this machine
    builds calls today (66 against 66 with both cores busy). A reply takes half a second, so 16 workers started
    at once overlap on any machine and the limit comes down."""
    summary, refused = _crowded_batch(capsys, llm_server, tmp_path, "adaptive.jsonl")
    assert summary["done"] == 40 and summary["failed"] == 0 and summary["calls"] == 40
    assert summary["rate_limited"] == refused > 0
    assert summary["concurrency"]["max"] == 16 and summary["concurrency"]["lowest"] <= 3
