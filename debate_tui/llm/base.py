"""The one interface every protocol talks through, and the errors it raises.

A client completes a chat request, optionally streaming text deltas to a
callback, and reports usage. Keeping this tiny lets the demo model, litellm
and test doubles stand in for each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from debate_tui.domain import FinishReason, Usage

if TYPE_CHECKING:
    from debate_tui.llm.demo_reading import TextFacts

Message = dict[str, str]
DeltaCallback = Callable[[str], None]
DemoPart = Callable[["ChatRequest", "TextFacts"], str]
"""A part the demo model plays: (the request, what it noticed about the judged text) -> its reply."""

ErrorKind = Literal[
    "auth", "bad_request", "not_found", "context_window", "rate_limit",
    "timeout", "connection", "server", "stream", "empty", "budget", "reply",
]
"""`reply`: the server answered, but not with a reply that can be read (not OpenAI's format, past the byte
bound): no retry makes it one."""
RETRYABLE: frozenset[str] = frozenset({"rate_limit", "timeout", "connection", "server", "stream"})


@dataclass
class ChatRequest:
    model: str
    messages: list[Message]
    params: dict[str, Any] = field(default_factory=dict)
    """litellm keyword arguments such as temperature or api_base; never an API key."""
    demo: DemoPart | None = None
    """How the offline demo model plays the agent asking: the part its protocol's spec declares for the agent's role
    (`ProtocolSpec.demo`), handed down by the runner; None: the demo judges plainly. Every other client ignores it."""


@dataclass(frozen=True)
class TokenLogprobs:
    """One generated token and the likeliest tokens at its place (natural-log probabilities).

    `top` holds the provider's top alternatives plus the generated token itself,
    so a score token always has at least its own probability to weigh.
    """

    token: str
    top: dict[str, float]


@dataclass
class Completion:
    text: str
    usage: Usage
    top_logprobs: list[TokenLogprobs] | None = None
    """Per generated token, when the request asked for `logprobs` and the provider returned them; else None."""
    finish_reason: FinishReason = "stop"
    """How the reply ended: on its own, at its token cap, at the call's deadline, or cut off."""


class LLMError(Exception):
    """A failed call, classified so the runner knows whether a retry can help."""

    def __init__(self, kind: ErrorKind, message: str, *, partial_text: str = "", retry_after: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.partial_text = partial_text
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE


class LLMClient(Protocol):
    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        """Answer the request; stream deltas to `on_delta` when given, else make a plain call."""
        ...
