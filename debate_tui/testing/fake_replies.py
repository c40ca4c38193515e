"""The fake server's replies, as OpenAI's API writes them: a completion, or the events of a stream.

Each is built from a `Plan`, which holds everything decided when the request arrived (its rule, its fault,
and the server's settings then), so a setting changed while a reply is sent applies to the next request.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from debate_tui.testing.fake_http import error_object
from debate_tui.testing.fake_rules import Request, Rule, approx_tokens, fake_tokens, prompt_text

MALFORMED = '{"id": "chatcmpl-fake", "choices": [{"delta": {"content": '
"""Cut-off JSON: what a proxy that truncates a body would deliver."""
OVERFLOW = "Requested tokens ({tokens}) exceed context window of {window}"
"""llama.cpp's words for a prompt and max_tokens over its window."""
ERROR_IN_200 = "the model failed while generating"


@dataclass
class Plan:
    """How one chat request is answered."""

    ident: str
    request: Request
    rule: Rule | None
    fault: str | None
    latency: float
    chunk_delay: float
    model: str
    """The model the reply names (the requested one, or the server's `reply_model`)."""
    logprobs: bool
    """Whether log-probabilities are sent when asked for (the server's `logprobs`)."""
    usage: dict[str, int] | None
    """Usage reported instead of the counted one (the server's `usage`)."""
    chunk_size: int
    overflow: str
    """The "overflow" fault's message for this request."""
    admitted: bool = False
    """Counted in flight until answered (see `max_in_flight`)."""


def envelope(plan: Plan, kind: str) -> dict[str, Any]:
    return {"id": plan.ident, "object": kind, "created": int(time.time()), "model": plan.model,
            "system_fingerprint": None}


def token_logprobs(plan: Plan, text: str) -> list[dict[str, Any]] | None:
    """OpenAI's `logprobs.content` for the reply, or None when not asked for (or switched off)."""
    if not plan.request.get("logprobs") or not plan.logprobs:
        return None
    tokens = fake_tokens(text)
    scripted = plan.rule.logprobs if plan.rule is not None else None
    numbers = [i for i, token in enumerate(tokens) if token.isdigit()]
    at = numbers[-1] if scripted and numbers else None
    k = int(plan.request.get("top_logprobs") or 0)
    entries = []
    for i, token in enumerate(tokens):
        alternatives = scripted if i == at and scripted else {token: 0.0}
        top = sorted(alternatives.items(), key=lambda item: -item[1])[:k]
        entries.append({
            "token": token, "logprob": alternatives.get(token, -9999.0), "bytes": list(token.encode()),
            "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top],
        })
    return entries


def usage(plan: Plan, text: str) -> dict[str, int]:
    if plan.usage is not None:
        return dict(plan.usage)
    prompt, completion = approx_tokens(prompt_text(plan.request)), approx_tokens(text)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def capped(plan: Plan, text: str) -> tuple[str, str]:
    """The reply cut at the request's max_tokens (fake tokens), and its finish reason."""
    limit = plan.request.get("max_tokens")
    tokens = fake_tokens(text)
    if isinstance(limit, int) and 0 < limit < len(tokens):
        return "".join(tokens[:limit]), "length"
    return text, "length" if plan.fault == "length" else "stop"


def completion_payload(plan: Plan, text: str) -> dict[str, Any]:
    text, finish = capped(plan, text)
    content = token_logprobs(plan, text)
    logprobs = {"content": content, "refusal": None} if content is not None else None
    return envelope(plan, "chat.completion") | {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "logprobs": logprobs, "finish_reason": finish}],
        "usage": usage(plan, text),
    }


def events(plan: Plan, text: str) -> Iterator[str]:
    """The stream's SSE payloads in order; endless for the "endless" fault."""
    head = envelope(plan, "chat.completion.chunk")

    def chunk(delta: dict[str, str], finish: str | None = None, logprobs: Any = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
        return json.dumps(head | {"choices": [choice], "usage": None})

    if plan.fault == "overflow":
        yield json.dumps(error_object(plan.overflow, 400))
        return
    if plan.fault == "error200":
        yield json.dumps(error_object(ERROR_IN_200, 500))
        return
    yield chunk({"role": "assistant", "content": ""})
    if plan.fault == "endless":  # ever new text: litellm stops a stream that repeats one chunk
        for number in itertools.count(1):
            yield chunk({"content": f"and then the judge went on about paragraph {number} "})
    text, finish = capped(plan, text)
    content = token_logprobs(plan, text)
    if content is not None:  # one token per chunk, each with its own log-probabilities
        pieces = [entry["token"] for entry in content]
        logprobs: list[dict[str, Any] | None] = [{"content": [entry], "refusal": None} for entry in content]
    else:
        size = max(1, plan.chunk_size)
        pieces = [text[i:i + size] for i in range(0, len(text), size)]
        logprobs = [None] * len(pieces)
    cut = (len(pieces) + 1) // 2
    for index in range(len(pieces) + 1):
        if index == cut:
            if plan.fault == "disconnect":
                return
            if plan.fault == "malformed":
                yield MALFORMED
            if plan.fault == "error_midstream":
                yield json.dumps(error_object(ERROR_IN_200, 500))
                return
        if index < len(pieces):
            yield chunk({"content": pieces[index]}, logprobs=logprobs[index])
    if plan.fault == "cut":
        return
    yield chunk({}, finish)
    yield json.dumps(head | {"choices": [], "usage": usage(plan, text)})
    yield "[DONE]"

