"""Result lines from a session: one per criterion, in the shape `debate-tui meta` reads.

    {"id", "group", "criterion", "predicted", "human", "predicted_verdict"?, "human_verdict"?,
     "session", "protocol", "model" (its models, comma-separated), "status", "calls", "cache_hits",
     "prompt_tokens", "completion_tokens", "cost_usd",
     "error"?, "predicted_errors"?, "human_errors"?, "decided_by"?, "decided_at"?,
     "predicted_vote"?, "verdict_vote"?, "calls_vote"?, "cost_usd_vote"?, "predicted_judges"?, "verdict_judges"?,
     "jury"?, "confidence"}   (the vote's and the jury's fields: see `vote_rows`)

`confidence` is the session's (its protocol's rule, `protocols.confidence`), in [0, 1]; null when the line
is unscored or a person gave its answer (a decision or an override).

Usage is split by the criterion each turn was about, so summing a column over
the file gives the batch's total without counting a session twice; turns not
tied to a criterion are put on the first line. A completed turn that made no
call was served from the response cache. Item-level lists (MATEval's located
errors) go on the item's first line only, so `meta` counts each item once.

The lines are a pure function of the item's human judgments and its session:
a review decision just recomputes them (`refresh`), so the two never disagree.
"""

from __future__ import annotations

from debate_tui.batch.items import Item
from debate_tui.batch.results import Row
from debate_tui.batch.vote_rows import VOTE_FIELDS, vote_fields
from debate_tui.domain import HumanAction, Session, Usage

SESSION_FIELDS = ("predicted", "predicted_verdict", "session", "status", "calls", "cache_hits", "prompt_tokens",
                  "completion_tokens", "cost_usd", "error", "predicted_errors", "decided_by", "decided_at",
                  "protocol", "model", "confidence", *VOTE_FIELDS)
"""What a row takes from the session; everything else comes from the input item."""


def item_rows(item: Item, session: Session) -> list[Row]:
    """Fresh rows for an item that has just finished."""
    rows: list[Row] = []
    for criterion in session.criteria:
        row: Row = {"id": item.id, "group": item.group, "criterion": criterion.name,
                    "predicted": None, "human": item.human.get(criterion.name)}
        if item.task.pairwise:
            row["predicted_verdict"] = None
        if item.human_verdict is not None:
            row["human_verdict"] = item.human_verdict
        if item.human_errors is not None and not rows:
            row["human_errors"] = item.human_errors
        rows.append(row)
    return refresh(rows, session)


def refresh(rows: list[Row], session: Session) -> list[Row]:
    """The same rows with every session-derived field recomputed (after a decision, say)."""
    usage = usage_by_criterion(session)
    outcome = session.outcome
    out: list[Row] = []
    for row in rows:
        name = str(row["criterion"])
        decision = last_decision(session, name)
        new = {k: v for k, v in row.items() if k not in SESSION_FIELDS}
        new["predicted"] = outcome.scores.get(name) if outcome else None
        if session.task.pairwise:
            new["predicted_verdict"] = outcome.verdict if outcome else None
        new |= vote_fields(session, name)
        spent, hits = usage.get(name, (Usage(), 0))
        new |= {"session": session.id, "protocol": session.protocol, "model": ",".join(session.models),
                "status": session.status, "calls": spent.calls, "cache_hits": hits,
                "prompt_tokens": spent.prompt_tokens, "completion_tokens": spent.completion_tokens,
                "cost_usd": round(spent.cost_usd, 8)}
        if session.error:
            new["error"] = session.error
        if outcome is not None and out == [] and (outcome.errors or "human_errors" in row):
            new["predicted_errors"] = [{"type": e.type, "quote": e.quote} for e in outcome.errors if e.which == "a"]
        if decision is not None:
            new["decided_by"], new["decided_at"] = decision.who, decision.at.isoformat()
        new["confidence"] = None if outcome is None or decision is not None else outcome.confidence.get(name)
        out.append(new)
    return out


def last_decision(session: Session, criterion: str) -> HumanAction | None:
    """The latest person's say on this line: a decision (any criterion's) or an override of this score."""
    return next((a for a in reversed(session.actions)
                 if a.kind == "decide" or (a.kind == "override" and a.criterion == criterion)), None)


def usage_by_criterion(session: Session) -> dict[str, tuple[Usage, int]]:
    """Spent usage and cache hits per criterion name."""
    names = [c.name for c in session.criteria]
    out: dict[str, tuple[Usage, int]] = {name: (Usage(), 0) for name in names}
    for turn in session.turns:
        name = turn.criterion if turn.criterion in out else names[0]
        spent, hits = out[name]
        spent.add(turn.usage)
        cached = turn.error is None and turn.usage.calls == 0
        out[name] = (spent, hits + cached)
    return out

