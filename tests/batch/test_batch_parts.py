"""The batch's parts on their own: global backoff, meter, progress lines, results file, rows."""

from __future__ import annotations

import asyncio
import io
import json
import threading
import time

import pytest

from debate_tui.batch.network import AdaptiveLimit, GlobalBackoff, Meter
from debate_tui.batch.progress import Progress, Tally
from debate_tui.batch.results import ResultsBusy, ResultsError, ResultsFile, settled
from debate_tui.domain import Usage
from debate_tui.engine.budget import Budget, BudgetExceeded
from debate_tui.engine.control import Stopped
from debate_tui.llm.base import ChatRequest, Completion, LLMError
from tests.helpers.sessions import make_session

REQUEST = ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}])


class Clock:
    """A fake monotonic clock whose sleep just moves time on, recording each wait."""

    def __init__(self):
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


class Scripted:
    """Raises or answers in order."""

    def __init__(self, *outcomes):
        self.outcomes = list(outcomes)
        self.calls = 0

    async def complete(self, request, on_delta=None):
        self.calls += 1
        outcome = self.outcomes.pop(0) if self.outcomes else "ok"
        if isinstance(outcome, Exception):
            raise outcome
        return Completion(text=outcome, usage=Usage(calls=1, prompt_tokens=100, completion_tokens=10, cost_usd=0.5))


async def test_a_429_holds_every_later_call_until_retry_after():
    clock = Clock()
    limited = Scripted(LLMError("rate_limit", "slow down", retry_after=3.0))
    backoff = GlobalBackoff(limited, clock=clock, sleep=clock.sleep)
    with pytest.raises(LLMError):
        await backoff.complete(REQUEST)  # re-raised: the runner's retry policy still applies
    assert backoff.resume_at == 103.0
    await backoff.complete(REQUEST)
    await backoff.complete(REQUEST)
    assert clock.slept == [3.0] and backoff.waits == 1 and backoff.rate_limited == 1


async def test_without_retry_after_the_pause_doubles_with_each_consecutive_429_and_resets():
    clock = Clock()
    limited = [LLMError("rate_limit", "429") for _ in range(3)]
    backoff = GlobalBackoff(Scripted(*limited, "ok", LLMError("rate_limit", "429")), base_delay_s=0.5,
                            clock=clock, sleep=clock.sleep)
    for _ in range(3):
        with pytest.raises(LLMError):
            await backoff.complete(REQUEST)
    await backoff.complete(REQUEST)
    with pytest.raises(LLMError):
        await backoff.complete(REQUEST)
    assert clock.slept == [0.5, 1.0, 2.0] and backoff.resume_at == clock.now + 0.5


async def test_other_errors_do_not_pause():
    clock = Clock()
    backoff = GlobalBackoff(Scripted(LLMError("server", "500")), clock=clock, sleep=clock.sleep)
    with pytest.raises(LLMError):
        await backoff.complete(REQUEST)
    assert backoff.resume_at == 0.0


class Crowded:
    """A provider that answers 429 to any call beyond `capacity` at once, like a concurrency-limited key.

    A call takes a few turns of the event loop, not a wall-clock time: how many overlap, and so how many are
    refused, is the same on a loaded machine as on an idle one."""

    def __init__(self, capacity: int):
        self.capacity, self.in_flight, self.peak, self.refused = capacity, 0, 0, 0

    async def complete(self, request, on_delta=None):
        if self.in_flight >= self.capacity:
            self.refused += 1
            raise LLMError("rate_limit", "429 too many requests at once")
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            for _ in range(4):
                await asyncio.sleep(0)
        finally:
            self.in_flight -= 1
        return Completion(text="ok", usage=Usage(calls=1))


async def _sixteen_workers(client, calls_each: int = 25) -> None:
    """16 workers that retry a call until it goes through, as the runner's retry policy does."""
    async def worker() -> None:
        for _ in range(calls_each):
            while True:
                try:
                    await client.complete(REQUEST)
                    break
                except LLMError:
                    await asyncio.sleep(0)
    await asyncio.gather(*(worker() for _ in range(16)))


async def test_repeated_429s_shrink_the_calls_in_flight_to_what_the_provider_takes():
    unlimited, limited = Crowded(capacity=3), Crowded(capacity=3)
    await _sixteen_workers(unlimited)
    limit = AdaptiveLimit(limited, maximum=16)
    await _sixteen_workers(limit)
    assert limit.lowest <= 3
    assert limited.refused * 5 < unlimited.refused, (limited.refused, unlimited.refused)
    assert limit.in_flight == 0


