"""`batch --processes N`: the items in N worker processes, one results file, one progress line, one budget.

Why. litellm costs several milliseconds of one core per call, so one Python
process tops out near 150-170 calls a second however many workers it runs;
against a fast server (a local vLLM, a generous rate limit) the client is the
bottleneck. Each worker process here is a whole batch of its own over its part
of the items, with its share of --concurrency.

Who does what. The parent holds the results file's lock, plans the work as one
process would (what is left after a resume), splits it by the stable hash
`--shard` uses, and is the only writer of the results file: a worker sends an
item's lines once its session is on disk, the parent appends them. The parent
also draws the one progress line (from each worker's counts) and prints the
one summary. What must hold across processes lives in shared memory: the
budget's spending (each call is checked against what all processes spent, so
the overshoot is at most one call per slot in flight, as in one process) and
the 429 pause (a 429 anywhere holds every process's calls), one slot per
process and no lock (`SharedSpend` says why). Each process keeps
its own adaptive limit on its share. The response cache is one SQLite file
that several processes may share.

Kills. A worker killed -9 loses only what it had not sent: its sessions are on
disk and a rerun resumes them; the parent lets the others finish and stops
with a reason (exit 4). Each worker talks to the parent through a pipe of its
own (`Link`), so its death cannot hold up the others. The parent killed -9:
its workers see it gone within half a second and stop (their in-flight items
end cancelled, resumable); a line the parent never appended is written by the
rerun, which finds the item's finished session. Only the parent appends, so
no line is written twice.

The clock of the summary's `elapsed_s` starts when every worker has imported
and is ready, as one process's starts after litellm's import.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from debate_tui.batch.heap import settle
from debate_tui.batch.items import Items
from debate_tui.batch.loop import loop_factory
from debate_tui.batch.network import SharedPause, SharedSpend
from debate_tui.batch.progress import Tally
from debate_tui.batch.results import Row
from debate_tui.batch.runner import BatchRun, Work
from debate_tui.batch.shards import shard_of

MIN_ITEMS_PER_PROCESS = 200
"""The default starts another process only for this many items each: a process costs about two seconds of
imports, which a few hundred calls repay on a fast server."""
ORPHAN_CHECK_S = 0.5
COUNTS = ("done", "needs_human", "failed", "cancelled", "cache_hits", "unscored", "truncated")
"""Tally fields a worker reports and the parent sums."""

Build = Callable[[int, Items, Path], BatchRun]
"""(concurrency, items, results path) -> a one-process batch over those items, built from the same flags."""


def processes_for(requested: int | None, concurrency: int, items: int) -> int:
    """--processes N, else the cores; never more than --concurrency or the items (a default: MIN_ITEMS_PER_PROCESS)."""
    if requested is None:
        requested = min(os.cpu_count() or 1, items // MIN_ITEMS_PER_PROCESS)
    return max(1, min(requested, concurrency, items))


def shares(total: int, parts: int) -> list[int]:
    """`total` split into `parts` near-equal whole shares (concurrency per process)."""
    return [total // parts + (index < total % parts) for index in range(parts)]


def split(work: Work, parts: int) -> list[Work]:
    """Each item to the part `--shard I/parts` would give it to (a part of a file's items is their ids)."""
    ids: list[list[str]] = [[] for _ in range(parts)]
    for item_id in work.missing:
        ids[shard_of(item_id, parts) - 1].append(item_id)
    return [work.part(part) for part in ids]


@dataclass
class Shared:
    """What the processes of one batch share in memory: the pause and the spending, a slot for each process."""

    pause: Any
    spend: Any

    @classmethod
    def create(cls, context: Any, processes: int) -> Shared:
        return cls(context.RawArray("d", processes), context.RawArray("d", SharedSpend.FIELDS * processes))


class Link:
    """A worker's end of its own pipe to the parent: its messages up, the parent's "go" down.

    A pipe for each worker, not one queue for all: a queue's writers share a lock, and a worker killed -9
    while holding it stalled every other worker's lines for good (the batch hung). A pipe of its own dies with
    its worker, and the parent reads that as its end. Used from the worker's main thread only.
    """

    def __init__(self, connection: Connection):
        self.connection = connection

    def send(self, kind: str, body: Any) -> None:
        with contextlib.suppress(OSError):  # the parent is gone: the watch on it stops this worker
            self.connection.send((kind, body))

    def wait_for_go(self) -> bool:
        """Block until the parent says go (every worker is ready); False if the parent is gone."""
        try:
            return bool(self.connection.recv() == "go")
        except (EOFError, OSError):
            return False


class Inbox:
    """The parent's ends of the workers' pipes (`Link`): what each sent, in its order, until its pipe closes."""

    def __init__(self) -> None:
        self.links: dict[int, Connection] = {}

    def __bool__(self) -> bool:
        return bool(self.links)

    def add(self, index: int, connection: Connection) -> None:
        self.links[index] = connection

    def receive(self, timeout_s: float) -> list[tuple[int, str, Any]]:
        """What the workers sent within `timeout_s`; a pipe at its end (its worker exited or died) is closed."""
        readable = wait(list(self.links.values()), timeout_s)
        messages = []
        for index, link in list(self.links.items()):
            if link not in readable:
                continue
            try:
                while link.poll():  # all it has sent so far, in order
                    kind, body = link.recv()
                    messages.append((index, kind, body))
            except (EOFError, OSError):  # a worker killed mid-message ends here too
                self.links.pop(index).close()
        return messages

    def go(self) -> None:
        """Tell every worker still here to start."""
        for link in self.links.values():
            with contextlib.suppress(OSError):  # a worker that died since: its pipe says so
                link.send("go")


class PartResults:
    """A worker's results file: its lines go to the parent, the one writer of the real file."""

    def __init__(self, path: Path, link: Link):
        self.path = path
        self.link = link

    def append(self, rows: list[Row]) -> None:
        self.link.send("rows", rows)

    def close(self) -> None:
        """Nothing to close: the parent owns the file."""


class PartProgress:
    """A worker's progress: its counts to the parent (at most every `interval_s`, and at the end), no line."""

    def __init__(self, tally: Tally, link: Link, interval_s: float = 0.2):
        self.tally = tally
        self.link = link
        self.interval_s = interval_s
        self.started = self._sent = 0.0

    def update(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._sent >= self.interval_s:
            self._sent = now
            self.link.send("counts", {name: getattr(self.tally, name) for name in COUNTS})

    def close(self) -> None:
        self.update(force=True)


def run_part(build: Build, index: int, concurrency: int, work: Work, fresh: bool, out: Path, shared: Shared,
             connection: Connection, parent: int) -> None:
    """A worker process: its batch over its part, lines and counts to the parent, then its end state."""
    link = Link(connection)
    try:
        batch = build(concurrency, work.items, out)
    except Exception as exc:  # the parent checked the same flags and items: this is rare, and said in one line
        link.send("failed", f"worker process {index + 1}: {exc}")
        return
    batch.results = PartResults(out, link)  # type: ignore[assignment]  # only append/close are used
    batch.progress = PartProgress(batch.tally, link)  # type: ignore[assignment]  # same
    batch._fresh = fresh
    batch.meter.pool = SharedSpend(shared.spend, index)
    batch.backoff.cell = SharedPause(shared.pause, index)
    settle()  # as a one-process batch does: a worker process is the program's own
    link.send("ready", None)
    if not link.wait_for_go():
        return
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        runner.run(_run_watched(batch, work, parent))
    limit = batch.limit
    link.send("end", {
        "stopped": batch.stop_reason, "rate_limited": batch.backoff.rate_limited,
        "concurrency": limit and {"max": limit.maximum, "lowest": limit.lowest, "final": limit.limit,
                                  "cuts": limit.cuts},
    })


async def _run_watched(batch: BatchRun, work: Work, parent: int) -> None:
    """The part's work, stopped by SIGTERM/SIGINT (the parent's stop, a Ctrl+C) or the parent's death."""
    loop = asyncio.get_running_loop()
    for sig, why in ((signal.SIGINT, "interrupted (Ctrl+C)"), (signal.SIGTERM, "terminated")):
        loop.add_signal_handler(sig, batch.stop, why)
    watch = asyncio.ensure_future(_watch_parent(batch, parent))
    try:
        await batch.execute(work)
    finally:
        watch.cancel()


async def _watch_parent(batch: BatchRun, parent: int) -> None:
    while os.getppid() == parent:
        await asyncio.sleep(ORPHAN_CHECK_S)
    batch.stop("the batch's parent process ended")


class ProcessBatch(BatchRun):
    """A batch whose items run in worker processes (`processes_for`); with one process, a plain `BatchRun`."""

    def __init__(self, *args: Any, build: Build, processes: int | None = None,
                 warm_up: Callable[[], None] = lambda: None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.build = build
        self.requested = processes
        self.warm_up = warm_up
        self.processes = 1
        self._workers: list[Any] = []
        self._counts: dict[int, dict[str, int]] = {}
        self._ends: dict[int, dict[str, Any]] = {}
        self._inbox = Inbox()
        self._pool: SharedSpend | None = None

    def stop(self, reason: str) -> None:
        super().stop(reason)
        for worker in self._workers:
            if worker.exitcode is None:
                with contextlib.suppress(OSError):
                    os.kill(worker.pid, signal.SIGTERM)

    async def _run_items(self, work: Work) -> None:
        self.processes = processes_for(self.requested, self.settings.concurrency, len(work))
        if self.processes == 1:
            self.warm_up()  # seconds of imports: the clock of rate, ETA and elapsed_s starts after them
            self._started = self.progress.started = time.monotonic()
            await super()._run_items(work)
            return
        parts = [part for part in split(work, self.processes) if len(part)]  # a resumed batch may have none left in one
        self.processes = len(parts)
        context = multiprocessing.get_context("spawn")  # not fork: the parent's event loop and threads stay here
        shared = Shared.create(context, self.processes)
        self._pool = SharedSpend(shared.spend)
        for index, (part, share) in enumerate(zip(parts, shares(self.settings.concurrency, self.processes),
                                                  strict=True)):
            ours, theirs = context.Pipe()
            worker = context.Process(target=run_part, daemon=True, name=f"debate-tui batch {index + 1}",
                                     args=(self.build, index, share, part, self._fresh, self.results.path, shared,
                                           theirs, os.getpid()))
            worker.start()
            theirs.close()  # the worker now holds the only copy: its end, exit or death, closes the pipe
            self._workers.append(worker)
            self._inbox.add(index, ours)
        try:
            await self._collect()
        finally:
            self.stop_reason = self.stop_reason or self._worker_stop()
            await asyncio.to_thread(self._drain_and_join)

    def _drain_and_join(self) -> None:
        """Wait for the workers, still taking their lines: a worker whose pipe is full cannot exit until it
        is read (after an error here, say), and a line read is a line kept."""
        while self._inbox:
            for _, kind, body in self._inbox.receive(0.1):
                if kind == "rows":
                    self.results.append(body)
        for worker in self._workers:
            worker.join()

    async def _collect(self) -> None:
        """Take the workers' messages until each one's pipe has closed; start them together once all are ready."""
        ready: set[int] = set()
        while self._inbox:
            for index, kind, body in await asyncio.to_thread(self._inbox.receive, 0.2):
                if kind == "rows":
                    self.results.append(body)
                elif kind == "counts":
                    self._counts[index] = body
                elif kind == "ready":
                    ready.add(index)
                    if len(ready) == len(self._workers):
                        self._started = self.progress.started = time.monotonic()
                        self._inbox.go()
                else:  # "end", or "failed" (one line) before it could start
                    self._ends[index] = body if kind == "end" else {"stopped": body}
                    if kind == "failed":
                        self.stop(body)

    def _dead(self) -> list[Any]:
        """Workers whose pipe closed before they said they ended (killed, crashed)."""
        return [w for i, w in enumerate(self._workers) if i not in self._ends and i not in self._inbox.links]

    def _worker_stop(self) -> str | None:
        for worker in self._dead():
            worker.join()  # its pipe is closed, so it has exited or is exiting: this reaps it
            how = f"signal {-worker.exitcode}" if worker.exitcode < 0 else f"exit code {worker.exitcode}"
            return f"a worker process ended unexpectedly ({how})"
        return next((end["stopped"] for end in self._ends.values() if end.get("stopped")), None)

    def _sync_usage(self) -> None:
        if self._pool is None:
            super()._sync_usage()
            return
        for name in COUNTS:
            setattr(self.tally, name, sum(counts.get(name, 0) for counts in self._counts.values()))
        self.meter.spent = self.tally.spent = self._pool.total()

    def summary(self) -> dict[str, Any]:
        summary = super().summary()
        if self._ends:
            summary["rate_limited"] = sum(end.get("rate_limited", 0) for end in self._ends.values())
            limits = [end["concurrency"] for end in self._ends.values() if end.get("concurrency")]
            if limits:
                summary["concurrency"] = {key: sum(limit[key] for limit in limits)
                                          for key in ("max", "lowest", "final", "cuts")}
        return {**summary, "processes": self.processes}
