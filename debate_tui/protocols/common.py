"""Pieces every protocol shares: choosing models for agents and describing the task to a judge."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from debate_tui.domain import Criterion


@dataclass
class ModelChoice:
    """Which model each agent uses: a default, overridden per agent name or per role."""

    default: str
    per_agent: dict[str, str] = field(default_factory=dict)
    per_role: dict[str, str] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    demo: bool = False
    """`--demo`: every agent answers with the offline demo model, even one whose model an option names (a jury)."""

    def model_for(self, agent: str, role: str) -> str:
        return self.named(agent) or self.per_role.get(role) or self.default

    def named(self, agent: str) -> str | None:
        """The model given for this agent by name (`--agent-model`), if any."""
        return next((model for name, model in self.per_agent.items() if name_key(name) == name_key(agent)), None)


def name_key(name: str) -> str:
    """How a person may type an agent's name on a command line: "general-public" for "General Public"."""
    return "-".join(name.lower().replace("_", " ").replace("-", " ").split())


T = TypeVar("T")


async def concurrently(calls: Iterable[Awaitable[T]]) -> list[T]:
    """Run turns at the same time and return their results in call order.

    The runner numbers each turn when it starts, and the calls start in order, so
    slots stay deterministic. The first failure cancels the other calls and is
    raised as itself (not an ExceptionGroup), so the runner classifies it as usual.
    """
    calls = list(calls)
    if len(calls) == 1:  # one turn (a batch's single judge, every item): awaited as it is, no task to make
        return [await calls[0]]
    tasks = [asyncio.ensure_future(call) for call in calls]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def criterion_block(criterion: Criterion) -> str:
    lines = [f"Evaluation criterion: {criterion.name} ({criterion.scale})", criterion.description]
    if criterion.steps:
        lines.append("Evaluation steps:")
        lines.extend(f"{number}. {step}" for number, step in enumerate(criterion.steps, start=1))
    return "\n".join(lines)


def score_form(criterion: Criterion) -> str:
    return ("Give your reasoning, then end with a line 'Score: N' "
            f"where N is between {criterion.low:g} and {criterion.high:g}.")


def excerpt(text: str, limit: int = 240) -> str:
    """The start of `text` on one line, for a person deciding at a glance (the report keeps it whole)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def counted(n: int, noun: str) -> str:
    """"1 iteration", "2 iterations": a count that agrees with its noun."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
