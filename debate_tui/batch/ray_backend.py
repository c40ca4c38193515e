"""`batch --ray auto|ADDRESS`: the batch's shards as Ray tasks on an existing cluster, merged exactly once.

Ray is an optional extra (`pip install 'debate-tui[ray]'`); without it the
command says so in one line. The driver (the machine running `debate-tui
batch`) plans the work as a local batch does (settled lines are kept and
skipped), splits what is left into shards by the stable hash of the item id,
and starts one streaming task per shard. Each task runs the ordinary batch
engine (`BatchRun`, with the same flags, `--concurrency` items at a time)
over its items and yields each item's result lines the moment the item
finishes. The driver appends them to RESULTS.jsonl as they arrive, keyed by
(id, criterion) so that a line is written exactly once, and draws one
progress bar for the whole batch. A rerun resumes like a local batch: only
the items without settled lines go out again.

Workers need what a local batch needs: debate-tui (with the same version),
network access to the models, and the API keys as environment variables of
the Ray workers (they are never sent with the task). Budgets (--max-cost,
--max-tokens) are not enforced across tasks, so they are refused with --ray.
"""

from __future__ import annotations

import asyncio
import importlib
import io
import queue
import socket
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from debate_tui.batch.items import Item
from debate_tui.batch.progress import Progress
from debate_tui.batch.results import ResultsFile, Row, row_key, settled
from debate_tui.batch.runner import BatchRun
from debate_tui.batch.shards import shard_of
from debate_tui.domain import Usage

Build = Callable[[list[Item], Path], BatchRun]
"""Makes a task's batch from its items and a results file; must pickle by reference (a module function)."""


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached; one line for the user."""


def load_ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise RayUnavailable("--ray needs Ray: pip install 'debate-tui[ray]'") from None


def reachable(address: str, timeout_s: float = 5.0) -> None:
    """Refuse a HOST:PORT (or ray://HOST:PORT) nobody answers on at once; Ray itself would wait a minute."""
    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise RayUnavailable(f"--ray {address}: expected auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise RayUnavailable(f"--ray {address}: cannot reach the cluster ({exc.strerror or exc})") from None


class _StreamedResults(ResultsFile):
    """A task's results file that also hands each finished item's lines to the task's generator."""

    def __init__(self, path: Path, lines: queue.Queue[object]):
        super().__init__(path)
        self.lines = lines

    def append(self, rows: Iterable[Row]) -> None:
        rows = list(rows)
        super().append(rows)
        self.lines.put(rows)


_END = object()


def shard_task(build: Build, items: list[Item]) -> Iterator[dict[str, Any]]:
    """Runs on a Ray worker: `{"rows": [...]}` per finished item (its usage is on its lines)."""
    lines: queue.Queue[object] = queue.Queue()
    failure: list[BaseException] = []
    with tempfile.TemporaryDirectory(prefix="debate-tui-ray-") as tmp:
        batch = build(items, Path(tmp) / "shard.jsonl")
        batch.results = _StreamedResults(batch.results.path, lines)
        batch.progress = Progress(batch.tally, stream=io.StringIO(), tty=False)  # the driver draws the bar

        def run() -> None:
            try:
                asyncio.run(batch.run())
            except BaseException as exc:  # noqa: BLE001 - re-raised in the generator, on Ray's side
                failure.append(exc)
            finally:
                lines.put(_END)

        worker = threading.Thread(target=run, name="debate-tui-shard", daemon=True)
        worker.start()
        while (rows := lines.get()) is not _END:
            yield {"rows": rows}
        worker.join()
        if failure:
            raise failure[0]


class RayBatch:
    """Runs a prepared (driver-side) batch's remaining items as Ray tasks, one per shard."""

    def __init__(self, batch: BatchRun, build: Build, *, address: str, tasks: int | None = None):
        self.batch = batch
        self.build = build
        self.address = address
        self.tasks = tasks
        self._pending: list[Any] = []
        """The tasks' result generators not yet exhausted."""

    def run(self) -> None:
        ray = load_ray()
        reachable(self.address)
        try:
            ray.init(address=self.address, log_to_driver=False, include_dashboard=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise RayUnavailable(f"--ray {self.address}: cannot reach the cluster ({first})") from None
        try:
            self._run(ray)
        finally:
            ray.shutdown()

    def _run(self, ray: Any) -> None:
        batch = self.batch
        with batch.results.locked("a batch"):
            work = batch.plan()
            written = set(settled(batch.results.read().rows))
            batch.tally.total = len(work)
            count = self.tasks or max(1, int(ray.cluster_resources().get("CPU", 1)))
            shards: dict[int, list[Item]] = {}
            for item, _criteria in work:
                shards.setdefault(shard_of(item.id, count), []).append(item)
            remote = ray.remote(shard_task).options(num_returns="streaming", max_retries=0)
            self._pending = [remote.remote(self.build, items) for items in shards.values()]
            try:
                self._collect(ray, written)
            except KeyboardInterrupt:
                batch.stop_reason = "interrupted (Ctrl+C)"
            except ray.exceptions.RayError as exc:
                last = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
                batch.stop_reason = f"a Ray task failed: {last}"
            finally:
                for generator in self._pending:
                    ray.cancel(generator, force=True)
                batch.results.close()
                batch.progress.close()

    def _collect(self, ray: Any, written: set[tuple[str, str]]) -> None:
        """Take each task's lines as they come; every (id, criterion) goes into the file once."""
        batch = self.batch
        while self._pending:
            ready, self._pending = ray.wait(self._pending, num_returns=1)
            for generator in ready:
                try:
                    message = ray.get(next(generator))
                except StopIteration:
                    continue
                self._pending.append(generator)
                fresh = [row for row in message["rows"] if row_key(row) not in written]
                written.update(row_key(row) for row in fresh)
                if fresh:
                    batch.results.append(fresh)
                batch.tally.count(str(message["rows"][0].get("status")))
                self._add_usage(message["rows"])
            batch.tally.spent = batch.meter.spent
            batch.progress.update()

    def _add_usage(self, rows: list[Row]) -> None:
        """An item's usage is split over its lines (one per criterion): their sum is the item's."""
        spent = self.batch.meter.spent
        for row in rows:
            spent.add(Usage(calls=int(row.get("calls") or 0), prompt_tokens=int(row.get("prompt_tokens") or 0),
                            completion_tokens=int(row.get("completion_tokens") or 0),
                            cost_usd=float(row.get("cost_usd") or 0.0)))
            self.batch.tally.cache_hits += int(row.get("cache_hits") or 0)
