"""Spending limits: `--max-cost USD` and `--max-tokens N`, checked before every call.

A limit is checked against what is already spent *plus* the next call's
prompt, so a run stops before the call that would pass it, not after. The
stop is a `Stopped`, so the run ends cancelled, with the reason saved, and can
be resumed later with a larger budget. One Budget can guard one session (the
runner passes the session's usage) or a whole batch (pass the batch's total).
"""

from __future__ import annotations

from dataclasses import dataclass

from debate_tui.domain import Usage
from debate_tui.engine.control import Stopped
from debate_tui.llm import DEMO_MODEL, tokens
from debate_tui.llm.base import Message

PRICE_PROBE_TOKENS = 1_000_000
"""Prompt tokens priced to learn whether a model has a price at all (a million: no real price rounds to 0)."""


class BudgetExceeded(Stopped):
    """The next call would pass `--max-cost` or `--max-tokens`; the message says which and by how much."""


@dataclass(frozen=True)
class Budget:
    max_cost: float | None = None
    """US dollars; None: no limit."""
    max_tokens: int | None = None
    """Prompt plus completion tokens; None: no limit."""

    @property
    def limited(self) -> bool:
        return self.max_cost is not None or self.max_tokens is not None

    def check(self, spent: Usage, next_prompt_tokens: int = 0, next_cost: float = 0.0) -> None:
        """Raise BudgetExceeded when the next call, counting its prompt alone, would pass a limit."""
        used = spent.prompt_tokens + spent.completion_tokens
        if self.max_tokens is not None and used + next_prompt_tokens > self.max_tokens:
            raise BudgetExceeded(
                f"token budget reached: {used:,} tokens spent and the next call needs about "
                f"{next_prompt_tokens:,} more, over --max-tokens {self.max_tokens:,}")
        if self.max_cost is not None and spent.cost_usd + next_cost > self.max_cost:
            raise BudgetExceeded(
                f"cost budget reached: ${spent.cost_usd:.4f} spent and the next call's prompt costs about "
                f"${next_cost:.4f}, over --max-cost ${self.max_cost:g}")

    def unenforceable(self, models: list[str]) -> str | None:
        """Why `--max-cost` cannot hold for some of `models`, or None: litellm has no price for them, so their
        calls count $0 and the cap never comes (12 calls at "$0" with no word, before)."""
        if self.max_cost is None:
            return None
        unpriced = sorted({m for m in models if m != DEMO_MODEL and tokens.prompt_cost(m, PRICE_PROBE_TOKENS) <= 0})
        if not unpriced:
            return None
        return (f"--max-cost cannot be enforced for {', '.join(unpriced)}: litellm has no price for "
                f"{'it' if len(unpriced) == 1 else 'them'}, so its calls count $0; bound them with --max-tokens N")

    def check_prompt(self, spent: Usage, model: str, messages: list[Message]) -> None:
        """`check` for the next call's prompt, counting its tokens exactly only when that could matter.

        Without a limit nothing is counted. With one, a cheap upper bound of the
        prompt's size is tried first: when even the bound passes, so would the
        exact count (a tokenizer pass of 1-2 ms, and a price lookup, per call).
        """
        if not self.limited:
            return
        bound = tokens.prompt_tokens_bound(messages)
        try:
            self.check(spent, bound, self._prompt_cost(model, bound))
            return
        except BudgetExceeded:
            pass
        size = tokens.prompt_tokens(model, messages)
        self.check(spent, size, self._prompt_cost(model, size))

    def _prompt_cost(self, model: str, size: int) -> float:
        return tokens.prompt_cost(model, size) if self.max_cost is not None else 0.0
