"""The issue's figure: 200 items, 200 ms latency, concurrency 16, against a measured sequential run.

The fake server runs in its own process here, as a real one would: in this
process it would take its share of the one interpreter lock from the client.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests.test_batch_support import CRITIC, read_rows, run_batch, write_items

ITEMS = 200
SAMPLE = 10


@pytest.fixture
def remote_server(tmp_path):
    """The fake server in a child process, latency 200 ms, scripted as an agreeing DEBATE."""
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"match": CRITIC, "reply": "NO ISSUE"}, {"reply": "Reasoning about the text.\nScore: 4"}]))
    server = subprocess.Popen([sys.executable, "-m", "debate_tui.testing.fake_server", "--latency", "0.2",
                               "--rules", str(rules)], stdout=subprocess.PIPE, text=True)
    try:
        yield server.stdout.readline().strip()
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_200_items_at_concurrency_16_take_well_under_a_tenth_of_the_sequential_time(capsys, remote_server, tmp_path):
    items = write_items(tmp_path / "in.jsonl", ITEMS)
    common = ["--protocol", "debate", "--criteria", "coherence", "--model", "openai/fake-model",
              "--api-base", remote_server, "--no-cache"]
    run_batch(capsys, str(items), "--out", str(tmp_path / "warm-up.jsonl"), *common, "--limit", "1")  # imports litellm

    started = time.perf_counter()
    run_batch(capsys, str(items), "--out", str(tmp_path / "sequential.jsonl"), *common,
              "--concurrency", "1", "--limit", str(SAMPLE))
    sequential = (time.perf_counter() - started) / SAMPLE * ITEMS

    started = time.perf_counter()
    code, summary, _ = run_batch(capsys, str(items), "--out", str(tmp_path / "out.jsonl"), *common, "--concurrency", "16")
    elapsed = time.perf_counter() - started
    with capsys.disabled():
        print(f"\n{ITEMS} items: {elapsed:.2f} s at concurrency 16; sequential {sequential:.1f} s "
              f"(from {SAMPLE} items); ratio {elapsed / sequential:.3f}")
    assert code == 0 and summary["done"] == ITEMS and summary["calls"] == 2 * ITEMS
    assert elapsed < sequential / 10
    assert len(read_rows(tmp_path / "out.jsonl")) == ITEMS

    code, summary, _ = run_batch(capsys, str(items), "--out", str(tmp_path / "out.jsonl"), *common, "--concurrency", "16")
    assert code == 0 and summary["skipped"] == ITEMS and summary["calls"] == 0  # a rerun makes zero calls
