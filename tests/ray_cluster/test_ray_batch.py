"""`batch --ray ADDRESS` on a real local Ray cluster (a head on 127.0.0.1 with two worker CPUs).

Opt-in: `python3 dev.py test-ray` (needs `pip install 'debate-tui[ray]'` in .venv) sets
DEBATE_TUI_RAY_TESTS=1. The head is started by this module, in its own process group,
and only that group is stopped afterwards (never `ray stop`, which stops every Ray
process of the user). The tasks call the fake server over 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

if os.environ.get("DEBATE_TUI_RAY_TESTS") != "1":
    pytest.skip("the Ray suite runs with `python3 dev.py test-ray` (it starts a local Ray head)",
                allow_module_level=True)
pytest.importorskip("ray", reason="pip install 'debate-tui[ray]' first")

from debate_tui.batch.shards import judgment  # noqa: E402
from tests.helpers.batch import read_rows, run_batch, write_items

RAY = str(Path(sys.executable).parent / "ray")
ITEMS = 24


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def ray_head() -> Iterator[str]:
    """A Ray head with 2 CPUs on 127.0.0.1; workers inherit this environment (the fake key, the dirs)."""
    temp = tempfile.mkdtemp(prefix="rt-", dir="/tmp")  # Ray's socket paths must stay short
    port = _free_port()
    env = {**os.environ, "OPENAI_API_KEY": "sk-fake-ray", "RAY_USAGE_STATS_ENABLED": "0",
           "DEBATE_TUI_SESSIONS_DIR": f"{temp}/sessions", "DEBATE_TUI_CACHE_DIR": f"{temp}/cache"}
    head = subprocess.Popen(
        [RAY, "start", "--head", "--block", f"--port={port}", "--node-ip-address=127.0.0.1", "--num-cpus=2",
         "--include-dashboard=false", f"--temp-dir={temp}/ray", "--disable-usage-stats"],
        env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while subprocess.call([RAY, "status", f"--address={address}"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) != 0:
            assert head.poll() is None and time.monotonic() < deadline, "the Ray head did not start"
            time.sleep(1)
        yield address
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            head.wait(10)
        with contextlib.suppress(ProcessLookupError):  # Ray's servers can outlive the head's SIGTERM
            os.killpg(head.pid, signal.SIGKILL)


def _args(server, out: Path, items: Path, *more: str) -> list[str]:
    return [str(items), "--out", str(out), "--protocol", "single", "--criteria", "coherence,relevance",
            "--model", "openai/fake-model", "--api-base", server.base_url, "--no-cache", *more]


def _judgments(path: Path) -> dict[tuple[str, str], dict[str, object]]:
    rows = read_rows(path)
    keyed = {(r["id"], r["criterion"]): judgment(r) for r in rows}
    assert len(keyed) == len(rows)  # every (id, criterion) exactly once
    return keyed


def test_two_ray_workers_give_the_local_batch_results_exactly_once(capsys, llm_server, tmp_path, isolated_dirs,
                                                                  ray_head):
    llm_server.add_rule("Reasoning about the text.\nScore: 4")
    items = write_items(tmp_path / "in.jsonl", ITEMS)
    code, local, _ = run_batch(capsys, *_args(llm_server, tmp_path / "local.jsonl", items))
    assert code == 0 and local["done"] == ITEMS
    calls = llm_server.calls

    code, two, err = run_batch(capsys, *_args(llm_server, tmp_path / "two.jsonl", items, "--ray", ray_head,
                                              "--ray-tasks", "2"))
    assert code == 0, err
    assert two["done"] == ITEMS and two["calls"] == ITEMS * 2 == llm_server.calls - calls
    assert "24/24" in err  # one bar for the whole batch
    assert _judgments(tmp_path / "two.jsonl") == _judgments(tmp_path / "local.jsonl")

    calls = llm_server.calls
    code, again, _ = run_batch(capsys, *_args(llm_server, tmp_path / "two.jsonl", items, "--ray", ray_head))
    assert code == 0 and again["skipped"] == ITEMS and again["done"] == 0 and llm_server.calls == calls

    code, one, _ = run_batch(capsys, *_args(llm_server, tmp_path / "one.jsonl", items, "--ray", ray_head,
                                            "--ray-tasks", "1"))
    assert code == 0 and one["done"] == ITEMS
    assert _judgments(tmp_path / "one.jsonl") == _judgments(tmp_path / "two.jsonl")


def test_a_cluster_that_is_not_there_is_one_line_and_exit_2(capsys, llm_server, tmp_path, isolated_dirs):
    items = write_items(tmp_path / "in.jsonl", 2)
    code, _, err = run_batch(capsys, *_args(llm_server, tmp_path / "o.jsonl", items,
                                            "--ray", f"127.0.0.1:{_free_port()}"))
    assert code == 2 and err.strip().startswith("debate-tui: error: --ray 127.0.0.1:") and llm_server.calls == 0
