"""The result line's fields for the vote before discussion and for a jury (see `rows`).

    "predicted_vote", "verdict_vote" (a pair): the vote's score and verdict, beside "predicted" and
        "predicted_verdict"; "calls_vote", "cost_usd_vote": what its turns cost on this line's criterion.
    "predicted_judges" ({judge: score}), "verdict_judges" ({judge: verdict}, a pair), "jury" ({judge: model}):
        each judge of a jury, for `meta`'s inter-judge agreement.
"""

from __future__ import annotations

from debate_tui.batch.results import Row
from debate_tui.domain import Session, Usage

VOTE_FIELDS = ("predicted_vote", "verdict_vote", "calls_vote", "cost_usd_vote",
               "predicted_judges", "verdict_judges", "jury")


def vote_fields(session: Session, criterion: str) -> Row:
    """The vote's and the jury's fields of the line on `criterion`; none for a session without them."""
    outcome = session.outcome
    if outcome is None:
        return {}
    out: Row = {}
    if (vote := outcome.vote) is not None:
        out["predicted_vote"] = vote.scores.get(criterion)
        if session.task.pairwise:
            out["verdict_vote"] = vote.verdict
        spent = _vote_usage(session, set(vote.slots), criterion)
        out["calls_vote"], out["cost_usd_vote"] = spent.calls, round(spent.cost_usd, 8)
    judges = [agent for agent in session.agents if agent.role == "judge"]
    if len(judges) > 1:
        out["predicted_judges"] = {j.name: outcome.per_agent.get(j.name, {}).get(criterion) for j in judges}
        if session.task.pairwise:
            said = outcome.agent_verdicts
            out["verdict_judges"] = {j.name: said.get(j.name, said.get(f"{j.name} ({criterion})")) for j in judges}
        out["jury"] = {j.name: j.model for j in judges}
    return out


def _vote_usage(session: Session, slots: set[int], criterion: str) -> Usage:
    """The usage of the vote's turns on this criterion (a turn tied to no criterion goes on the first, as in
    `rows.usage_by_criterion`)."""
    names = [c.name for c in session.criteria]
    spent = Usage()
    for turn in session.turns:
        if turn.slot in slots and (turn.criterion if turn.criterion in names else names[0]) == criterion:
            spent.add(turn.usage)
    return spent
