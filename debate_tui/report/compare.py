"""Two sessions side by side: where their debates part, how their scores differ, which errors each found.

The typed `SessionComparison` is what `debate-tui compare SESSION_A SESSION_B`
prints and what a side-by-side view draws: both sessions with their turns, the
index of the first turn where they part, the rounds aligned, the scores per
criterion, the verdicts of a pair, and the errors found by both, by A only, by B only.

Errors are matched by (type, quote), the quote with its whitespace collapsed,
never by position: the usual question is "what did version 2 of my text fix
and break", and once a sentence is removed or added every later line and column
moves, while the sentence an evaluator quotes stays the same words. Each side keeps its
own location (line and column in its own text). Repeats count: two REP errors
quoting one sentence in A and one in B leave one in `both` and one in `only_a`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from debate_tui.domain import ErrorSpan, Session, Turn
from debate_tui.report.errors_text import line_col
from debate_tui.textsafe import inert_line

ErrorKey = tuple[str, str]


@dataclass(frozen=True)
class LocatedError:
    """An error of one side, where it sits in that side's text (line and column None: not located)."""

    type: str
    quote: str
    line: int | None
    column: int | None
    which: str
    """"a" for the text (a pair's first), "b" for a pair's second text."""
    start: int | None = None
    end: int | None = None
    """The span in that text, for a view that marks it (None: not located)."""

    @property
    def where(self) -> str:
        """`line:column` in its side's text, or "not located"."""
        return "not located" if self.line is None else f"{self.line}:{self.column}"

    @property
    def key(self) -> ErrorKey:
        return self.type, " ".join(self.quote.split())

    def data(self) -> dict[str, Any]:
        return {"type": self.type, "line": self.line, "column": self.column, "quote": self.quote}


@dataclass(frozen=True)
class SharedError:
    """An error both sides found, each at its own place."""

    a: LocatedError
    b: LocatedError

    def data(self) -> dict[str, Any]:
        return self.a.data() | {"line_b": self.b.line, "column_b": self.b.column}


@dataclass(frozen=True)
class CriterionRow:
    criterion: str
    a: float | None
    b: float | None

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    def data(self) -> dict[str, Any]:
        return {"criterion": self.criterion, "a": self.a, "b": self.b, "delta": self.delta}


@dataclass(frozen=True)
class AlignedRound:
    """One round's turns on each side (either may be empty: one debate went on longer)."""

    round: int
    a: list[Turn]
    b: list[Turn]
    parts_here: bool = False
    """This segment's first turns are the first where the debates part (see `SessionComparison.segments`)."""


@dataclass(frozen=True)
class SessionComparison:
    a: Session
    b: Session
    same_text: bool
    shared_turns: int
    """Leading turns with the same agent and content: a fork's fork point."""
    criteria: list[CriterionRow]
    verdict: tuple[str | None, str | None] | None
    """(A's, B's) verdict when either is a pair, else None."""
    both: list[SharedError]
    only_a: list[LocatedError]
    only_b: list[LocatedError]

    @property
    def parts_at(self) -> int | None:
        """The index of the first turn where the debates differ; None when one's turns are all the other's."""
        return None if self.shared_turns == min(len(self.a.turns), len(self.b.turns)) else self.shared_turns

    def rounds(self) -> list[AlignedRound]:
        """Both sides' turns grouped by round, in round order."""
        numbers = sorted({t.round for t in self.a.turns} | {t.round for t in self.b.turns})
        return [AlignedRound(n, [t for t in self.a.turns if t.round == n], [t for t in self.b.turns if t.round == n])
                for n in numbers]

    def segments(self) -> list[AlignedRound]:
        """The rounds aligned as `rounds`, the round where the debates part cut in two at that turn.

        A side-by-side view draws these in order and puts its "they part here" mark before the
        segment with `parts_here`: the turns above it are the same on both sides, those below differ.
        """
        if self.parts_at is None:
            return self.rounds()
        index_a = {id(turn): index for index, turn in enumerate(self.a.turns)}
        index_b = {id(turn): index for index, turn in enumerate(self.b.turns)}
        out, parted = [], False
        for aligned in self.rounds():
            before_a = [t for t in aligned.a if index_a[id(t)] < self.parts_at]
            before_b = [t for t in aligned.b if index_b[id(t)] < self.parts_at]
            after_a, after_b = aligned.a[len(before_a):], aligned.b[len(before_b):]
            if before_a or before_b:
                out.append(AlignedRound(aligned.round, before_a, before_b))
            if after_a or after_b:
                out.append(AlignedRound(aligned.round, after_a, after_b, parts_here=not parted))
                parted = True
        return out

    def data(self) -> dict[str, Any]:
        """The JSON `compare` prints for two sessions."""
        return {"kind": "sessions", "a": side(self.a), "b": side(self.b), "same_text": self.same_text,
                "shared_turns": self.shared_turns, "criteria": [row.data() for row in self.criteria],
                "verdict": None if self.verdict is None else {"a": self.verdict[0], "b": self.verdict[1]},
                "errors": {"both": [e.data() for e in self.both], "only_a": [e.data() for e in self.only_a],
                           "only_b": [e.data() for e in self.only_b]}}


