"""Runs a batch: every item as a normal session, N at a time, each finished item's line written as soon as
its session is on disk (`SessionWriter`).

Resuming. A rerun of the same command keeps every line already settled in the
results file (completed or needs_human) and runs the rest. Each item's session
id is derived from the results file, the item and the whole configuration,
so a rerun finds the session of an item that was interrupted, failed or
cancelled and resumes it: the runner replays its recorded turns and only the
missing ones cost calls. A session that finished but whose line was never
written (a crash in between) just gets its line. When the results file does
not exist yet the batch is new and any such session is overwritten.

Client stack, outermost first: response cache (hits cost nothing and skip
everything below) -> adaptive concurrency (halved on a 429, grown back on
successes) -> global 429 backoff -> meter and budget -> the model.

Stopping. A budget stop schedules no new item and refuses new calls, so
in-flight items end cancelled at their next call; an interrupt (`stop()`)
also cancels the calls in flight. Cancelled items get no line and are resumed
by the next run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pydantic_core import to_jsonable_python

from debate_tui.batch.items import Item, Items, ids_of, only
from debate_tui.batch.loop import run_calls_inline
from debate_tui.batch.network import AdaptiveLimit, GlobalBackoff, Meter
from debate_tui.batch.progress import Progress, Tally
from debate_tui.batch.results import FINAL, ResultsFile, settled
from debate_tui.batch.rows import item_rows
from debate_tui.batch.session_writer import SessionWriter
from debate_tui.domain import AgentSpec, Criterion, Session
from debate_tui.engine.budget import Budget
from debate_tui.engine.control import RunControl
from debate_tui.engine.runner import RetryPolicy
from debate_tui.factory import runner_for
from debate_tui.llm.base import LLMClient
from debate_tui.llm.cache import CachingClient, ResponseCache
from debate_tui.store import SessionFileError, SessionStore, read_session

PROGRESS_TICK_S = 1.0


@dataclass
class BatchSettings:
    concurrency: int = 8
    budget: Budget = field(default_factory=Budget)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    seed: int = 0
    """Base of every item's seed: each item draws from hash(seed, id), the same on every rerun."""
    progress_interval_s: float = 10.0


def item_seed(seed: int, item_id: str) -> int:
    return int(hashlib.sha256(f"{seed}:{item_id}".encode()).hexdigest()[:8], 16) % 2**31


class ItemSessions:
    """Each item's session, with an id that is the same whenever the same work is asked again.

    The id is a hash of the work's canonical JSON, exactly as the session's own dump would give it (a batch
    interrupted by an earlier version resumes the same sessions). It is put together from parts: those shared
    by every item (agents, criteria, protocol) dumped once, the item's own (id, seed, task) per item, which
    saves the session's full dump and the throwaway time-stamped id a new session draws.
    """

    def __init__(self, template: Session, seed: int, out_key: str):
        self.template, self.seed, self.out_key = template, seed, out_key
        self._options = to_jsonable_python(template.options)
        self._agents = [agent.model_dump(mode="json") for agent in template.agents]
        self._head = f'"out": {_canonical(out_key)}, "work": {{"agents": {_canonical(self._agents)}, '
        self._criteria: dict[tuple[str, ...], tuple[list[dict[str, Any]], str]] = {}

    def make(self, item: Item, criteria: list[Criterion]) -> Session:
        seed = item_seed(self.seed, item.id)
        names = tuple(c.name for c in criteria)
        if (known := self._criteria.get(names)) is None:
            dumped = [c.model_dump(mode="json") for c in criteria]
            known = self._criteria[names] = (dumped, _canonical(dumped))
        dumped, criteria_json = known
        canonical = (f'{{"item": {_canonical(item.id)}, {self._head}"criteria": {criteria_json}, '
                     f'"options": {_canonical({**self._options, "seed": seed})}, '
                     f'"protocol": {_canonical(self.template.protocol)}, '
                     f'"task": {_canonical(item.task.model_dump(mode="json"))}}}}}')
        return Session(  # the template's agents and criteria copied, as their dumps read back
            id="batch-" + hashlib.sha256(canonical.encode()).hexdigest()[:20], protocol=self.template.protocol,
            options={**self.template.options, "seed": seed}, criteria=[Criterion.model_validate(c) for c in dumped],
            agents=[AgentSpec.model_validate(a) for a in self._agents], task=item.task, spec=self.template.spec,
            seal=self.template.seal,
        )


