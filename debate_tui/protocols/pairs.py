"""Pairwise judging shared by ChatEval and the single judge: preferences, the vote, the position swap.

A judge of a pair gives each text a score ("Scores: 8 6", the FairEval form
ChatEval uses); its preference is the text it scored higher, "0" when equal.
The panel's verdict is a strict majority of the preferences that could be read;
a split panel is a tie ("0"), while a panel none of whose answers could be read
has no verdict at all (None): an unreadable answer is never a tie.

Position swap: LLM judges favour one position, so the pair can be judged again
with the texts exchanged. Both runs are kept; each judge's scores are averaged
over the two positions (FairEval's Balanced Position Calibration, which ChatEval
applies to every setting) before the vote, and whether the raw verdict flipped
with the order is recorded as the measure of position bias.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from debate_tui.domain import VERDICT_FLIP, Criterion, Outcome, SessionState, Task, Turn, Verdict, Vote
from debate_tui.protocols.common import score_form
from debate_tui.protocols.vote import vote_from

if TYPE_CHECKING:  # the report imports this module and must not pull in the engine
    from debate_tui.engine.runner import Context

FLIP = VERDICT_FLIP


def pair_keys(criterion: str) -> tuple[str, str]:
    """Outcome keys of the two texts' scores, e.g. "coherence_1" and "coherence_2"."""
    return f"{criterion}_1", f"{criterion}_2"


def answer_form(criterion: Criterion, pairwise: bool) -> str:
    """The closing instruction: one score, or the pair of scores the FairEval template asks for."""
    if not pairwise:
        return score_form(criterion)
    low, high = f"{criterion.low:g}", f"{criterion.high:g}"
    return f"End with a line 'Scores: A B', A for text 1 and B for text 2, each between {low} and {high}."


def mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values that exist; None when there are none (unscored, not zero)."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def unscored_note(turns: Iterable[Turn]) -> str:
    """Say how many answers could not be read and so were left out of a mean or a vote."""
    unscored = sum(1 for turn in turns if turn.score is None)
    return f" ({unscored} unscored, not counted)" if unscored else ""


def preference(score_1: float | None, score_2: float | None) -> Verdict | None:
    if score_1 is None or score_2 is None:
        return None
    return "1" if score_1 > score_2 else "2" if score_2 > score_1 else "0"


def majority(votes: Iterable[Verdict | None]) -> Verdict | None:
    """A strict majority of the readable votes; "0" when split; None when no vote could be read."""
    cast = [v for v in votes if v is not None]
    if not cast:
        return None
    top, count = Counter(cast).most_common(1)[0]
    return top if 2 * count > len(cast) else "0"


def swapped(task: Task) -> Task:
    """The same pair with text 1 and text 2 exchanged."""
    return task.model_copy(update={"text": task.text_b, "text_b": task.text})


def tally(outcome: Outcome, criteria: list[Criterion]) -> None:
    """Fill the mean scores, each judge's preference and the verdict from `outcome.per_agent`.

    With several criteria each gets its own vote, an agent's preference is keyed
    "agent (criterion)", and the verdict is the majority of the criteria's verdicts.
    """
    per_criterion: list[Verdict | None] = []
    for criterion in criteria:
        key_1, key_2 = pair_keys(criterion.name)
        for key in (key_1, key_2):
            outcome.scores[key] = mean(scores.get(key) for scores in outcome.per_agent.values())
        votes = {agent: preference(scores.get(key_1), scores.get(key_2)) for agent, scores in outcome.per_agent.items()}
        verdict = majority(votes.values())
        per_criterion.append(verdict)
        for agent, vote in votes.items():
            outcome.agent_verdicts[agent if len(criteria) == 1 else f"{agent} ({criterion.name})"] = vote
        unread = sum(1 for vote in votes.values() if vote is None)
        outcome.notes.append(
            f"{criterion.name}: preferences {describe_votes(votes.values())} -> verdict {verdict or 'none'}"
            + (f" ({unread} unscored, not counted)" if unread else "")
        )
    outcome.verdict = majority(per_criterion)


