"""Measuring a prompt before it is sent: its size in tokens, the model's window, its price.

A call that cannot fit must be refused, or its history condensed, before it is
made: a provider that silently drops the start of a prompt would judge a text
it never saw. Real models are measured with litellm's tokenizer and model
table; the offline demo model gets a word-based estimate, because importing
litellm for it would cost seconds for nothing.
"""

from __future__ import annotations

import math
from functools import lru_cache

from debate_tui.llm.base import Message
from debate_tui.llm import DEMO_MODEL

MESSAGE_OVERHEAD = 4
"""Tokens a chat format spends on each message's role and delimiters (OpenAI's figure)."""
BOUND_OVERHEAD = 16
"""Per message in `prompt_tokens_bound`: the role, delimiters and a tokenizer's leading marker, generously."""


def approx_tokens(text: str) -> int:
    """About 4 tokens per 3 words: the usual rule of thumb for English prose."""
    return math.ceil(len(text.split()) * 4 / 3)


def approx_prompt_tokens(messages: list[Message]) -> int:
    return sum(approx_tokens(m.get("content") or "") + MESSAGE_OVERHEAD for m in messages)


def prompt_tokens_bound(messages: list[Message]) -> int:
    """An upper bound of any tokenizer's count, in microseconds rather than a tokenizer pass.

    Byte-level BPE tokens (OpenAI's, Llama's, most others) each stand for at
    least one byte, and byte-fallback tokenizers spend at most one token per
    byte, so a text is never more tokens than its UTF-8 bytes.
    """
    return sum(len((m.get("content") or "").encode("utf-8")) + len(m.get("role") or "") + BOUND_OVERHEAD
               for m in messages) + BOUND_OVERHEAD


def fits(model: str, messages: list[Message], limit: int) -> bool:
    """Whether the prompt is at most `limit` tokens for `model`, counted exactly only when the bound cannot tell.

    A prompt checked before every call (against the window, a history budget)
    is nearly always far under it; counting it exactly cost 1-2 ms a call, and
    the first count loads the encoding (about 0.3 s, on the UI's event loop).
    """
    return prompt_tokens_bound(messages) <= limit or prompt_tokens(model, messages) <= limit


def prompt_tokens(model: str, messages: list[Message]) -> int:
    """The prompt's size for `model`: litellm's count, or the estimate when litellm cannot tell."""
    if model == DEMO_MODEL:
        return approx_prompt_tokens(messages)
    from debate_tui.llm.litellm_client import load_litellm

    try:
        return int(load_litellm().token_counter(model=model, messages=messages))
    except Exception:  # a model or message shape litellm's counter does not know
        return approx_prompt_tokens(messages)


@lru_cache(maxsize=64)
def context_window(model: str) -> int | None:
    """The model's input window in tokens, from litellm's model table; None when unknown."""
    if model == DEMO_MODEL:
        return None
    from debate_tui.llm.litellm_client import load_litellm

    try:
        window = load_litellm().get_model_info(model).get("max_input_tokens")
    except Exception:  # not in litellm's table: a local or custom model
        return None
    return int(window) if window else None


def output_reserve(window: int) -> int:
    """Room left in the window for the reply: a quarter of it, at most 4,096 tokens."""
    return min(4096, window // 4)


def prompt_cost(model: str, tokens: int) -> float:
    """What `tokens` prompt tokens cost on `model` in US dollars; 0 when no price is known."""
    if model == DEMO_MODEL or tokens <= 0:
        return 0.0
    from debate_tui.llm.litellm_client import load_litellm

    try:
        cost, _ = load_litellm().cost_per_token(model=model, prompt_tokens=tokens, completion_tokens=0)
    except Exception:  # unknown or local model: no price known
        return 0.0
    return float(cost)
