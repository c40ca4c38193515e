"""One session's run: its runner from the session factory with the retry policy and the budget the limits set,
and, headless, a loop of its own that Ctrl+C and SIGTERM stop cleanly (the session stays resumable)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING

from debate_tui.engine.budget import Budget
from debate_tui.engine.runner import RetryPolicy
from debate_tui.factory import runner_for

if TYPE_CHECKING:
    from debate_tui.config import Limits
    from debate_tui.domain import Session
    from debate_tui.engine.control import RunControl
    from debate_tui.engine.events import Event
    from debate_tui.engine.runner import Runner, Store
    from debate_tui.llm.base import LLMClient


def budget_of(limits: Limits, models: list[str], warn: Callable[[str], None] | None = None) -> Budget:
    """--max-cost and --max-tokens as one budget; `warn` is told when litellm has no price for a model (its calls
    count $0, so a cost cap would never come)."""
    budget = Budget(max_cost=limits.max_cost, max_tokens=limits.max_tokens)
    if warn is not None and (unenforceable := budget.unenforceable(models)) is not None:
        warn(unenforceable)
    return budget


def assemble_run(session: Session, client: LLMClient, limits: Limits, *, emit: Callable[[Event], None],
                 save: Store, control: RunControl, interactive: bool = False,
                 warn: Callable[[str], None] | None = None) -> Runner:
    """The runner of `session`: its calls through `client`, retried and budgeted as `limits` say, saved after every
    turn. `interactive`: a person is there to answer (the TUI)."""
    budget = budget_of(limits, [agent.model for agent in session.agents], warn)
    return runner_for(session, client, emit=emit, save=save, control=control, interactive=interactive,
                      retry=RetryPolicy.of(limits), budget=budget)


def play_to_end(runner: Runner, control: RunControl) -> None:
    """Run on a fresh loop; Ctrl+C or SIGTERM stops the run (`control.stop`), which then ends resumable.

    `asyncio.Runner` also cancels what litellm leaves running (its logging worker) before the loop closes."""
    with asyncio.Runner() as loop_runner:
        loop = loop_runner.get_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, control.stop, "interrupted (Ctrl+C)")
            loop.add_signal_handler(signal.SIGTERM, control.stop, "terminated")
        except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
            pass
        loop_runner.run(runner.run())
