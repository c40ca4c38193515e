"""The batch's shared view of the network: one rate-limit pause for all workers, one meter.

Global backoff. When any call gets a 429, every worker should wait, not just
the one that was told: sixteen workers each discovering the limit on their
own keep the provider saturated. `GlobalBackoff` sets a shared "not before"
time on a 429 (the server's Retry-After when known, else an exponential delay
that grows with consecutive 429s) and makes every later call wait for it.
It then re-raises the error, so the runner's own retry policy (attempts,
recorded failed turns) applies unchanged; the retried call also passes the
gate, so it goes out when the pause ends.

Meter. Counts what the batch really spent (calls that reached a model; cache
hits never get this far) and enforces `--max-cost` / `--max-tokens`: once a
limit is reached no new call starts. The refusal is `Stopped`, which the
runner records as a cancelled, resumable session; calls already in flight
finish and are counted, so the overshoot is at most one call per worker.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from debate_tui.domain import Usage
from debate_tui.engine.control import Stopped
from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback, LLMClient, LLMError


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
    ):
        self.inner = inner
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self.clock = clock
        self.sleep = sleep
        self.resume_at = 0.0
        self.rate_limited = 0
        """429s seen in total."""
        self.waits = 0
        """Calls that were held back by a pause."""
        self._streak = 0

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
        self.resume_at = max(self.resume_at, self.clock() + delay)


@dataclass
class Limits:
    max_cost_usd: float | None = None
    max_tokens: int | None = None

    def exceeded(self, spent: Usage) -> str | None:
        """Why `spent` is over a limit, or None."""
        if self.max_cost_usd is not None and spent.cost_usd >= self.max_cost_usd:
            return f"budget reached: ${spent.cost_usd:.4f} spent of --max-cost ${self.max_cost_usd:g}"
        tokens = spent.prompt_tokens + spent.completion_tokens
        if self.max_tokens is not None and tokens >= self.max_tokens:
            return f"budget reached: {tokens:,} tokens spent of --max-tokens {self.max_tokens:,}"
        return None


class Meter:
    """Wraps a client: adds up real usage and refuses new calls once a limit is reached."""

    def __init__(self, inner: LLMClient, limits: Limits | None = None,
                 on_exceeded: Callable[[str], None] = lambda reason: None):
        self.inner = inner
        self.limits = limits or Limits()
        self.on_exceeded = on_exceeded
        self.spent = Usage()
        self.stop_reason: str | None = None

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        if self.stop_reason is not None:
            raise Stopped(self.stop_reason)
        completion = await self.inner.complete(request, on_delta)
        self.spent.add(completion.usage)
        reason = self.limits.exceeded(self.spent)
        if reason is not None and self.stop_reason is None:
            self.stop_reason = reason
            self.on_exceeded(reason)
        return completion
