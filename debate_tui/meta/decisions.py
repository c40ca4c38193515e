"""Every decision a label: the answers people gave in sessions, as the label lines `meta`, `calibrate`,
`compare` and `audit` read (`debate-tui labels`).

A person's answer is a `HumanAction` of a label kind (an override, a decision, an audit) with a value. Its
line: `id` (the batch item's, from the results files that name the session; an ad hoc run's session id),
`criterion`, `human` (a score) or `human_verdict` (a pair's), `source`, `session`, `decided_at`, `blind`,
and what the judge had answered (`judge`, `judge_confidence`), `who` and `where`. Two answers on one (id,
criterion): the later wins; the earlier is counted as `superseded`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, get_args

from debate_tui.domain import LABEL_KINDS, VERDICT_FLIP, HumanAction, LabelSource, Session

Line = dict[str, Any]
SOURCES: tuple[LabelSource, ...] = get_args(LabelSource)


@dataclass
class LabelExport:
    lines: list[Line] = field(default_factory=list)
    superseded: int = 0

    def summary(self) -> dict[str, Any]:
        """`labels` and a count per source (every source named, 0 included), then what was superseded."""
        counts = Counter(line["source"] for line in self.lines)
        return {"labels": len(self.lines), **{source: counts[source] for source in SOURCES},
                "blind": sum(line["blind"] for line in self.lines), "superseded": self.superseded}


def criterion_of(session: Session, action: HumanAction) -> str | None:
    """The criterion an answer is about: the action's, else (a session saved before it was kept) the only
    criterion, or that of the last turn before the action."""
    if action.criterion is not None:
        return action.criterion
    if len(session.criteria) == 1:
        return session.criteria[0].name
    done = [t for t in session.turns if t.error is None][: action.after_turn]
    return next((t.criterion for t in reversed(done) if t.criterion), None)


def label_line(session: Session, action: HumanAction, ident: str) -> Line | None:
    """One action as a label line; None for one that gives no answer."""
    criterion = criterion_of(session, action)
    if action.kind not in LABEL_KINDS or action.value is None or criterion is None:
        return None
    line: Line = {"id": ident, "criterion": criterion}
    if session.task.pairwise:
        if str(action.value) not in VERDICT_FLIP:
            return None
        line["human_verdict"] = str(action.value)
    else:
        try:
            line["human"] = float(action.value)
        except ValueError:
            return None
    line |= {"source": action.label_source, "session": session.id, "decided_at": action.at.isoformat(),
             "blind": action.blind, "judge": action.judge_answer, "judge_confidence": action.judge_confidence,
             "who": action.who, "where": action.where or action.kind}
    return line


def export(sessions: Iterable[Session], ids: dict[str, str]) -> LabelExport:
    """The label lines of these sessions, in the order they were decided; `ids`: session id -> item id."""
    lines = [line for session in sessions for action in session.actions
             if (line := label_line(session, action, ids.get(session.id, session.id))) is not None]
    lines.sort(key=lambda line: line["decided_at"])
    latest: dict[tuple[str, str], Line] = {}
    for line in lines:
        latest[(line["id"], line["criterion"])] = line  # the later answer wins
    return LabelExport(list(latest.values()), len(lines) - len(latest))