async def test_one_round_of_429s_cuts_once_and_successes_grow_the_limit_back():
    """Eight calls sent together all get a 429: one cut (16 -> 8), not eight (16 -> 1)."""
    gate = asyncio.Event()

    class Burst:
        async def complete(self, request, on_delta=None):
            await gate.wait()
            raise LLMError("rate_limit", "429")

    limit = AdaptiveLimit(Burst(), maximum=16)
    calls = [asyncio.ensure_future(limit.complete(REQUEST)) for _ in range(8)]
    await asyncio.sleep(0)
    gate.set()
    await asyncio.gather(*calls, return_exceptions=True)
    assert (limit.limit, limit.cuts) == (8, 1)
    limit.inner = Scripted()
    for _ in range(8 + 9):  # 8 successes at limit 8 raise it to 9, then 9 more to 10
        await limit.complete(REQUEST)
    assert limit.limit == 10 and limit.lowest == 8


async def test_calls_beyond_the_limit_wait_for_a_slot():
    crowded = Crowded(capacity=100)
    limit = AdaptiveLimit(crowded, maximum=4)
    await asyncio.gather(*(limit.complete(REQUEST) for _ in range(20)))
    assert crowded.peak == 4 and limit.in_flight == 0


async def test_the_meter_counts_real_usage_and_refuses_the_call_that_would_pass_the_budget():
    reasons: list[str] = []
    inner = Scripted()
    meter = Meter(inner, Budget(max_cost=1.05), on_exceeded=reasons.append)
    await meter.complete(REQUEST)
    await meter.complete(REQUEST)  # $1.00 spent; a large third prompt would pass $1.05
    with pytest.raises(BudgetExceeded, match="cost budget reached"):
        huge = [{"role": "user", "content": "x " * 900000}]
        await meter.complete(ChatRequest(model="openai/gpt-4o-mini", messages=huge))
    with pytest.raises(Stopped):  # and nothing starts after that, whatever its size
        await meter.complete(REQUEST)
    assert inner.calls == 2 and meter.spent.cost_usd == 1.0 and len(reasons) == 1


async def test_a_token_budget_counts_the_next_prompt():
    meter = Meter(Scripted(), Budget(max_tokens=225))
    await meter.complete(REQUEST)  # 110 tokens spent
    await meter.complete(REQUEST)  # 220 spent: the next prompt (about 8 tokens) would pass 225
    with pytest.raises(BudgetExceeded, match="token budget reached: 220 tokens spent"):
        await meter.complete(REQUEST)


def test_progress_on_a_terminal_redraws_one_line():
    clock, stream = Clock(), io.StringIO()
    tally = Tally(total=10, skipped=2)
    progress = Progress(tally, stream=stream, tty=True, clock=clock, width=200)
    clock.now += 2
    tally.done, tally.spent = 4, Usage(calls=8, prompt_tokens=1500, completion_tokens=100, cost_usd=0.0123)
    progress.update(force=True)
    progress.close()
    text = stream.getvalue()
    assert text.startswith("\r4/10  [########............]  2.00 items/s  ETA 0:03  1.6k tokens  $0.0123")
    assert "8 calls" in text and "2 already done" in text and text.endswith("\n") and text.count("\n") == 1
    narrow = Progress(tally, stream=io.StringIO(), tty=True, clock=clock, width=40)
    narrow.update(force=True)
    assert len(narrow.stream.getvalue()) == 1 + 39  # cut to the terminal: a wrapped line cannot be redrawn


def test_progress_in_a_log_prints_at_each_tenth_or_period_not_more():
    clock, stream = Clock(), io.StringIO()
    tally = Tally(total=100)
    progress = Progress(tally, stream=stream, tty=False, interval_s=30, clock=clock)
    for _ in range(25):
        tally.done += 1
        clock.now += 0.1
        progress.update()
    assert stream.getvalue().count("\n") == 2  # at 10 and 20 done
    clock.now += 31
    progress.update()
    assert stream.getvalue().count("\n") == 3  # the period passed
    progress.close()
    assert stream.getvalue().count("\n") == 3  # the last line already shows the final state
    assert all(line.startswith("batch: ") and "\r" not in line for line in stream.getvalue().splitlines())