def describe_votes(votes: Iterable[Verdict | None]) -> str:
    counts = Counter(v for v in votes if v is not None)
    return ", ".join(f"{counts[v]}x {v}" for v in ("1", "2", "0") if counts[v]) or "none readable"


_OTHER_SIDE = {"1": "2", "2": "1"}


def _original_numbering(per_agent: dict[str, dict[str, float | None]]) -> dict[str, dict[str, float | None]]:
    """Scores from the swapped run with the "_1" and "_2" keys exchanged back."""
    def back(key: str) -> str:
        stem, sep, side = key.rpartition("_")
        return f"{stem}_{_OTHER_SIDE[side]}" if sep and side in _OTHER_SIDE else key

    return {agent: {back(key): value for key, value in scores.items()} for agent, scores in per_agent.items()}


def calibrate(original: Outcome, swapped_run: Outcome, criteria: list[Criterion], state: SessionState) -> Outcome:
    """Combine a run and its swapped twin: scores averaged over both positions, then the vote again."""
    mapped = _original_numbering(swapped_run.per_agent)
    combined = Outcome(per_agent={
        agent: {key: mean((value, mapped.get(agent, {}).get(key))) for key, value in scores.items()}
        for agent, scores in original.per_agent.items()
    })
    tally(combined, criteria)
    back = FLIP[swapped_run.verdict] if swapped_run.verdict is not None else None
    consistent = original.verdict == back if original.verdict is not None and back is not None else None
    state["swap"] = {
        "verdict": original.verdict,
        "swapped_verdict_original_numbering": back,
        "consistent": consistent,
        "calibrated_verdict": combined.verdict,
        "swapped_scores_original_numbering": mapped,
    }
    flip = {True: "the same verdict in both orders", False: "the verdict flipped with the order (position bias)",
            None: "no comparison: a verdict is missing"}[consistent]
    combined.notes = [
        *(f"original order: {note}" for note in original.notes),
        *(f"swapped order (numbered as the judges saw it): {note}" for note in swapped_run.notes),
        f"position swap: original verdict {original.verdict or 'none'}, swapped verdict "
        f"{back or 'none'} in the original numbering: {flip}",
        f"final: each judge's scores averaged over both positions, then voted -> {combined.verdict or 'none'}",
    ]
    return combined


Judge = Callable[[Task, int], Awaitable[Outcome]]
"""Judges every criterion on a task, numbering its rounds from the given one."""


async def in_both_orders(ctx: Context, judge: Judge, *, swap: bool, rounds: int) -> Outcome:
    """Judge the task; with `swap`, judge the exchanged pair too (rounds numbered on) and `calibrate`."""
    outcome = await judge(ctx.task, 1)
    if swap and not ctx.task.pairwise:
        ctx.notice("--swap applies to a pairwise comparison only; ignored")
    elif swap:
        ctx.notice(f"judging again with text 1 and text 2 exchanged (rounds {rounds + 1}-{2 * rounds})")
        twin = await judge(swapped(ctx.task), rounds + 1)
        combined = calibrate(outcome, twin, ctx.criteria, ctx.session.state)
        combined.vote = _calibrated_vote(outcome.vote, twin.vote, ctx.criteria)
        outcome = combined
    return outcome


def _calibrated_vote(original: Vote | None, twin: Vote | None, criteria: list[Criterion]) -> Vote | None:
    """The vote before discussion of both orders, calibrated as the final is (its notes are not kept)."""
    if original is None or twin is None:
        return None
    combined = calibrate(Outcome(per_agent=original.per_agent, verdict=original.verdict),
                         Outcome(per_agent=twin.per_agent, verdict=twin.verdict), criteria, {})
    return vote_from(combined, f"{original.method}; each agent's scores averaged over both text orders",
                     [*original.slots, *twin.slots])
