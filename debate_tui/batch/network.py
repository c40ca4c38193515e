"""The batch's shared view of the network: one rate-limit pause for all workers, one meter.

Global backoff. When any call gets a 429, every worker should wait, not just
the one that was told: sixteen workers each discovering the limit on their
own keep the provider saturated. `GlobalBackoff` sets a shared "not before"
time on a 429 (the server's Retry-After when known, else an exponential delay
that grows with consecutive 429s) and makes every later call wait for it.
It then re-raises the error, so the runner's own retry policy (attempts,
recorded failed turns) applies unchanged; the retried call also passes the
gate, so it goes out when the pause ends.

Adaptive concurrency. The pause answers one 429; a provider that keeps answering
429 is saying that fewer calls should be in flight. `AdaptiveLimit` lets at most
`limit` calls through at once, starting at `--concurrency`: a 429 halves it (once
per round of calls: the 429s of calls sent before the last cut do not cut again),
and each `limit` calls that succeed in a row raise it by one, back up to
`--concurrency` (additive increase, multiplicative decrease, as TCP does). The
workers stay; the extra ones wait here for a slot.

Meter. Counts what the batch really spent (calls that reached a model; cache
hits never get this far) and enforces `--max-cost` / `--max-tokens` with the
engine's `Budget`: a call whose prompt would pass a limit is not made, and
after that no call starts. The refusal is `BudgetExceeded` (a `Stopped`),
which the runner records as a cancelled, resumable session. Calls already in
flight finish and are counted: concurrent calls are each checked against what
was spent before them, so the overshoot is at most one call per worker.

Across processes (`batch --processes N`). The pause's "not before" time and the
spending live in shared memory (`SharedPause`, `SharedSpend`): a 429 in one
process holds the calls of all of them, and each process checks the budget
against what all of them spent. The adaptive limit stays each process's own
(its share of --concurrency): after a shared pause every process meets the
provider's limit again and halves its own share on its own 429s.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from debate_tui.domain import Usage
from debate_tui.engine.budget import Budget, BudgetExceeded
from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback, LLMClient, LLMError


class Cell(Protocol):
    """Where the pause's end is kept: a plain attribute in one process, shared memory across several."""

    value: float


class LocalCell:
    def __init__(self) -> None:
        self.value = 0.0


class SharedPause:
    """A pause end in shared memory: one double per process (a `multiprocessing` RawArray), each written only by
    its own process and read as their latest. No lock: a process killed -9 inside a locked update would leave
    the lock held, and every other process's next 429 would wait on it for good."""

    def __init__(self, shared: Any, slot: int = 0):
        self.shared = shared
        self.slot = slot

    @property
    def value(self) -> float:
        return float(max(self.shared[:]))

    @value.setter
    def value(self, when: float) -> None:
        self.shared[self.slot] = max(self.shared[self.slot], when)


class SharedSpend:
    """What all processes of a batch spent, in shared memory: a row of `FIELDS` doubles per process (a
    `multiprocessing` RawArray), each written only by its own process and summed by readers. No lock, for the
    reason `SharedPause` gives; a reader may see a row mid-update, which misses at most the call being added."""

    FIELDS = 4
    """calls, prompt tokens, completion tokens, cost in USD"""

    def __init__(self, shared: Any, slot: int = 0):
        self.shared = shared
        self.slot = slot

    def total(self) -> Usage:
        values = self.shared[:]
        calls, prompt, completion, cost = (sum(values[field::self.FIELDS]) for field in range(self.FIELDS))
        return Usage(calls=int(calls), prompt_tokens=int(prompt), completion_tokens=int(completion), cost_usd=cost)

    def add(self, usage: Usage) -> None:
        row = self.slot * self.FIELDS
        for field, value in enumerate((usage.calls, usage.prompt_tokens, usage.completion_tokens, usage.cost_usd)):
            self.shared[row + field] += value