def test_results_file_forgives_only_a_cut_off_last_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "a", "criterion": "c", "status": "completed"}\n{"id": "b", "crit')
    read = ResultsFile(path).read()
    assert read.truncated and [r["id"] for r in read.rows] == ["a"]
    path.write_text('{"id": "a"}\nnot json\n{"id": "b"}\n')
    with pytest.raises(ResultsError, match="r.jsonl:2"):
        ResultsFile(path).read()


def test_settled_keeps_the_last_final_row_of_each_item_and_criterion():
    rows = [{"id": "a", "criterion": "c", "status": "failed"}, {"id": "a", "criterion": "c", "status": "completed"},
            {"id": "b", "criterion": "c", "status": "completed"}, {"id": "b", "criterion": "c", "status": "failed"},
            {"id": "c", "criterion": "c", "status": "needs_human"}]
    assert {k: r["status"] for k, r in settled(rows).items()} == {("a", "c"): "completed", ("c", "c"): "needs_human"}


def test_replacing_a_sessions_rows_keeps_their_place_and_the_rest(tmp_path):
    results = ResultsFile(tmp_path / "r.jsonl")
    results.rewrite([{"id": "a", "session": "s1"}, {"id": "b", "session": "s2", "criterion": "x"},
                     {"id": "b", "session": "s2", "criterion": "y"}, {"id": "c", "session": "s3"}])
    results.replace_session("s2", [{"id": "b", "session": "s2", "criterion": "x", "status": "completed"},
                                   {"id": "b", "session": "s2", "criterion": "y", "status": "completed"}])
    rows = [json.loads(line) for line in results.path.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b", "b", "c"] and rows[1]["status"] == "completed"


def test_the_lock_is_exclusive_and_names_its_holder(tmp_path):
    results = ResultsFile(tmp_path / "r.jsonl")
    with (results.locked("a batch"), pytest.raises(ResultsBusy, match=r"in use \(a batch, pid \d+\)"),
          ResultsFile(tmp_path / "r.jsonl").locked("a review")):
        pass
    with results.locked("a review"):
        pass


def _item_session(status: str = "running", turns: int = 0):
    from debate_tui.domain import Turn

    session = make_session()
    session.status = status
    session.turns = [Turn(slot=i, agent="Scorer", role="scorer", round=1, content=f"Score: {i + 1}", score=i + 1)
                     for i in range(turns)]
    return session


async def test_an_items_session_is_written_once_it_holds_a_turn_or_ends(tmp_path) -> None:
    from debate_tui.batch.session_writer import SessionWriter
    from debate_tui.store import read_session

    writer = SessionWriter()
    empty, turned, failed = tmp_path / "empty.json", tmp_path / "turned.json", tmp_path / "failed.json"
    async with writer.running():
        writer.save(empty, _item_session())
        writer.save(turned, _item_session(turns=1))
        writer.save(failed, _item_session("failed"))
    assert not empty.exists(), "a batch starts an item again rather than keep a session with nothing in it"
    assert read_session(turned).turns[0].content == "Score: 1"
    assert read_session(failed).status == "failed", "a first call that failed leaves its session"


async def test_saves_that_arrive_together_are_one_write_of_the_latest_state(tmp_path) -> None:
    from debate_tui.batch.session_writer import SessionWriter
    from debate_tui.store import read_session

    writer, path, session = SessionWriter(), tmp_path / "item.json", _item_session(turns=1)
    async with writer.running():
        writer.save(path, session)  # the turn's save and the end's save, with no await between them
        session.status = "completed"
        writer.save(path, session)
    assert writer.files_written == 1 and read_session(path).status == "completed"
    assert not list(tmp_path.glob(".*.tmp")), "no temporary file is left behind"


def _counting_writes(monkeypatch) -> tuple[list[list[str]], list[int]]:
    """The slices written on the loop's thread (their files' names) and the groups written in another thread
    (their sizes); called on the loop's thread."""
    from debate_tui.batch import session_writer

    slices, hops, write, loop_thread = [], [], session_writer.write_all_atomic, threading.get_ident()

    def counted(files, **kwargs):
        if threading.get_ident() == loop_thread:
            slices.append([path.name for path, _ in files])
        else:
            hops.append(len(files))
        write(files, **kwargs)

    monkeypatch.setattr(session_writer, "write_all_atomic", counted)
    return slices, hops


async def test_a_busy_loop_writes_a_backlog_itself_in_slices_each_line_after_its_own(tmp_path, monkeypatch) -> None:
    """A thread would wait for the interpreter's lock after every system call while the loop computes."""
    from debate_tui.batch import session_writer

    slices, hops = _counting_writes(monkeypatch)
    # Any CPU the loop's thread spent since the last write counts as busy: on a loaded machine the computing loop
    # gets less than half of its wall time, which is the writer's real rule but not what this test is about.
    monkeypatch.setattr(session_writer, "BUSY_SHARE", 0.0)
    writer, size, lines, busy = session_writer.SessionWriter(), session_writer.SLICE_FILES, [], True

    async def compute() -> None:  # the loop's thread kept busy, as by a batch against a fast server
        while busy:
            spent = time.thread_time()
            while time.thread_time() - spent < 0.02:
                pass
            await asyncio.sleep(0)

    backlog = 2 * size + 1
    async with writer.running():
        computing = asyncio.ensure_future(compute())
        for n in range(backlog):  # saved with no await between: one write of them all
            writer.save(tmp_path / f"{n}.json", _item_session(turns=1))
            writer.then(tmp_path / f"{n}.json", lambda n=n: lines.append((n, len(slices))))
        while len(lines) < backlog:
            await asyncio.sleep(0.01)
        busy = False
        await computing
    assert hops == [] and [len(names) for names in slices] == [size, size, 1]
    assert lines == [(n, n // size + 1) for n in range(backlog)], "each line right after its own slice"
    assert writer.files_written == backlog and all((tmp_path / f"{n}.json").exists() for n in range(backlog))


async def test_an_idle_loop_hands_a_backlog_to_a_thread_and_writes_a_few_files_itself(tmp_path, monkeypatch) -> None:
    """Waiting for replies, the loop lets the thread's system calls overlap its waiting: a thread of the writer's
    own, also where the loop's default executor runs its work inline (a batch's, batch/loop.py)."""
    from debate_tui.batch import session_writer
    from debate_tui.batch.loop import InlineExecutor

    asyncio.get_running_loop().set_default_executor(InlineExecutor())
    slices, hops = _counting_writes(monkeypatch)
    writer, first, backlog = session_writer.SessionWriter(), tmp_path / "first.json", session_writer.SLICE_FILES + 1
    async with writer.running():
        writer.save(first, _item_session(turns=1))
        while not first.exists():
            await asyncio.sleep(0.001)
        for n in range(backlog):
            writer.save(tmp_path / f"{n}.json", _item_session(turns=1))
        while not (tmp_path / f"{backlog - 1}.json").exists():
            await asyncio.sleep(0.001)
    assert slices == [["first.json"]] and hops == [backlog], "one file on the loop, the backlog in one thread's call"
    assert writer.files_written == backlog + 1


async def test_a_results_line_waits_for_its_session_on_disk(tmp_path) -> None:
    """`then` runs after the latest state is written, also when a newer state arrives during the write."""
    from debate_tui.batch.session_writer import SessionWriter
    from debate_tui.store import read_session

    writer, path, seen = SessionWriter(), tmp_path / "item.json", []
    session = _item_session(turns=1)
    async with writer.running():
        writer.save(path, session)
        await asyncio.sleep(0)  # the writer takes the first state
        session.status = "completed"
        writer.save(path, session)
        writer.then(path, lambda: seen.append(read_session(path).status))
        writer.then(tmp_path / "never-saved.json", lambda: seen.append("at once"))
        assert seen == ["at once"]
    assert seen == ["at once", "completed"]


async def test_a_failed_write_stops_the_batch_and_every_later_save(tmp_path) -> None:
    from debate_tui.batch.session_writer import SessionWriter

    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    writer, seen = SessionWriter(), []
    with pytest.raises(OSError):
        async with writer.running():
            writer.save(blocker / "item.json", _item_session(turns=1))
            writer.then(blocker / "item.json", lambda: seen.append("line"))
            for _ in range(3):
                await asyncio.sleep(0.05)
    assert seen == [], "no results line for a session that was not written"
    with pytest.raises(OSError):
        writer.save(tmp_path / "other.json", _item_session(turns=1))


async def test_workers_wait_while_too_many_sessions_are_unwritten(tmp_path) -> None:
    """A slow disk slows the batch down instead of piling sessions up in memory."""
    from debate_tui.batch.session_writer import SessionWriter

    writer = SessionWriter(max_pending=2)
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    async with writer.running():
        writer.save(first, _item_session(turns=1))
        await writer.room()  # one pending: room at once
        assert not first.exists()
        writer.save(second, _item_session(turns=1))
        await writer.room()  # two pending: wait until they are written
        assert first.exists() and second.exists()
