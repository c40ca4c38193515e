"""Measuring a prompt before it is sent: its size in tokens, the model's window, its price.

A call that cannot fit must be refused, or its history condensed, before it is
made: a provider that silently drops the start of a prompt would judge a text
it never saw. Real models are measured with litellm's tokenizer and model
table; the offline demo model gets a word-based estimate, because importing
litellm for it would cost seconds for nothing.
"""

from __future__ import annotations

import asyncio
import math
from functools import lru_cache

from debate_tui.domain import AgentSpec
from debate_tui.llm import DEMO_MODEL
from debate_tui.llm.base import Message
from debate_tui.llm.litellm_loader import litellm_loaded, load_litellm

MESSAGE_OVERHEAD = 4
"""Tokens a chat format spends on each message's role and delimiters (OpenAI's figure)."""
BOUND_OVERHEAD = 16
"""Per message in `prompt_tokens_bound`: the role, delimiters and a tokenizer's leading marker, generously."""


def needs_loading(model: str) -> bool:
    """Whether measuring `model`'s prompts would first import litellm (seconds of CPU, once a process)."""
    return model != DEMO_MODEL and not litellm_loaded()


async def load_off_loop() -> None:
    """litellm imported in a thread, awaited: imported on the loop (or waited for there, while a warm-up thread
    holds its import lock) it froze a screen for 9-15 s at the first real call."""
    await asyncio.to_thread(load_litellm)


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
    try:
        return int(load_litellm().token_counter(model=model, messages=messages))
    except Exception:  # a model or message shape litellm's counter does not know
        return approx_prompt_tokens(messages)


@lru_cache(maxsize=64)
def context_window(model: str) -> int | None:
    """The model's input window in tokens, from litellm's model table; None when unknown."""
    if model == DEMO_MODEL:
        return None
    try:
        window = load_litellm().get_model_info(model).get("max_input_tokens")
    except Exception:  # not in litellm's table: a local or custom model
        return None
    return int(window) if window else None


def window_for(agent: AgentSpec) -> tuple[int | None, int]:
    """The window `agent`'s prompts must fit and the room they leave in it for the reply.

    A window from the configuration (`[models."<model>"] context_window`) holds
    prompt and reply, as a local server's does, so the reply cap is kept free;
    litellm's `max_input_tokens` is the prompt's alone.
    """
    if agent.context_window:
        return agent.context_window, int(agent.params.get("max_tokens") or 0)
    return context_window(agent.model), 0


def output_reserve(window: int) -> int:
    """Room left in the window for the reply: a quarter of it, at most 4,096 tokens."""
    return min(4096, window // 4)


def prompt_cost(model: str, tokens: int) -> float:
    """What `tokens` prompt tokens cost on `model` in US dollars; 0 when no price is known."""
    if model == DEMO_MODEL or tokens <= 0:
        return 0.0
    try:
        cost, _ = load_litellm().cost_per_token(model=model, prompt_tokens=tokens, completion_tokens=0)
    except Exception:  # unknown or local model: no price known
        return 0.0
    return float(cost)


CHARS_PER_TOKEN = 3
"""English text averages 4 to 4.5 characters a token in the usual BPE vocabularies: 3 errs high."""


class ReplyMeter:
    """Counts a streamed reply's tokens, to stop reading it at its cap.

    Each delta counts as at least one token (a provider's chunk is a token or
    more), and the text as at least a token per 3 characters, so the estimate
    errs high. Only once that estimate reaches the cap is the text counted
    with the model's tokenizer (a few milliseconds, a few times a reply, never
    per chunk), and the reply is at its cap when that exact count says so.
    """

    def __init__(self, model: str, cap: int | None):
        self.model = model
        self.cap = cap
        self.deltas = 0
        self.chars = 0
        self._recount_at = cap
        """The estimate at which the tokenizer is asked (again)."""

    def add(self, parts: list[str]) -> bool:
        """Note the latest delta of the reply so far, `parts`; True when the reply has reached its cap.

        The parts are joined only for an exact count: joining them for every delta would copy the
        whole reply once a token.
        """
        self.deltas += 1
        self.chars += len(parts[-1])
        estimate = max(self.deltas, math.ceil(self.chars / CHARS_PER_TOKEN))
        if self.cap is None or self._recount_at is None or estimate < self._recount_at:
            return False
        exact = reply_tokens(self.model, "".join(parts))
        if exact >= self.cap:
            return True
        self._recount_at = estimate + (self.cap - exact)  # the estimate must grow by the gap before asking again
        return False


def reply_tokens(model: str, text: str) -> int:
    """A reply's size for `model`: litellm's count, or the estimate when litellm cannot tell."""
    if model == DEMO_MODEL:
        return approx_tokens(text)
    try:
        return int(load_litellm().token_counter(model=model, text=text))
    except Exception:  # a model litellm's counter does not know
        return approx_tokens(text)
