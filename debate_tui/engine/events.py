"""What a run tells its watchers. The CLI prints these; the TUI turns them into messages."""

from __future__ import annotations

from dataclasses import dataclass

from debate_tui.domain import HumanAction, Outcome, Role, Status, Turn


@dataclass(frozen=True)
class TurnStarted:
    slot: int
    agent: str
    role: Role
    round: int
    criterion: str | None
    reminder: str = ""
    """A second call of the same turn, after a reply without the asked-for answer: what it asks for
    ("the score line"), so a screen can tell it from a turn of its own."""


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
class Planned:
    """How far the run goes: its rounds are numbered up to `last_round` (per criterion where a protocol
    debates each criterion in turn), so a watcher can say "round k of R"."""

    last_round: int
    first_round: int = 1
    """0 where a protocol numbers an opening round 0 (ScaleEval's initial verdicts, DEBATE's first score)."""


@dataclass(frozen=True)
class NeedsHuman:
    """A person must choose one of `options`; `labels` says what each means, `details` what is being decided
    (labelled excerpts: the texts, each agent's last position), all in the original texts' numbering."""

    question: str
    options: tuple[str, ...]
    labels: tuple[str, ...] = ()
    details: tuple[tuple[str, str], ...] = ()
    criterion: str | None = None
    """The criterion the decision is about (a DEBATE tie on coherence, a ScaleEval verdict on helpfulness)."""


@dataclass(frozen=True)
class HumanActed:
    """A person's action, recorded: `agents` are those it acts on (whose score an override replaces, everyone a
    remark reaches), so it shows where it acts at the moment it acts."""

    action: HumanAction
    agents: tuple[str, ...]


@dataclass(frozen=True)
class OutcomeReached:
    outcome: Outcome


@dataclass(frozen=True)
class Notice:
    message: str


@dataclass(frozen=True)
class Waiting:
    """The run waits for something that is not a model's reply (the provider library's first import): said
    where the speaker would be, until the next turn starts."""

    what: str


@dataclass(frozen=True)
class Finished:
    status: Status
    error: str | None


Event = (
    TurnStarted | TextDelta | TurnCompleted | TurnFailed | RoundCompleted | Planned
    | NeedsHuman | HumanActed | OutcomeReached | Notice | Waiting | Finished
)
