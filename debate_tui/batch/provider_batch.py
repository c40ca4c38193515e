"""`batch --provider-batch`: every call goes out in a provider batch job (OpenAI, Azure, ...) at the batch price.

Rounds. Every item runs as usual, all at once, through `JobRounds`, a client
that does not call the model: it parks each request until every unfinished
item is waiting on one, then sends the parked requests as one job (split at
`max_requests`, and per provider endpoint), polls, and hands each item its
reply, matched by `custom_id`, never by position. A single-judge batch is one
job; a debate's next turns, built from the replies, are the next round's job.

Resuming. Job ids, their uploaded files and their custom_ids are written
atomically to `RESULTS.jsonl.jobs.json` before and after each job is created.
A custom_id is a hash of the item id and the request itself, so a rerun of the
same command rebuilds the same ids, finds them in that file and polls their
jobs instead of sending them again. An upload whose job id was never written
(a kill in between) is looked up among the provider's jobs by its file id; one
whose create failed (its calls were failed and asked again) is then forgotten.

Failures. A request in a job's error file (or a non-200 line, or a line that
never came back: failed, expired or cancelled job) fails that call with a
retryable error; the item's retry policy asks again, and the new attempt
(custom_id suffix -1, -2, ...) goes into the next job. `--retries` bounds the
attempts per call, as for live calls; the backoff is the job round trip.

Price: litellm's batch prices (`input_cost_per_token_batches`) where it has
them, else half the live price (OpenAI's and Azure's batch discount), for the
model a reply names (an Azure deployment's own model), else the requested one.

Azure (`azure/<deployment>`): litellm sends the files and batches calls to
`<api_base>/openai/files|batches?api-version=V` with the key in `api-key` (V:
AZURE_API_VERSION, else litellm's default, as for live calls; "v1", "latest"
or "preview" use `/openai/v1/...` and a bearer key instead). Each line names the deployment as its `model` and Azure's
endpoint `/chat/completions` (no `/v1`) as its `url`.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from debate_tui.batch.items import Item, Items
from debate_tui.batch.progress import Progress
from debate_tui.batch.results import ResultsError, ResultsFile
from debate_tui.batch.runner import BatchRun, BatchSettings, Work
from debate_tui.domain import Criterion, Session, Usage
from debate_tui.endpoints import NO_KEY, NO_KEY_VALUE
from debate_tui.inputs import InputError
from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback, LLMError
from debate_tui.llm.cache import ResponseCache, cache_key
from debate_tui.readfile import MissingFile, jsonl_records, read_json
from debate_tui.store import SessionStore, write_atomic

BATCH_SHARE = 0.5
"""Batch price as a share of the live price when litellm has no batch price for the model."""
MAX_JOB_REQUESTS = 50_000
"""OpenAI's limit of requests per batch job."""
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
TRANSPORT = frozenset({
    "api_base", "base_url", "api_key", "api_key_env", "api_version", "timeout", "request_timeout", "num_retries",
    "max_retries", "extra_headers", "headers", "metadata", "stream", "stream_options", "custom_llm_provider", NO_KEY,
})
"""Request parameters that say where and how to call, not what to answer: kept out of a job's lines."""
CHAT_ENDPOINT = "/v1/chat/completions"
ENDPOINTS = {"azure": "/chat/completions"}
"""A provider's batch endpoint for chat completions where it is not OpenAI's `CHAT_ENDPOINT`."""

current_item: contextvars.ContextVar[str] = contextvars.ContextVar("provider_batch_item")
"""The item whose session makes the call; every task an item starts inherits it."""


@dataclass(frozen=True)
class Target:
    """Where a job goes: litellm's provider and the endpoint of the requests' `api_base`."""

    provider: str
    api_base: str | None = None
    api_key_env: str | None = None
    api_version: str | None = None
    no_key: bool = False
    """Its endpoint came from a file that may not choose one (endpoints.py): none of the person's keys is sent."""

    @property
    def endpoint(self) -> str:
        """The `endpoint` of its jobs and the `url` of their lines."""
        return ENDPOINTS.get(self.provider, CHAT_ENDPOINT)

    def kwargs(self) -> dict[str, Any]:
        """litellm arguments of the files and batches calls; the key is read from its variable just now."""
        from debate_tui.llm.litellm_client import key_from_env

        found: dict[str, Any] = {"custom_llm_provider": self.provider}
        if self.api_base:
            found["api_base"] = self.api_base
        if self.api_version:
            found["api_version"] = self.api_version
        if self.no_key:
            found["api_key"] = NO_KEY_VALUE
        elif self.api_key_env:
            found["api_key"] = key_from_env(self.api_key_env)
        return found


