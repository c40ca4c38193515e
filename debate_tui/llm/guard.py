"""What a provider sends back is checked before anything stores, caches, shows or writes it.

A provider (or a proxy in front of it) can echo the API key inside an ordinary
reply, even split across two stream chunks; and it can report negative token
counts, which would drive a run's totals and a batch's cost below zero, or
absurd ones (10^30), which would end any `--max-tokens` budget at once. Every
client that reaches a provider is wrapped in `GuardedClient`, below the response
cache, so neither reaches a session, a report, the cache or the screen.
"""

from __future__ import annotations

import logging

from debate_tui.domain import Usage
from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback, LLMClient, LLMError
from debate_tui.llm.tokens import prompt_tokens, reply_tokens
from debate_tui.redact import StreamRedactor, redact_known, secret_values

log = logging.getLogger(__name__)
_negative_logged = False
_absurd_logged = False
MOST_TOKENS = 100_000_000
"""More tokens than any model's window holds (the largest hold 10^7): a count past it is no count at all."""


def clamp_usage(usage: Usage) -> Usage:
    """Negative counts or cost become zero; the first time in a process it is logged (once: a provider that
    does it, does it on every call)."""
    global _negative_logged
    fields = ("calls", "prompt_tokens", "completion_tokens", "cost_usd")
    negative = {name: getattr(usage, name) for name in fields if getattr(usage, name) < 0}
    if negative:
        if not _negative_logged:
            _negative_logged = True
            log.warning("the provider reported negative usage (%s); counted as zero",
                        ", ".join(f"{name} {value}" for name, value in negative.items()))
        for name in negative:
            setattr(usage, name, type(getattr(usage, name))(0))
    return usage


def plausible_usage(usage: Usage, request: ChatRequest, text: str) -> Usage:
    """Token counts past MOST_TOKENS are replaced by our own count of the prompt and the reply, before the call is
    priced (a price worked out from them is dropped too); the first time in a process it is logged."""
    global _absurd_logged
    absurd = {name: value for name in ("prompt_tokens", "completion_tokens")
              if (value := getattr(usage, name)) > MOST_TOKENS}
    if not absurd:
        return usage
    if not _absurd_logged:
        _absurd_logged = True
        log.warning("the provider reported %s for one call; counted from the prompt and the reply instead",
                    ", ".join(f"{name} {value:.3g}" for name, value in absurd.items()))
    if "prompt_tokens" in absurd:
        usage.prompt_tokens = prompt_tokens(request.model, request.messages)
    if "completion_tokens" in absurd:
        usage.completion_tokens = reply_tokens(request.model, text)
    usage.cost_usd = 0.0
    return usage


class GuardedClient:
    """Wraps a provider's client: known keys redacted from replies (streamed or not), usage clamped at zero."""

    def __init__(self, inner: LLMClient):
        self.inner = inner

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        secrets = secret_values()
        redactor = StreamRedactor(secrets)
        forward = None if on_delta is None else _redacting(redactor, on_delta)
        try:
            completion = await self.inner.complete(request, forward)
        except LLMError as exc:
            exc.partial_text = redact_known(exc.partial_text, secrets)
            raise
        if on_delta is not None and (rest := redactor.flush()):
            on_delta(rest)
        completion.text = redact_known(completion.text, secrets)
        completion.usage = clamp_usage(completion.usage)
        return completion


def _redacting(redactor: StreamRedactor, on_delta: DeltaCallback) -> DeltaCallback:
    def forward(piece: str) -> None:
        if shown := redactor.feed(piece):
            on_delta(shown)
    return forward