def _canonical(value: Any) -> str:
    """A part of the canonical JSON, as a whole `json.dumps(..., sort_keys=True, ensure_ascii=False)` writes it."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class Work:
    """What a run has left: each item's missing criteria by id; the items themselves read when it is their turn
    (from their file, when it is one), so a long input is never held in memory."""

    def __init__(self, items: Items, missing: dict[str, list[Criterion]]):
        self.items = items
        self.missing = missing

    def __len__(self) -> int:
        return len(self.missing)

    def __iter__(self) -> Iterator[tuple[Item, list[Criterion]]]:
        for item in self.items:
            if (criteria := self.missing.get(item.id)) is not None:
                yield item, criteria

    def part(self, ids: list[str]) -> Work:
        """The work of these ids alone (a worker process's part)."""
        return Work(only(self.items, ids), {i: self.missing[i] for i in ids})


class BatchRun:
    adaptive = True
    """Calls in flight follow the provider's 429s (`AdaptiveLimit`), between 1 and --concurrency."""

    def __init__(
        self,
        items: Items,
        template: Session,
        results: ResultsFile,
        store: SessionStore,
        model: LLMClient,
        *,
        cache: ResponseCache | None = None,
        settings: BatchSettings | None = None,
        progress: TextIO | None = None,
        tty: bool | None = None,
    ):
        self.items = items
        self.template = template
        self.results = results
        self.store = store
        self.settings = settings or BatchSettings()
        self.tally = Tally()
        self.meter = Meter(model, self.settings.budget, on_exceeded=self._budget_reached)
        self.backoff = GlobalBackoff(self.meter, base_delay_s=self.settings.retry.base_delay_s or 1.0)
        self.limit = AdaptiveLimit(self.backoff, self.settings.concurrency) if self.adaptive else None
        network: LLMClient = self.limit or self.backoff  # a slot first, then the pause: nothing that waited
        # for a slot goes out during a pause that began meanwhile
        self.cache = CachingClient(network, cache) if cache is not None else None
        self.client: LLMClient = self.cache or network
        self.progress = Progress(self.tally, stream=progress, tty=tty, interval_s=self.settings.progress_interval_s)
        self.stop_reason: str | None = None
        self._controls: set[RunControl] = set()
        self.writer = SessionWriter()
        self._fresh = True
        self._out_key = str(results.path.resolve())
        """Part of every item's session id: one batch's items never share sessions with another's."""
        self.sessions = ItemSessions(template, self.settings.seed, self._out_key)
        self._started = time.monotonic()

    # ----- control ------------------------------------------------------------------

    def stop(self, reason: str) -> None:
        """Start nothing new and cancel the calls in flight (Ctrl+C)."""
        self.stop_reason = self.stop_reason or reason
        for control in list(self._controls):
            control.stop(reason)

    def _budget_reached(self, reason: str) -> None:
        self.stop_reason = self.stop_reason or reason

    # ----- the run --------------------------------------------------------------------

    async def run(self) -> Tally:
        with self.results.locked("a batch"):
            await self.execute(self.plan())
        return self.tally

    async def execute(self, work: Work) -> None:
        """Run `work` (what `plan` left, or a worker process's part of it) with progress, sessions and lines."""
        self.tally.total = len(work)
        self._started = self.progress.started = time.monotonic()
        ticker = asyncio.ensure_future(self._tick())
        try:
            async with self.writer.running():
                await self._run_items(work)
        finally:
            ticker.cancel()
            self.results.close()
            self._sync_usage()
            self.progress.close()

    def plan(self) -> Work:
        """What is left to do; superseded, unfinished and cut-off lines are dropped from the file first."""
        self._fresh = not self.results.exists()
        read = self.results.read()
        keep = settled(read.rows)
        if read.truncated or len(keep) != len(read.rows):
            self.results.rewrite(keep.values())
        missing: dict[str, list[Criterion]] = {}
        names = {c.name for c in self.template.criteria}
        for item_id in ids_of(self.items):
            if not keep:  # a new batch: every item has all to do, and shares one list
                missing[item_id] = self.template.criteria
            elif names - (done := {c for c in names if (item_id, c) in keep}):
                missing[item_id] = [c for c in self.template.criteria if c.name not in done]
            else:
                self.tally.skipped += 1
        return Work(self.items, missing)

    async def _run_items(self, work: Work) -> None:
        """`concurrency` workers take items off one queue; provider batches run them all at once instead."""
        run_calls_inline(asyncio.get_running_loop())  # this process makes the calls (batch/loop.py says why)
        pending = iter(work)
        async with asyncio.TaskGroup() as group:
            for _ in range(min(self.settings.concurrency, len(work))):
                group.create_task(self._worker(pending))

    async def _worker(self, pending: Iterator[tuple[Item, list[Criterion]]]) -> None:
        for item, criteria in pending:
            await self.writer.room()
            if self.stop_reason is not None:
                return
            await self._one(item, criteria)
            self._sync_usage()
            self.progress.update()

    async def _one(self, item: Item, criteria: list[Criterion]) -> None:
        session, path = self._session_for(item, criteria)
        if session.status not in FINAL:
            control = RunControl()
            self._controls.add(control)
            runner = runner_for(session, self.client, save=lambda s: self.writer.save(path, s), control=control,
                                retry=self.settings.retry, stream=False)
            try:
                await runner.run()
            finally:
                self._controls.discard(control)
            self.tally.count_turns(session)
        self.tally.count(session.status)
        if session.status in FINAL or session.status == "failed":
            rows = item_rows(item, session)
            self.writer.then(path, lambda: self.results.append(rows))

    def _session_for(self, item: Item, criteria: list[Criterion]) -> tuple[Session, Path]:
        """The item's session (the saved one when a rerun finds it) and its file."""
        fresh = self.sessions.make(item, criteria)
        path = self.store.path_for(fresh.id)
        if self._fresh or not path.exists():
            return fresh, path
        try:
            return read_session(path), path
        except SessionFileError:
            return fresh, path  # unreadable: start the item again rather than stop the batch

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(PROGRESS_TICK_S)
            self._sync_usage()
            self.progress.update()

    def _sync_usage(self) -> None:
        self.tally.spent = self.meter.spent
        self.tally.cache_hits = self.cache.stats.hits if self.cache else 0

    def summary(self) -> dict[str, Any]:
        t, spent = self.tally, self.meter.spent
        return {
            "done": t.done, "skipped": t.skipped, "failed": t.failed, "needs_human": t.needs_human,
            "cancelled": t.cancelled, "remaining": t.total - t.finished,
            "calls": spent.calls, "cache_hits": t.cache_hits, "rate_limited": self.backoff.rate_limited,
            "concurrency": self.limit and {"max": self.limit.maximum, "lowest": self.limit.lowest,
                                           "final": self.limit.limit, "cuts": self.limit.cuts},
            "prompt_tokens": spent.prompt_tokens, "completion_tokens": spent.completion_tokens,
            "cost_usd": round(spent.cost_usd, 6), "elapsed_s": round(time.monotonic() - self._started, 3),
            "unscored": t.unscored, "truncated": t.truncated,
            "out": str(self.results.path), "stopped": self.stop_reason,
        }