@dataclass(frozen=True)
class JobOptions:
    poll_s: float = 30.0
    max_requests: int = MAX_JOB_REQUESTS
    settle_s: float = 0.02
    """Quiet time before a round is sent: the items' own work between calls (saving a turn) is done by then."""


class BatchApi:
    """litellm's files and batches calls, reduced to what the rounds need."""

    async def upload(self, target: Target, data: bytes) -> str:
        from debate_tui.llm.litellm_client import load_litellm

        made = await load_litellm().acreate_file(file=("requests.jsonl", data, "application/jsonl"),
                                                 purpose="batch", **target.kwargs())
        return str(made.id)

    async def create(self, target: Target, file_id: str) -> str:
        from debate_tui.llm.litellm_client import load_litellm

        job = await load_litellm().acreate_batch(completion_window="24h", endpoint=target.endpoint,
                                                 input_file_id=file_id, **target.kwargs())
        return str(job.id)

    async def retrieve(self, target: Target, job_id: str) -> dict[str, Any]:
        from debate_tui.llm.litellm_client import load_litellm

        job = await load_litellm().aretrieve_batch(batch_id=job_id, **target.kwargs())
        return _plain(job)

    async def content(self, target: Target, file_id: str | None) -> list[dict[str, Any]]:
        from debate_tui.llm.litellm_client import load_litellm

        if not file_id:
            return []
        data = await load_litellm().afile_content(file_id=file_id, **target.kwargs())
        return [value for _, value in jsonl_records(data.content.decode("utf-8"), f"batch output {file_id}")]

    async def find(self, target: Target, file_id: str) -> str | None:
        """The job made from an uploaded file, if one was (its id was lost to a kill)."""
        from debate_tui.llm.litellm_client import load_litellm

        listed = _plain(await load_litellm().alist_batches(limit=100, **target.kwargs()))
        return next((str(job["id"]) for job in listed.get("data") or [] if job.get("input_file_id") == file_id), None)


