"""Replay a recorded session turn by turn, as the same events a live run emits.

The debate screen cannot tell a replay from a run: turns stream in, human
actions appear where they were taken, the outcome arrives last. It passes
RunControl's gate before each turn, so step mode and pause work the same. It
never calls a model and never changes the session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from debate_tui.domain import HumanAction, Session
from debate_tui.engine.control import RunControl, Stopped
from debate_tui.engine.events import (
    Event,
    Finished,
    HumanActed,
    OutcomeReached,
    Planned,
    RoundCompleted,
    TextDelta,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
)
from debate_tui.engine.runner import acted_on

CHUNK = 24
"""Characters per replayed delta: small enough to look live, few enough to stay cheap."""
MAX_CHUNKS = 400
"""Deltas per replayed turn at most: a long turn goes in larger pieces, so its replay takes seconds."""


def describe_action(action: HumanAction) -> str:
    """One line for the transcript, e.g. 'alice overrode coherence to 3: too generous'."""
    what = {
        "inject": "injected a remark",
        "override": (f"overrode the verdict on {action.criterion} to {action.value}" if isinstance(action.value, str)
                     else f"overrode {action.criterion} to {action.value:g}" if action.value is not None
                     else f"overrode {action.criterion}"),
        "decide": f"decided {action.value}",
        "stop": "stopped the run",
        "audit": f"answered {_shown(action.value)} in a blind audit (a label only: the result is left as it is)",
    }[action.kind]
    return f"{action.who} {what}" + (f": {action.text}" if action.text else "")


def _shown(value: float | str | None) -> str:
    """A value as the scale writes it (3, not 3.0); every entry of `describe_action` is built, whatever the kind."""
    return "" if value is None else value if isinstance(value, str) else f"{value:g}"


class Replayer:
    """Plays `session` back through `emit`; `run()` mirrors `Runner.run()`."""

    def __init__(self, session: Session, *, emit: Callable[[Event], None], control: RunControl,
                 chunk_delay_s: float = 0.01):
        self.session = session
        self.emit = emit
        self.control = control
        self.chunk_delay_s = chunk_delay_s

    def _actions_after(self, completed: int) -> None:
        for action in self.session.actions:
            if action.after_turn == completed:
                self.emit(HumanActed(action, acted_on(self.session, action)))

    async def run(self) -> Session:
        session = self.session
        completed, last_round = 0, None
        rounds = [turn.round for turn in session.turns]
        self.emit(Planned(max(rounds, default=0), min(rounds, default=1)))
        try:
            self._actions_after(0)
            for turn in session.turns:
                await self.control.gate()
                if last_round is not None and turn.round != last_round:
                    self.emit(RoundCompleted(last_round, turn.criterion))
                last_round = turn.round
                self.emit(TurnStarted(turn.slot, turn.agent, turn.role, turn.round, turn.criterion))
                step = max(CHUNK, len(turn.content) // MAX_CHUNKS)
                for start in range(0, len(turn.content), step):
                    if self.control.stopped:  # a stop takes effect within a chunk, not at the end of the turn
                        raise Stopped(self.control.stop_reason)
                    self.emit(TextDelta(turn.slot, turn.agent, turn.content[start:start + step]))
                    if self.chunk_delay_s:
                        await asyncio.sleep(self.chunk_delay_s)
                if turn.error is not None:
                    self.emit(TurnFailed(turn.slot, turn.agent, turn.error, turn.content, will_retry=False))
                    continue
                self.emit(TurnCompleted(turn))
                completed += 1
                self._actions_after(completed)
        except Stopped as exc:
            self.emit(Finished("cancelled", f"replay stopped: {exc}"))
            return session
        if session.outcome is not None:
            self.emit(OutcomeReached(session.outcome))
        self.emit(Finished(session.status, session.error))
        return session
