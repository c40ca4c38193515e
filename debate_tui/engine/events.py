"""What a run tells its watchers. The CLI prints these; the TUI turns them into messages."""

from __future__ import annotations

from dataclasses import dataclass

from debate_tui.domain import Outcome, Role, Status, Turn


@dataclass(frozen=True)
class TurnStarted:
    slot: int
    agent: str
    role: Role
    round: int
    criterion: str | None


@dataclass(frozen=True)
class TextDelta:
    slot: int
    agent: str
    text: str


@dataclass(frozen=True)
class TurnCompleted:
    turn: Turn
    replayed: bool = False
    """True when a resumed run re-reads this turn from the session instead of calling the model."""


@dataclass(frozen=True)
class TurnFailed:
    slot: int
    agent: str
    error: str
    partial_text: str
    will_retry: bool


@dataclass(frozen=True)
class RoundCompleted:
    round: int
    criterion: str | None


@dataclass(frozen=True)
class NeedsHuman:
    question: str
    options: tuple[str, ...]


@dataclass(frozen=True)
class OutcomeReached:
    outcome: Outcome


@dataclass(frozen=True)
class Notice:
    message: str


@dataclass(frozen=True)
class Finished:
    status: Status
    error: str | None


Event = (
    TurnStarted | TextDelta | TurnCompleted | TurnFailed | RoundCompleted
    | NeedsHuman | OutcomeReached | Notice | Finished
)
