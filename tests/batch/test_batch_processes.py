"""`batch --processes N`: the real command in worker processes; kills of the parent or a worker, then the rerun;
one budget across the processes; the combinations it refuses; the default's choice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from debate_tui.batch.network import SharedPause, SharedSpend
from debate_tui.batch.processes import MIN_ITEMS_PER_PROCESS, Inbox, Link, processes_for, shares, split
from debate_tui.batch.shards import shard_of
from debate_tui.domain import Usage
from tests.helpers.batch import run_batch, write_items
from tests.helpers.serve import fake_server_child

OLD_KEYS = {"done", "skipped", "failed", "needs_human", "cancelled", "remaining", "calls", "cache_hits",
            "rate_limited", "concurrency", "prompt_tokens", "completion_tokens", "cost_usd", "elapsed_s", "unscored",
            "truncated", "out", "stopped"}


@pytest.fixture
def server_url(tmp_path):
    """The fake server in its own process (the batch's workers are other processes), 50 ms a reply."""
    with fake_server_child("--latency", "0.05", "--reply", "Reasoning.\nScore: 4") as url:
        yield url


def argv_for(items: Path, out: Path, url: str, *more: str) -> list[str]:
    return [str(items), "--out", str(out), "--protocol", "single", "--criteria", "coherence",
            "--model", "openai/gpt-4o-mini", "--api-base", url, "--no-cache", "--sessions-dir",
            str(out.parent / "sessions"), *more]


def command(argv: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OPENAI_API_KEY": "sk-fake", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.Popen([sys.executable, "-c", "import sys; from debate_tui.cli import main; sys.exit(main())",
                             "batch", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def lines_of(out: Path) -> Counter[str]:
    """Complete result lines per item id (a line cut by a kill is not counted)."""
    text = out.read_text() if out.exists() else ""
    return Counter(json.loads(line)["id"] for line in text.splitlines() if line.endswith("}"))


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def wait_for_lines(out: Path, count: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while sum(lines_of(out).values()) < count and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert process.poll() is None, process.communicate()[1][-2000:]


def test_processes_for_the_default_and_a_request():
    assert processes_for(None, 32, 10) == 1  # a small batch stays in one process: nothing observable changes
    assert processes_for(None, 32, 100_000) == min(os.cpu_count() or 1, 32)
    assert processes_for(None, 1, 100_000) == 1  # never more processes than --concurrency
    assert processes_for(4, 32, 3) == 3 and processes_for(4, 2, 1000) == 2 and processes_for(1, 32, 10**6) == 1
    assert processes_for(None, 32, 2 * MIN_ITEMS_PER_PROCESS) == min(os.cpu_count() or 1, 2)
    assert shares(32, 3) == [11, 11, 10] and sum(shares(5, 2)) == 5


def test_split_puts_each_item_where_its_shard_is(tmp_path):
    from debate_tui.batch.items import ItemFile, open_items, read_items
    from debate_tui.batch.runner import Work
    from debate_tui.batch.shards import Shard

    path = write_items(tmp_path / "in.jsonl", 50)
    items, ids = open_items(path)
    assert isinstance(items, ItemFile) and ids == [f"i{i}" for i in range(50)]  # a file is walked, not held
    parts = split(Work(items, {i: [] for i in ids}), 3)
    for index, part in enumerate(parts, 1):
        assert isinstance(part.items, ItemFile) and len(part.items.keep) == len(part)
        assert [item.id for item, _ in part] == [item.id for item in Shard(index, 3).select(read_items(path))]


@pytest.mark.parametrize(("flag", "value"), [("--provider-batch", None), ("--policy", "policy.json")])
def test_processes_above_one_with_a_one_process_mode_is_refused_in_one_line(capsys, tmp_path, flag, value):
    items = write_items(tmp_path / "in.jsonl", 3)
    argv = [str(items), "--out", str(tmp_path / "out.jsonl"), "--processes", "2", flag, *([value] if value else [])]
    code, summary, err = run_batch(capsys, *argv)
    assert code == 2 and summary is None
    assert err.strip().splitlines() == [f"debate-tui: error: --processes above 1 cannot be combined with {flag}, "
                                        "which runs in one process (--ray: use --ray-tasks)"]


def test_processes_zero_is_refused(capsys, tmp_path):
    items = write_items(tmp_path / "in.jsonl", 3)
    code, _, err = run_batch(capsys, str(items), "--out", str(tmp_path / "o.jsonl"), "--processes", "0")
    assert code == 2 and "--processes must be 1 or more" in err


@pytest.mark.serial
def test_two_processes_write_every_line_once_with_one_summary(tmp_path, server_url):
    items, out = write_items(tmp_path / "in.jsonl", 60), tmp_path / "out.jsonl"
    batch = command(argv_for(items, out, server_url, "--processes", "2", "--concurrency", "4"))
    stdout, stderr = batch.communicate(timeout=180)
    assert batch.returncode == 0, stderr
    summary = json.loads(stdout.splitlines()[-1])
    assert len(stdout.strip().splitlines()) == 1  # one summary, not one per process
    assert summary.keys() >= OLD_KEYS and summary["processes"] == 2
    assert summary["done"] == 60 and summary["calls"] == 60 and summary["remaining"] == 0
    assert summary["concurrency"]["max"] == 4
    assert lines_of(out) == Counter(f"i{i}" for i in range(60))
    assert not (tmp_path / "sessions").exists() or len(list((tmp_path / "sessions").glob("*.json"))) == 60

    rerun = command(argv_for(items, out, server_url, "--processes", "1", "--concurrency", "4"))
    stdout, _ = rerun.communicate(timeout=120)  # the same sessions, whatever the number of processes
    again = json.loads(stdout.splitlines()[-1])
    assert rerun.returncode == 0 and again["skipped"] == 60 and again["calls"] == 0


@pytest.mark.serial
@pytest.mark.parametrize("victim", ["parent", "worker"])
def test_a_kill_9_then_the_same_command_loses_nothing_and_writes_nothing_twice(tmp_path, server_url, victim):
    items, out = write_items(tmp_path / "in.jsonl", 300), tmp_path / "out.jsonl"
    argv = argv_for(items, out, server_url, "--processes", "2", "--concurrency", "4")
    batch = command(argv)
    wait_for_lines(out, 40, batch)
    workers = children(batch.pid)
    assert len(workers) >= 2, workers  # the spawn machinery may add a resource tracker
    os.kill(batch.pid if victim == "parent" else workers[-1], signal.SIGKILL)
    _, stderr = batch.communicate(timeout=60)
    if victim == "parent":
        assert batch.returncode == -9
        deadline = time.monotonic() + 30  # the orphaned workers notice and stop
        while any(Path(f"/proc/{pid}").exists() and "Z" not in _state(pid) for pid in workers):
            assert time.monotonic() < deadline, "the workers outlived their parent"
            time.sleep(0.1)
    else:
        assert batch.returncode == 4 and "worker process ended unexpectedly" in stderr
    before = lines_of(out)
    assert max(before.values()) == 1 and 40 <= len(before) < 300

    rerun = command(argv)
    stdout, stderr = rerun.communicate(timeout=180)
    assert rerun.returncode == 0, stderr
    after = lines_of(out)
    assert after == Counter(f"i{i}" for i in range(300))  # none missing, none twice
    summary = json.loads(stdout.splitlines()[-1])
    assert summary["skipped"] == len(before)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][:1]
    except (OSError, IndexError):
        return "Z"


@pytest.mark.serial
def test_max_cost_holds_across_processes_within_one_item_per_process(tmp_path, server_url):
    items = write_items(tmp_path / "in.jsonl", 200)
    probe = command(argv_for(items, tmp_path / "probe.jsonl", server_url, "--processes", "1", "--limit", "4"))
    stdout, stderr = probe.communicate(timeout=120)
    assert probe.returncode == 0, stderr
    first = json.loads(stdout.splitlines()[-1])
    per_item = first["cost_usd"] / first["calls"]
    assert per_item > 0
    limit = per_item * 30.5
    out = tmp_path / "out.jsonl"
    batch = command(argv_for(items, out, server_url, "--processes", "2", "--concurrency", "2",
                             "--max-cost", f"{limit:.9f}"))
    stdout, stderr = batch.communicate(timeout=180)
    summary = json.loads(stdout.splitlines()[-1])
    assert batch.returncode == 4 and summary["stopped"] and summary["processes"] == 2, stderr
    assert summary["cost_usd"] <= limit + 2 * per_item * 1.01  # at most one item per process past the limit
    assert 29 <= summary["done"] <= 32 and summary["calls"] == summary["done"]
    assert sum(lines_of(out).values()) == summary["done"]


def _chatter(connection, index: int) -> None:
    """A worker that only sends: 1 MB messages, so that a kill almost surely lands in the middle of one."""
    link = Link(connection)
    while True:
        link.send("rows", [index, b"x" * 1_000_000])


def test_a_worker_killed_mid_message_holds_up_no_other_worker():
    """Both workers once shared one queue, whose writers share a lock: a worker killed -9 while writing kept it,
    and the other's lines never arrived again (the batch hung at 35 of 300 items). Each now has its own pipe."""
    import multiprocessing

    context, inbox, workers = multiprocessing.get_context("spawn"), Inbox(), []
    for index in range(2):
        ours, theirs = context.Pipe()
        workers.append(context.Process(target=_chatter, args=(theirs, index), daemon=True))
        workers[-1].start()
        theirs.close()
        inbox.add(index, ours)
    try:
        def messages_until(enough) -> Counter[int]:
            got: Counter[int] = Counter()
            deadline = time.monotonic() + 60
            while not enough(got):
                assert time.monotonic() < deadline, got
                got.update(index for index, _, _ in inbox.receive(0.1))
            return got

        messages_until(lambda got: got[0] >= 3 and got[1] >= 3)
        os.kill(workers[1].pid, signal.SIGKILL)
        after = messages_until(lambda got: got[0] >= 30 and 1 not in inbox.links)
        assert 0 in inbox.links and after[1] <= 64  # at most what was in its pipe when it died
    finally:
        for worker in workers:
            worker.kill()
            worker.join()


def _spender(spend, pause, slot: int) -> None:
    spent, paused = SharedSpend(spend, slot), SharedPause(pause, slot)
    for call in range(2_000):
        spent.add(Usage(calls=1, prompt_tokens=2, completion_tokens=3, cost_usd=0.25))
        paused.value = float(slot * 10_000 + call)


def test_the_shared_spending_and_pause_lose_no_update_across_processes_without_a_lock():
    """One slot per process, each written by its own process only: no lock to be left held by a killed one,
    and no update lost to a race (one shared row without a lock would lose some of these 6,000)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    spend, pause = context.RawArray("d", 3 * SharedSpend.FIELDS), context.RawArray("d", 3)
    workers = [context.Process(target=_spender, args=(spend, pause, slot)) for slot in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert SharedSpend(spend).total() == Usage(calls=6_000, prompt_tokens=12_000, completion_tokens=18_000,
                                               cost_usd=1_500.0)
    later = SharedPause(pause, 1)
    assert later.value == 21_999.0  # the latest of all slots
    later.value = 5.0  # a slot only moves later
    assert list(pause) == [1_999.0, 11_999.0, 21_999.0]


def test_an_item_session_id_is_the_hash_of_the_whole_sessions_canonical_dump(tmp_path):
    """The id built from the template's parts is the one the full dump gives (what earlier versions wrote), so
    a batch interrupted before an upgrade resumes its sessions; and it differs with the item, seed and file."""
    import hashlib

    from debate_tui.batch.items import read_items
    from debate_tui.batch.runner import ItemSessions
    from tests.helpers.batch import prepared

    items_path = write_items(tmp_path / "in.jsonl", 3)
    batch = prepared(str(items_path), "--out", str(tmp_path / "o.jsonl"), "--protocol", "debate",
                     "--criteria", "coherence,fluency", "--option", "tie_breaker=human")
    template = batch.template
    item = read_items(items_path)[1]
    made = ItemSessions(template, 7, "/x/out.jsonl").make(item, template.criteria[1:])
    what = made.model_dump(mode="json", include={"protocol", "options", "criteria", "agents", "task"})
    canonical = json.dumps({"out": "/x/out.jsonl", "item": item.id, "work": what}, sort_keys=True,
                           ensure_ascii=False)
    assert made.id == "batch-" + hashlib.sha256(canonical.encode()).hexdigest()[:20]
    assert [c.name for c in made.criteria] == ["fluency"] and made.task == item.task
    assert made.agents == template.agents and made.criteria == template.criteria[1:]
    assert made.agents[0] is not template.agents[0] and made.criteria[0] is not template.criteria[1]  # its own
    others = {ItemSessions(template, 8, "/x/out.jsonl").make(item, template.criteria[1:]).id,
              ItemSessions(template, 7, "/y/out.jsonl").make(item, template.criteria[1:]).id,
              ItemSessions(template, 7, "/x/out.jsonl").make(read_items(items_path)[0], template.criteria[1:]).id}
    assert made.id not in others and len(others) == 3


def test_the_secrets_looked_up_once_follow_every_change_of_the_environment(monkeypatch):
    """secret_values keeps its answer between calls (it runs before every provider call), never a stale one."""
    from debate_tui import redact

    monkeypatch.setenv("SOME_API_KEY", "first-secret-value")
    assert "first-secret-value" in redact.secret_values()
    monkeypatch.setenv("SOME_API_KEY", "second-secret-value")
    assert "second-secret-value" in redact.secret_values()
    assert "first-secret-value" not in redact.secret_values()
    monkeypatch.setenv("PLAIN_NAME_FOR_TEST", "declared-secret-value")
    assert "declared-secret-value" not in redact.secret_values()
    monkeypatch.setattr(redact, "_PROTECTED", {"PLAIN_NAME_FOR_TEST"})
    assert "declared-secret-value" in redact.secret_values()
    monkeypatch.delenv("SOME_API_KEY")
    assert "second-secret-value" not in redact.secret_values()


def test_a_batch_walks_its_input_file_instead_of_holding_it(tmp_path):
    """A file's items are read again when the work is walked (only ids are kept); --limit and --shard select
    ids; stdin is held as before."""
    from debate_tui.batch.items import ItemFile
    from tests.helpers.batch import prepared

    path = write_items(tmp_path / "in.jsonl", 30)
    batch = prepared(str(path), "--out", str(tmp_path / "o.jsonl"), "--demo", "--limit", "12", "--shard", "2/3")
    assert isinstance(batch.items, ItemFile)
    expected = [f"i{i}" for i in range(12) if shard_of(f"i{i}", 3) == 2]
    assert sorted(batch.items.keep) == sorted(expected)
    work = batch.plan()
    assert len(work) == len(expected) and [item.id for item, _ in work] == expected


def test_planning_takes_the_ids_without_reading_the_file_again(tmp_path, monkeypatch):
    """The file is checked once as it is opened and walked once as it runs; planning needs only the ids."""
    from debate_tui.batch import items
    from tests.helpers.batch import prepared

    path = write_items(tmp_path / "in.jsonl", 9)
    batch = prepared(str(path), "--out", str(tmp_path / "o.jsonl"), "--demo")
    walks = []
    monkeypatch.setattr(items, "file_lines", lambda path: walks.append(path) or iter(()))
    assert len(batch.plan()) == 9 and walks == []


def test_the_streamed_reader_splits_decodes_and_bounds_as_the_whole_file_reader_did(tmp_path, monkeypatch):
    from debate_tui.batch.items import file_lines
    from debate_tui.inputs import InputError
    from debate_tui.readfile import decode, jsonl_lines

    raw = ('\ufeff{"id": 1}\r\n\n   \n{"id": "a\u2028b"}\n{"id": "\u0085"}\r\n').encode()
    path = tmp_path / "in.jsonl"
    path.write_bytes(raw)
    assert list(file_lines(path)) == list(jsonl_lines(decode(raw, "x")))
    path.write_bytes(b'{"id": 1}\n{"id": "\xff"}\n')
    with pytest.raises(InputError, match=r"not UTF-8 \(byte 0xff at offset 18\)"):
        list(file_lines(path))
    path.write_bytes(b'{"id": 1}\n' * 10)
    monkeypatch.setenv("DEBATE_TUI_MAX_BATCH_BYTES", "55")
    with pytest.raises(InputError, match="over the limit of 55 bytes"):
        list(file_lines(path))


def test_the_program_freezes_what_is_loaded_before_a_one_process_batch_and_a_test_process_does_not(
        tmp_path, monkeypatch):
    """gc.freeze() once the imports are done, as in a worker process (the collector stops rescanning litellm's
    objects); never where main() is only called from code (a test), whose frozen garbage would never go."""
    import gc

    from debate_tui import cli
    from debate_tui.assembly.batch import run_until_done
    from tests.helpers.batch import prepared

    path = write_items(tmp_path / "in.jsonl", 3)
    frozen: list[bool] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    run_until_done(prepared(str(path), "--out", str(tmp_path / "a.jsonl"), "--demo", "--processes", "1"))
    assert frozen == [] and len(lines_of(tmp_path / "a.jsonl")) == 3
    monkeypatch.setattr(cli, "_program", True)
    run_until_done(prepared(str(path), "--out", str(tmp_path / "b.jsonl"), "--demo", "--processes", "1"))
    assert frozen == [True] and len(lines_of(tmp_path / "b.jsonl")) == 3


def test_a_worker_process_settles_its_collector_as_a_one_process_batch_does(tmp_path, monkeypatch):
    """A worker (`run_part`, here in this process) freezes what is loaded and collects its young generation less
    often before it says it is ready, as `freeze_loaded` does for one process; then runs its part and ends."""
    import gc
    import multiprocessing

    from debate_tui.batch.heap import YOUNG_THRESHOLD
    from debate_tui.batch.processes import Shared, run_part
    from tests.helpers.batch import prepared

    path = write_items(tmp_path / "in.jsonl", 3)
    settled: list[str] = []
    monkeypatch.setattr(gc, "freeze", lambda: settled.append("frozen"))
    monkeypatch.setattr(gc, "set_threshold", lambda young, *older: settled.append(f"young every {young}"))
    context = multiprocessing.get_context("spawn")
    shared, (ours, theirs) = Shared.create(context, 1), context.Pipe()
    ours.send("go")  # waits in the pipe for the worker to be ready

    def build(concurrency, items, out):
        return prepared(str(path), "--out", str(out), "--demo", "--processes", "1", "--concurrency", str(concurrency))

    work = build(1, None, tmp_path / "plan.jsonl").plan()
    run_part(build, 0, 1, work, True, tmp_path / "out.jsonl", shared, theirs, os.getppid())
    messages = []
    while ours.poll(0):
        messages.append(ours.recv())
    assert settled == ["frozen", f"young every {YOUNG_THRESHOLD}"]
    assert messages[0][0] == "ready" and messages[-1][0] == "end" and messages[-1][1]["stopped"] is None
    assert sum(len(body) for kind, body in messages if kind == "rows") == 3


def test_a_default_batch_left_in_one_process_starts_its_clock_after_the_warm_up(tmp_path):
    """The default (--processes unset) on a small input runs in this process and imports litellm only then:
    the rate, the ETA and elapsed_s count from after that import, as with --processes 1."""
    import time as clock

    from debate_tui.assembly.batch import run_until_done
    from tests.helpers.batch import prepared

    batch = prepared(str(write_items(tmp_path / "in.jsonl", 3)), "--out", str(tmp_path / "o.jsonl"), "--demo")
    warmed: list[float] = []
    batch.warm_up = lambda: warmed.append(clock.monotonic())
    run_until_done(batch)
    assert batch.processes == 1 and len(warmed) == 1
    assert batch._started >= warmed[0] and batch.progress.started >= warmed[0]