class GlobalBackoff:
    """Wraps a client: after any 429, all calls through it wait until the pause is over."""

    def __init__(
        self,
        inner: LLMClient,
        *,
        base_delay_s: float = 1.0,
        max_delay_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        cell: Cell | None = None,
    ):
        self.inner = inner
        self.cell = cell or LocalCell()
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self.clock = clock
        self.sleep = sleep
        self.rate_limited = 0
        """429s seen in total."""
        self.waits = 0
        """Calls that were held back by a pause."""
        self._streak = 0

    @property
    def resume_at(self) -> float:
        """No call goes out before this (time.monotonic, the same clock in every process of the machine)."""
        return self.cell.value

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        await self.wait()
        try:
            completion = await self.inner.complete(request, on_delta)
        except LLMError as exc:
            if exc.kind == "rate_limit":
                self.pause(exc.retry_after)
            raise
        self._streak = 0
        return completion

    async def wait(self) -> None:
        held = False
        while (remaining := self.resume_at - self.clock()) > 0:
            held = True
            await self.sleep(remaining)
        self.waits += held

    def pause(self, retry_after: float | None) -> None:
        self.rate_limited += 1
        self._streak += 1
        if retry_after is not None and retry_after > 0:
            delay = min(retry_after, self.max_delay_s)
        else:
            delay = min(self.base_delay_s * 2 ** (self._streak - 1), self.max_delay_s)
        self.cell.value = max(self.cell.value, self.clock() + delay)


class AdaptiveLimit:
    """Wraps a client: at most `limit` calls in flight, halved on a 429 and grown back one step at a time."""

    def __init__(self, inner: LLMClient, maximum: int):
        self.inner = inner
        self.maximum = self.limit = self.lowest = max(1, maximum)
        self.in_flight = 0
        self.cuts = 0
        """How often a 429 lowered the limit."""
        self._successes = 0
        self._waiters: list[asyncio.Future[None]] = []

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        await self._acquire()
        sent_under = self.cuts
        try:
            completion = await self.inner.complete(request, on_delta)
        except LLMError as exc:
            if exc.kind == "rate_limit" and sent_under == self.cuts:
                self._cut()
            raise
        finally:
            self.in_flight -= 1
            self._wake()
        self._succeeded()
        return completion

    async def _acquire(self) -> None:
        while self.in_flight >= self.limit:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        self.in_flight += 1

    def _wake(self) -> None:
        for waiter in self._waiters[: max(0, self.limit - self.in_flight)]:
            if not waiter.done():
                waiter.set_result(None)

    def _cut(self) -> None:
        self.limit = max(1, self.limit // 2)
        self.lowest = min(self.lowest, self.limit)
        self.cuts += 1
        self._successes = 0

    def _succeeded(self) -> None:
        self._successes += 1
        if self._successes >= self.limit and self.limit < self.maximum:
            self.limit += 1
            self._successes = 0
            self._wake()


class Meter:
    """Wraps a client: adds up real usage and refuses new calls once the batch's budget would be passed.

    The check is the engine's own `Budget`, on the whole batch's spending plus the next prompt: no call
    starts that would pass a limit, and once one is refused no other call starts either.
    """

    def __init__(self, inner: LLMClient, budget: Budget | None = None,
                 on_exceeded: Callable[[str], None] = lambda reason: None, pool: SharedSpend | None = None):
        self.inner = inner
        self.pool = pool
        """The whole batch's spending when it runs in several processes; the budget holds for it."""
        self.budget = budget or Budget()
        self.on_exceeded = on_exceeded
        self.spent = Usage()
        self.stop_reason: str | None = None

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        if self.stop_reason is not None:
            raise BudgetExceeded(self.stop_reason)
        try:
            spent = self.pool.total() if self.pool is not None and self.budget.limited else self.spent
            self.budget.check_prompt(spent, request.model, request.messages)
        except BudgetExceeded as exc:
            self.stop_reason = str(exc)
            self.on_exceeded(self.stop_reason)
            raise
        completion = await self.inner.complete(request, on_delta)
        self.spent.add(completion.usage)
        if self.pool is not None:
            self.pool.add(completion.usage)
        return completion