def side(session: Session) -> dict[str, Any]:
    return {"session": session.id, "protocol": session.protocol, "models": session.models, "status": session.status}


def shared_turns(a: Sequence[Turn], b: Sequence[Turn]) -> int:
    """How many leading turns have the same agent and the same content."""
    count = 0
    for turn_a, turn_b in zip(a, b, strict=False):
        if (turn_a.agent, turn_a.content) != (turn_b.agent, turn_b.content):
            break
        count += 1
    return count


def located_errors(session: Session) -> list[LocatedError]:
    """The session's final errors, each with its line and column in the text it points into."""
    out = []
    for error in session.outcome.errors if session.outcome else []:
        out.append(_located(session, error))
    return out


def _located(session: Session, error: ErrorSpan) -> LocatedError:
    text = session.task.text_b if error.which == "b" and session.task.text_b else session.task.text
    line, column = line_col(text, error.start) if error.start is not None else (None, None)
    return LocatedError(error.type, error.quote, line, column, error.which, error.start, error.end)


def match_errors(a: list[LocatedError], b: list[LocatedError]) -> tuple[list[SharedError], list[LocatedError],
                                                                        list[LocatedError]]:
    """Errors of both sides paired by (type, quote), in A's order; the rest of each side, in its own order."""
    waiting: dict[ErrorKey, list[int]] = {}
    for index, error in enumerate(b):
        waiting.setdefault(error.key, []).append(index)
    both, only_a, matched = [], [], set()
    for error in a:
        if waiting.get(error.key):
            index = waiting[error.key].pop(0)
            matched.add(index)
            both.append(SharedError(error, b[index]))
        else:
            only_a.append(error)
    return both, only_a, [e for index, e in enumerate(b) if index not in matched]


def _criteria(a: Session, b: Session) -> list[CriterionRow]:
    """A row per criterion of either side, then per other score an outcome holds (MATEval's total)."""
    scores_a = a.outcome.scores if a.outcome else {}
    scores_b = b.outcome.scores if b.outcome else {}
    names = list(dict.fromkeys([c.name for c in a.criteria] + [c.name for c in b.criteria] + [*scores_a, *scores_b]))
    return [CriterionRow(name, scores_a.get(name), scores_b.get(name)) for name in names]


def compare_sessions(a: Session, b: Session) -> SessionComparison:
    """The two sessions compared (see the module's docstring)."""
    pairwise = a.task.pairwise or b.task.pairwise
    verdict = (a.outcome.verdict if a.outcome else None, b.outcome.verdict if b.outcome else None)
    both, only_a, only_b = match_errors(located_errors(a), located_errors(b))
    return SessionComparison(
        a, b, same_text=(a.task.text, a.task.text_b) == (b.task.text, b.task.text_b),
        shared_turns=shared_turns(a.turns, b.turns), criteria=_criteria(a, b),
        verdict=verdict if pairwise else None, both=both, only_a=only_a, only_b=only_b)


def score_text(value: float | None, signed: bool = False) -> str:
    """A score as the comparison prints it: "n/a" for none, a delta signed."""
    return "n/a" if value is None else (f"{value:+g}" if signed else f"{value:g}")


def _error_line(error: LocatedError, prefix: str = "") -> str:
    return f"  {prefix}{error.type} at {error.where}: {inert_line(error.quote)!r}"


def format_sessions(comparison: SessionComparison) -> str:
    """What `compare` prints for two sessions, every field from the files made inert on its line."""
    a, b = comparison.a, comparison.b
    lines = [inert_line(f"A = {a.id} ({a.protocol}, {', '.join(a.models)}, {a.status}, {len(a.turns)} turns)"),
             inert_line(f"B = {b.id} ({b.protocol}, {', '.join(b.models)}, {b.status}, {len(b.turns)} turns)"),
             f"text: {'the same' if comparison.same_text else 'different'}; shared leading turns: "
             f"{comparison.shared_turns}" + ("" if comparison.parts_at is None
                                              else f" (they part at turn {comparison.parts_at + 1})")]
    lines += [inert_line(f"{row.criterion}: A {score_text(row.a)}, B {score_text(row.b)}, "
                         f"B - A {score_text(row.delta, True)}") for row in comparison.criteria]
    if comparison.verdict is not None:
        lines.append(f"verdict: A {comparison.verdict[0] or 'none'}, B {comparison.verdict[1] or 'none'}")
    if comparison.both or comparison.only_a or comparison.only_b:
        lines.append(f"errors: {len(comparison.both)} in both, {len(comparison.only_a)} only in A, "
                     f"{len(comparison.only_b)} only in B")
        lines += [_error_line(e.a, "both: ") for e in comparison.both]
        lines += [_error_line(e, "only A: ") for e in comparison.only_a]
        lines += [_error_line(e, "only B: ") for e in comparison.only_b]
    return "\n".join(lines)
