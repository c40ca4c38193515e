"""What the judge had answered when a person gave their answer: kept in the action, so every decision is a label
that can be set against the judge (`debate-tui labels`, `audit`, the review screen's agreement panel)."""

from __future__ import annotations

from debate_tui.domain import LABEL_KINDS, HumanAction, Session


def judge_answer(session: Session, criterion: str | None) -> tuple[float | str | None, float | None]:
    """The session's answer on `criterion` and its confidence: the outcome's when there is one, else the last
    answer a judge gave in the debate so far (a tie's Scorer, a stalemate's last speaker), with no confidence."""
    pairwise = session.task.pairwise
    outcome = session.outcome
    if outcome is not None and criterion is not None:
        answer = outcome.verdict if pairwise else outcome.scores.get(criterion)
        if answer is not None:
            return answer, outcome.confidence.get(criterion)
    for turn in reversed(session.turns):
        if turn.error is not None or turn.role == "human" or turn.criterion not in (criterion, None):
            continue
        if pairwise and turn.verdict is not None:
            return session.original_verdict(turn.verdict), None
        if not pairwise and turn.score is not None:
            return turn.score, None
    return None, None


def stamp(action: HumanAction, session: Session) -> HumanAction:
    """Fill in what the judge had said, for an action that gives an answer and does not say it already. After
    an earlier answer of a person's on the same criterion the outcome is that person's: the judge's answer is
    the one that earlier answer recorded."""
    if action.kind not in LABEL_KINDS or action.judge_answer is not None:
        return action
    earlier = next((a for a in session.actions if a is not action and a.kind in LABEL_KINDS
                    and a.criterion == action.criterion and a.judge_answer is not None), None)
    if earlier is not None:
        answer, confidence = earlier.judge_answer, earlier.judge_confidence
    else:
        answer, confidence = judge_answer(session, action.criterion)
    action.judge_answer = answer
    action.judge_confidence = action.judge_confidence if action.judge_confidence is not None else confidence
    return action
