"""A batch put together: its settings from the limits, its client, its response cache, and the backend that runs
it (this process, worker processes, a provider's batch jobs; Ray tasks and a trust ladder's tiers on top of
those). Nothing is called or written here: every refusal is an InputError, before the first call."""

from __future__ import annotations

import asyncio
import functools
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from debate_tui.assembly.clients import routed_client
from debate_tui.assembly.single import budget_of
from debate_tui.inputs import InputError
from debate_tui.llm import DEMO_MODEL
from debate_tui.safefile import write_problem

if TYPE_CHECKING:
    from debate_tui.batch.items import Items
    from debate_tui.batch.results import ResultsFile
    from debate_tui.batch.runner import BatchRun, BatchSettings
    from debate_tui.config import Config
    from debate_tui.domain import Session
    from debate_tui.llm.cache import ResponseCache
    from debate_tui.meta.ladder import LadderRun
    from debate_tui.store import SessionStore

Rebuild = Callable[[int, "Items", Path], "BatchRun"]
"""How a worker process (or a Ray task) builds its own batch over its items: the same request, its concurrency."""


@dataclass(frozen=True)
class BatchRequest:
    """What the front end was asked for, beyond the configuration and the session every item copies."""

    seed: int
    progress_interval_s: float = 10.0
    cache: bool = True
    router: Path | None = None
    """A litellm Router configuration (--router): its deployments say where each call goes."""
    model: str | None = None
    """The model asked for by name (--model), which a router must know."""
    sessions_dir: Path | None = None
    provider_batch: bool = False
    poll_interval_s: float = 30.0
    job_max_requests: int = 50_000
    settle: Callable[[], None] | None = None
    """Called once the imports are done (the program's own process tunes its collector: `batch.heap`)."""


def assemble_batch(request: BatchRequest, config: Config, template: Session, items: Items, results: ResultsFile,
                   *, processes: int | None = 1, rebuild: Rebuild | None = None,
                   warn: Callable[[str], None] = lambda _: None) -> BatchRun:
    """One batch of `template` over `items` into `results` (a tier of a ladder is one).

    `processes` other than 1 (None: the default, see `batch.processes.processes_for`) may run the items in worker
    processes, each building its part with `rebuild`."""
    from debate_tui.batch.runner import BatchRun, BatchSettings
    from debate_tui.engine.runner import RetryPolicy

    limits = config.limits
    models = [agent.model for agent in template.agents]
    budget = budget_of(limits, models, None if request.router else warn)  # a router's deployments are priced by
    settings = BatchSettings(concurrency=limits.concurrency, budget=budget,  # litellm under their group's name
                             retry=RetryPolicy.of(limits), seed=request.seed,
                             progress_interval_s=request.progress_interval_s)
    cache = open_cache(config.cache_dir, warn) if request.cache else None
    store = config.session_store(request.sessions_dir)
    check_writable(store.root)
    if processes == 1 or request.provider_batch:  # else litellm is imported by the process that uses it
        warm_up(template, request.settle)
    if request.provider_batch:
        return _provider_batch(request, items, template, results, store, cache, settings)
    client = routed_client(config, request.router, request.model)
    if processes == 1:
        return BatchRun(items, template, results, store, client, cache=cache, settings=settings)
    from debate_tui.batch.processes import ProcessBatch  # imports litellm only where one process is used

    assert rebuild is not None, "worker processes build their parts with `rebuild`"
    return ProcessBatch(items, template, results, store, client, cache=cache, settings=settings, build=rebuild,
                        processes=processes, warm_up=functools.partial(warm_up, template, request.settle))


def warm_up(template: Session, settle: Callable[[], None] | None = None) -> None:
    """Import litellm now (seconds) rather than inside the first item, where it would skew rate and ETA."""
    if any(agent.model != DEMO_MODEL for agent in template.agents):
        from debate_tui.llm.litellm_client import load_litellm

        load_litellm()
    if settle is not None:
        settle()


def check_writable(directory: Path) -> None:
    """InputError naming the sessions directory when nothing can be written there (a read-only home), before any
    call."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise InputError(write_problem(exc, f"the item sessions in {directory}",
                                       "or point --sessions-dir (DEBATE_TUI_SESSIONS_DIR) elsewhere")) from None


def open_cache(directory: Path, warn: Callable[[str], None]) -> ResponseCache:
    """The response cache, a corrupt one set aside (said through `warn`); CacheError (an InputError) when it
    cannot be used."""
    from debate_tui.llm.cache import ResponseCache

    cache = ResponseCache(directory)
    for note in cache.notes:
        warn(note)
    return cache


def _provider_batch(request: BatchRequest, items: Items, template: Session, results: ResultsFile,
                    store: SessionStore, cache: ResponseCache | None, settings: BatchSettings) -> BatchRun:
    from debate_tui.batch.provider_batch import JobOptions, ProviderBatchRun

    if any(agent.model == DEMO_MODEL for agent in template.agents):
        raise InputError("--provider-batch needs a provider's model (e.g. openai/gpt-4o-mini), not the demo model")
    options = JobOptions(poll_s=request.poll_interval_s, max_requests=request.job_max_requests)
    return ProviderBatchRun(items, template, results, store, options=options, cache=cache, settings=settings)


def run_until_done(batch: BatchRun | LadderRun) -> None:
    """Run on a fresh loop; Ctrl+C or SIGTERM stops the batch cleanly instead of killing it mid-write.

    `asyncio.Runner` also cancels what litellm leaves running (its logging worker) before the loop closes.
    """
    from debate_tui.batch.loop import loop_factory, stopped_by_signals

    with asyncio.Runner(loop_factory=loop_factory()) as runner, stopped_by_signals(runner.get_loop(), batch.stop):
        runner.run(batch.run())


def run_on_ray(batch: BatchRun, rebuild: Callable[[Items, Path], BatchRun], address: str,
               tasks: int | None) -> None:
    """The batch's shards as Ray tasks, each rebuilding its batch over its own items with `rebuild`."""
    from debate_tui.batch.ray_backend import RayBatch, RayUnavailable

    try:
        RayBatch(batch, rebuild, address=address, tasks=tasks).run()
    except RayUnavailable as exc:
        raise InputError(str(exc)) from None
