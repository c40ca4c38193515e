"""The vote before discussion: what a protocol's agents answered in their first round, kept beside the final.

Recent work finds that a plain vote of the agents' first answers explains most of
what multi-agent debate gains; recording that vote in every session lets `meta`
show, per protocol and model, whether the discussion added anything and at what
price. Each protocol decides what its first vote is and says so in its module
docstring; this module only builds the record and finds the turns it cost.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from debate_tui.domain import Criterion, Outcome, Turn, Vote

if TYPE_CHECKING:
    from debate_tui.engine.runner import Context


def first_round_slots(ctx: Context, agents: Collection[str], round: int) -> list[int]:
    """The slots of every turn `agents` took in `round`, re-asks included: the vote's calls and cost."""
    return [turn.slot for turn in ctx.session.turns if turn.agent in agents and turn.round == round]


def first_answers(ctx: Context, agents: Collection[str], round: int, criterion: Criterion) -> dict[str, Turn]:
    """Each agent's answer on `criterion` in `round`: its last turn there (a re-ask replaces the unreadable one)."""
    return {turn.agent: turn for turn in ctx.session.turns
            if turn.agent in agents and turn.round == round and turn.criterion == criterion.name}


def vote_from(counted: Outcome, method: str, slots: Collection[int]) -> Vote:
    """The vote as recorded: `counted` holds the first answers aggregated by the protocol's own rule."""
    return Vote(scores=dict(counted.scores), verdict=counted.verdict, per_agent=dict(counted.per_agent),
                agent_verdicts=dict(counted.agent_verdicts), method=method, slots=sorted(set(slots)))
