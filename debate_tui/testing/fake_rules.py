"""The fake server's script: what a test says to answer (rules, faults) and what the server saw (records).

Also the fake's tokenizer, shared by the replies it writes and the limits it plays (`max_tokens`, a context
window), so a scripted log-probability and the generated token are spelled alike.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from debate_tui.testing.hostile_replies import HOSTILE_FAULTS

Request = dict[str, Any]
"""The JSON body of a chat completion request, as the client sent it."""
Reply = str | Callable[[Request], str]
Match = str | re.Pattern[str] | Callable[[Request], bool]

FAULTS = ("429", "500", "hang", "disconnect", "malformed", "empty", "401", "400",
          "endless", "cut", "length", "error200", "error_midstream", "overflow", *HOSTILE_FAULTS)
_TOKEN = re.compile(r"\d+|[^\W\d_]+|\s+|\S")


def approx_tokens(text: str) -> int:
    """Deterministic stand-in for a tokenizer: about 4 tokens per 3 words."""
    return math.ceil(len(text.split()) * 4 / 3)


def prompt_text(request: Request) -> str:
    """All message contents joined, including the text parts of multimodal messages."""
    parts: list[str] = []
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "\n".join(parts)


def fake_tokens(text: str) -> list[str]:
    """The fake's tokenizer: runs of digits, of letters, of spaces, and single other characters.

    Joined, the tokens give the text back. A number is its own token, without
    the leading space a real BPE tokenizer would attach, which keeps scripted
    alternatives ("3", "4") and the generated token spelled alike.
    """
    return _TOKEN.findall(text)


def fault_name(kind: str | int) -> str:
    """Accept 429 as well as "429", and reject typos before a test silently passes."""
    if str(kind) not in FAULTS:
        raise ValueError(f"unknown fault {kind!r}; expected one of {', '.join(FAULTS)}")
    return str(kind)


@dataclass
class Rule:
    """One scripted answer: the first rule whose conditions all hold replies."""

    reply: Reply | None = None
    """None falls back to the server's default reply (useful for fault-only rules)."""
    match: Match | None = None
    """Regex searched in the joined message contents, or a predicate on the request."""
    model: str | None = None
    """Exact model name as sent on the wire: litellm strips the `openai/` prefix."""
    times: int | None = None
    fault: str | None = None
    latency: float | None = None
    """Overrides the server's latency for this rule."""
    logprobs: dict[str, float] | None = None
    """Alternatives at the reply's last number token (token -> log-probability), sent when asked for."""
    chunk_delay: float | None = None
    """Overrides the server's delay between streamed chunks: a slow stream."""
    error: tuple[int, str] | None = None
    """An HTTP status and message sent instead of a reply, in OpenAI's error shape (a provider's odd errors)."""
    hits: int = 0

    def __post_init__(self) -> None:
        if self.fault is not None:
            self.fault = fault_name(self.fault)
        if isinstance(self.match, str):
            self.match = re.compile(self.match)

    def applies(self, request: Request) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if self.model is not None and request.get("model") != self.model:
            return False
        if isinstance(self.match, re.Pattern):
            return self.match.search(prompt_text(request)) is not None
        return self.match is None or (callable(self.match) and bool(self.match(request)))


@dataclass(frozen=True)
class RequestRecord:
    """What the server saw. The API key is never kept, only whether one was sent."""

    method: str
    path: str
    model: str | None
    messages: list[dict[str, Any]]
    stream: bool
    body: Request
    has_auth: bool
    fault: str | None
    at: float
    """time.monotonic() on arrival, so tests can measure overlap."""