def _plain(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else dict(vars(value))


class JobsFile:
    """Jobs, uploads and failed custom_ids of one results file, rewritten atomically at each change."""

    def __init__(self, path: Path):
        self.path = path
        try:
            data = read_json(path, "json")
        except MissingFile:
            data = {}
        except InputError as exc:
            raise ResultsError(f"{path}: unreadable provider batch jobs file ({str(exc).removeprefix(f'{path}: ')}); "
                               "move it away to send every request again") from None
        if not isinstance(data, dict):
            raise ResultsError(f"{path}: unreadable provider batch jobs file (not a JSON object); "
                               "move it away to send every request again")
        self.jobs: dict[str, dict[str, Any]] = data.get("jobs", {})
        self.uploads: dict[str, dict[str, Any]] = data.get("uploads", {})
        self.failed: dict[str, str] = data.get("failed", {})
        self.job_of = {cid: job for job, spec in self.jobs.items() for cid in spec["custom_ids"]}

    def save(self) -> None:
        write_atomic(self.path, json.dumps({"jobs": self.jobs, "uploads": self.uploads, "failed": self.failed}))

    @property
    def rounds(self) -> int:
        return max((spec["round"] for spec in [*self.jobs.values(), *self.uploads.values()]), default=0)

    def add_job(self, job_id: str, file_id: str) -> None:
        spec = self.uploads.pop(file_id)
        self.jobs[job_id] = {**spec, "file_id": file_id, "status": "validating"}
        self.job_of.update(dict.fromkeys(spec["custom_ids"], job_id))
        self.save()


@dataclass
class _Ask:
    custom_id: str
    item: str
    target: Target
    line: dict[str, Any]
    future: asyncio.Future[Completion]
    job: str | None = None
    waiters: int = 0
    """Calls waiting on this reply; one that nobody waits for any more (an item was stopped) is dropped."""


@dataclass
class JobCounts:
    jobs: int = 0
    running: int = 0
    submitted: int = 0
    """Requests this run sent in jobs (not those found in the jobs file)."""
    live_cost_usd: float = 0.0
    """What the same replies would have cost as live calls."""


@dataclass
class JobRounds:
    """The client every item calls through, and the loop that turns parked calls into jobs."""

    jobs: JobsFile
    options: JobOptions = field(default_factory=JobOptions)
    api: BatchApi = field(default_factory=BatchApi)
    counts: JobCounts = field(default_factory=JobCounts)
    open_items: int = 0
    _asks: dict[str, _Ask] = field(default_factory=dict)
    _waiting: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    _delivered: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    _outputs: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    _targets: dict[str, Target] = field(default_factory=dict)
    _changes: int = 0

    # ----- the client side ------------------------------------------------------------

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        item = current_item.get()
        key = cache_key(request)
        base = hashlib.sha256(f"{item}\0{key}\0{self._delivered[item, key]}".encode()).hexdigest()[:32]
        attempt = 0
        while f"{base}-{attempt}" in self.jobs.failed:
            attempt += 1
        custom_id = f"{base}-{attempt}"
        ask = self._asks.get(custom_id)
        if ask is None:
            target, line = _line(custom_id, request)
            ask = _Ask(custom_id, item, target, line, asyncio.get_running_loop().create_future(),
                       self.jobs.job_of.get(custom_id))
            self._asks[custom_id] = ask
        self._waiting[item] += 1
        ask.waiters += 1
        self._changes += 1
        try:
            completion = await asyncio.shield(ask.future)
        finally:
            self._waiting[item] -= 1
            if not self._waiting[item]:
                del self._waiting[item]
            ask.waiters -= 1
            if not ask.waiters:
                self._asks.pop(custom_id, None)
                if not ask.future.done():
                    ask.future.cancel()
            self._changes += 1
        self._delivered[item, key] += 1
        return completion

    def item_finished(self) -> None:
        self.open_items -= 1
        self._changes += 1

    # ----- the job side -----------------------------------------------------------------

    async def drive(self) -> None:
        """Send, poll and deliver until every item has finished."""
        await self._recover()
        while True:
            await self._quiet()
            if self.open_items <= 0:
                return
            for ask in self._asks.values():  # a job `_recover` found after the call was parked
                ask.job = ask.job or self.jobs.job_of.get(ask.custom_id)
            await self._submit([ask for ask in self._asks.values() if ask.job is None and not ask.future.done()])
            await self._collect()

    async def _quiet(self) -> None:
        """Return once every unfinished item waits on a call and nothing moved for `settle_s`."""
        while True:
            seen = self._changes
            await asyncio.sleep(self.options.settle_s)
            if seen == self._changes and (self.open_items <= 0 or len(self._waiting) >= self.open_items):
                return

    async def _recover(self) -> None:
        """Uploads whose job id a kill lost: adopt the job made from them, or make it now."""
        for file_id, spec in list(self.jobs.uploads.items()):
            target = Target(**spec["target"])
            job_id = await self.api.find(target, file_id)
            if job_id is None and all(cid in self.jobs.failed for cid in spec["custom_ids"]):
                del self.jobs.uploads[file_id]  # its create failed: the calls were asked again under new ids
                self.jobs.save()
                continue
            self.jobs.add_job(job_id or await self.api.create(target, file_id), file_id)

    async def _submit(self, asks: list[_Ask]) -> None:
        if not asks:
            return
        by_target: dict[Target, list[_Ask]] = defaultdict(list)
        for ask in asks:
            by_target[ask.target].append(ask)
        number = self.jobs.rounds + 1
        for target, group in by_target.items():
            for start in range(0, len(group), self.options.max_requests):
                chunk = group[start:start + self.options.max_requests]
                data = "".join(json.dumps(ask.line, ensure_ascii=False) + "\n" for ask in chunk).encode("utf-8")
                try:
                    file_id = await self.api.upload(target, data)
                    self.jobs.uploads[file_id] = {"target": vars(target), "round": number,
                                                  "custom_ids": [ask.custom_id for ask in chunk]}
                    self.jobs.save()
                    job_id = await self.api.create(target, file_id)
                except Exception as exc:  # the calls fail and are asked again in the next round
                    self._fail(chunk, f"could not submit a batch job ({type(exc).__name__}: {exc})", "connection")
                    continue
                self.jobs.add_job(job_id, file_id)
                self.counts.submitted += len(chunk)
                for ask in chunk:
                    ask.job = job_id

    async def _collect(self) -> None:
        """Poll the jobs the waiting calls belong to until at least one has ended, and deliver its lines."""
        while True:
            waiting = {ask.job for ask in self._asks.values() if ask.job and not ask.future.done()}
            if not waiting:
                return
            ended = 0
            for job_id in sorted(waiting):
                ended += await self._poll(job_id)
            self.counts.jobs = len(self.jobs.jobs)
            self.counts.running = sum(spec["status"] not in TERMINAL for spec in self.jobs.jobs.values())
            if ended:
                return
            await asyncio.sleep(self.options.poll_s)

    async def _poll(self, job_id: str) -> int:
        spec = self.jobs.jobs[job_id]
        target = Target(**spec["target"])
        if job_id not in self._outputs:
            try:
                state = await self.api.retrieve(target, job_id)
            except Exception:  # a poll that failed is just asked again at the next one
                return 0
            if state.get("status") != spec["status"]:
                spec["status"] = state.get("status")
                self.jobs.save()
            if spec["status"] not in TERMINAL:
                return 0
            lines = [*await self.api.content(target, state.get("output_file_id")),
                     *await self.api.content(target, state.get("error_file_id"))]
            self._outputs[job_id] = {str(line.get("custom_id")): line for line in lines}
        self._deliver(job_id, spec["status"])
        return 1

    def _deliver(self, job_id: str, status: str) -> None:
        outputs = self._outputs[job_id]
        failed: list[_Ask] = []
        for ask in [a for a in self._asks.values() if a.job == job_id and not a.future.done()]:
            line = outputs.get(ask.custom_id)
            response = (line or {}).get("response") or {}
            if response.get("status_code") == 200:
                ask.future.set_result(self._completion(ask, response["body"]))
            else:
                failed.append(ask)
                reason = _line_error(line) if line else f"the job ended {status} without this request"
                self.jobs.failed[ask.custom_id] = reason
        if failed:
            self.jobs.save()
            for ask in failed:
                ask.future.set_exception(LLMError("server", f"provider batch: {self.jobs.failed[ask.custom_id]}"))

    def _fail(self, asks: list[_Ask], reason: str, kind: str) -> None:
        for ask in asks:
            self.jobs.failed[ask.custom_id] = reason
            if not ask.future.done():
                ask.future.set_exception(LLMError(kind, reason))  # type: ignore[arg-type]
        self.jobs.save()

    def _completion(self, ask: _Ask, body: dict[str, Any]) -> Completion:
        from debate_tui.llm.litellm_client import finish_reason, token_logprobs

        choice = (body.get("choices") or [{}])[0]
        raw = body.get("usage") or {}
        usage = Usage(calls=1, prompt_tokens=int(raw.get("prompt_tokens") or 0),
                      completion_tokens=int(raw.get("completion_tokens") or 0))
        usage.cost_usd, live = 0.0, 0.0
        for name in (body.get("model"), ask.line["body"]["model"]):  # the model that replied, else the deployment
            if name and not live:
                usage.cost_usd, live = prices(f"{ask.target.provider}/{name}", usage)
        self.counts.live_cost_usd += live
        return Completion(text=(choice.get("message") or {}).get("content") or "", usage=usage,
                          top_logprobs=token_logprobs(choice.get("logprobs")) or None,
                          finish_reason=finish_reason(choice.get("finish_reason")))


def _line(custom_id: str, request: ChatRequest) -> tuple[Target, dict[str, Any]]:
    """The job a request goes to and its JSONL line."""
    from debate_tui.llm.litellm_client import load_litellm

    model, provider, _key, _base = load_litellm().get_llm_provider(model=request.model)
    params = request.params
    target = Target(provider=provider, api_base=params.get("api_base") or params.get("base_url"),
                    api_key_env=params.get("api_key_env"), api_version=params.get("api_version"),
                    no_key=bool(params.get(NO_KEY)))
    body = {k: v for k, v in params.items() if k not in TRANSPORT} | {"model": model, "messages": request.messages}
    return target, {"custom_id": custom_id, "method": "POST", "url": target.endpoint, "body": body}


def _line_error(line: dict[str, Any]) -> str:
    error = line.get("error") or ((line.get("response") or {}).get("body") or {}).get("error") or {}
    status = (line.get("response") or {}).get("status_code")
    message = error.get("message") if isinstance(error, dict) else str(error)
    return f"{error.get('code') if isinstance(error, dict) else ''} {status or ''} {message or ''}".strip()


_PRICES: dict[str, tuple[float, float, float, float] | None] = {}


def prices(model: str, usage: Usage) -> tuple[float, float]:
    """(batch price, live price) of a reply's tokens; both 0 for a model litellm has no price for."""
    if model not in _PRICES:
        from debate_tui.llm.litellm_client import load_litellm

        litellm = load_litellm()
        try:
            info = litellm.get_model_info(model)
        except Exception:
            info = None
        if not info or info.get("input_cost_per_token") is None:
            _PRICES[model] = None
        else:
            live_in, live_out = float(info["input_cost_per_token"]), float(info.get("output_cost_per_token") or 0)
            batch_in = info.get("input_cost_per_token_batches")
            batch_out = info.get("output_cost_per_token_batches")
            _PRICES[model] = (live_in, live_out,
                              float(batch_in) if batch_in is not None else live_in * BATCH_SHARE,
                              float(batch_out) if batch_out is not None else live_out * BATCH_SHARE)
    known = _PRICES[model]
    if known is None:
        return 0.0, 0.0
    live_in, live_out, batch_in, batch_out = known
    p, c = usage.prompt_tokens, usage.completion_tokens
    return p * batch_in + c * batch_out, p * live_in + c * live_out


class JobProgress(Progress):
    """The batch's progress line, with jobs and rounds."""

    def __init__(self, base: Progress, rounds: JobRounds):
        super().__init__(base.tally, stream=base.stream, tty=base.tty, interval_s=base.interval_s)
        self.rounds = rounds

    def line(self) -> str:
        counts = self.rounds.counts
        return (f"{super().line()}  {counts.jobs} jobs ({counts.running} running), "
                f"round {self.rounds.jobs.rounds}, {counts.submitted} requests sent")


class ProviderBatchRun(BatchRun):
    """A batch whose calls go out as provider batch jobs, round by round; see the module's docstring."""

    adaptive = False
    """Every item's call goes into its round's job at once; the provider paces a job, not us."""

    def __init__(self, items: Items, template: Session, results: ResultsFile, store: SessionStore, *,
                 options: JobOptions, cache: ResponseCache | None = None, settings: BatchSettings | None = None):
        self.rounds = JobRounds(JobsFile(jobs_path(results.path)), options)
        super().__init__(items, template, results, store, self.rounds, cache=cache, settings=settings)
        self.settings.retry.base_delay_s = 0.0  # the job round trip is the backoff
        self.progress = JobProgress(self.progress, self.rounds)

    async def _run_items(self, work: Work) -> None:
        self.rounds.open_items = len(work)
        async with asyncio.TaskGroup() as group:
            for item, criteria in work:
                group.create_task(self._item(item, criteria))
            group.create_task(self.rounds.drive())

    async def _item(self, item: Item, criteria: list[Criterion]) -> None:
        current_item.set(item.id)
        try:
            if self.stop_reason is None:
                await self._one(item, criteria)
        finally:
            self.rounds.item_finished()
        self._sync_usage()
        self.progress.update()

    def summary(self) -> dict[str, Any]:
        counts = self.rounds.counts
        return super().summary() | {"provider_batch": {
            "jobs": len(self.rounds.jobs.jobs), "rounds": self.rounds.jobs.rounds,
            "requests_sent": counts.submitted, "live_cost_usd": round(counts.live_cost_usd, 6),
        }}


def jobs_path(results: Path) -> Path:
    return results.with_name(results.name + ".jobs.json")
