"""Confidence: how far a judge's own evidence agrees with its answer, one rule per protocol.

Trust or Escalate (Jung, Brahman, Choi, ICLR 2025) needs a number per answer that
rises when the answer is more likely to agree with people; calibration (`meta.trust`)
then makes any such monotone number honest, so it need not be a probability. Each
protocol's spec names its rule (`ProtocolSpec.confidence`), computed from the
session's turns and outcome only, so it is reproducible from the session file:

- single judge: with log-probabilities, the mean probability mass its samples'
  score tokens put within the tolerance of their own score; else the share of its
  samples (unreadable ones included, as disagreeing) that agree with the answer;
  a jury: the share of its judges that agree with the jury's answer.
- a discussion (ChatEval, ScaleEval): the mean of two shares, the agents that agree
  with the final answer at the end, and those that already did in the vote before
  discussion; a panel that had to be moved to its answer is less sure of it.
- DEBATE: the mean of "the Critic accepted the last score" and "the Scorer's first
  score agrees with the final one".
- MATEval: the share of the evaluators whose first statement on the error type
  agrees with the Summarizer's count (no statement vote: no confidence).

"Agree" is `domain.agrees`: the same verdict for a pair; within AGREE_TOLERANCE for a score.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from debate_tui.domain import AGREE_TOLERANCE, VERDICT_FLIP, Outcome, Session, Turn, Verdict, agrees

Rule = Callable[[Session, Outcome, str], float | None]
Basis = Callable[[Session, Outcome, str], str | None]


@dataclass(frozen=True)
class Confidence:
    """A protocol's confidence: the rule in a sentence (docs/TRUST.md quotes it) and the function."""

    rule: str
    of: Rule
    basis: Basis | None = None
    """The rule applied to one answer, in words ("0 of 3 samples within 0.5 of the answer 2.33, their mean"),
    where that says more than the rule; else the rule is shown."""

    def stated(self, session: Session, outcome: Outcome, criterion: str) -> str:
        """What a confidence shown anywhere says it measured."""
        said = self.basis(session, outcome, criterion) if self.basis is not None else None
        return said or self.rule


def answer(session: Session, outcome: Outcome, criterion: str) -> float | str | None:
    """The answer a line carries: the verdict of a pair, else the criterion's score."""
    return outcome.verdict if session.task.pairwise else outcome.scores.get(criterion)


def share(answers: Iterable[float | str | None], final: float | str | None) -> float | None:
    """The share of `answers` that agree with `final` (a missing answer disagrees); None without any."""
    said = list(answers)
    if final is None or not said:
        return None
    return sum(agrees(a, final) for a in said) / len(said)


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _verdicts(verdicts: dict[str, Verdict | None], criterion: str, criteria: int) -> list[Verdict | None]:
    """The agents' verdicts on this criterion (keyed "agent (criterion)" when a session has several)."""
    if criteria == 1:
        return list(verdicts.values())
    return [v for key, v in verdicts.items() if key.endswith(f" ({criterion})")]


def _agents_said(session: Session, per_agent: dict[str, dict[str, float | None]],
                 verdicts: dict[str, Verdict | None], criterion: str) -> list[float | str | None]:
    if session.task.pairwise:
        return list(_verdicts(verdicts, criterion, len(session.criteria)))
    return [scores.get(criterion) for scores in per_agent.values() if criterion in scores]


def _sample_answer(session: Session, turn: Turn, exchanged: bool) -> float | str | None:
    """One sample's answer: its score, or for a pair its preference in the original numbering (a sample of
    `--swap`'s second pass, numbered after the first `samples` rounds, saw the texts exchanged)."""
    if not session.task.pairwise:
        return turn.score
    if turn.score is None or turn.score_b is None:
        return None
    said: Verdict = "0" if turn.score == turn.score_b else ("1" if turn.score > turn.score_b else "2")
    return VERDICT_FLIP[said] if exchanged else said


def _jury(session: Session) -> bool:
    return sum(1 for a in session.agents if a.role == "judge") > 1


def _samples(session: Session, criterion: str) -> list[Turn]:
    return list({(t.agent, t.round): t for t in session.turns  # a re-ask replaces the unreadable sample
                 if t.criterion == criterion and t.role == "judge"}.values())


def _masses(session: Session, samples: list[Turn]) -> list[float]:
    return [] if session.task.pairwise else [t.score_mass for t in samples if t.score_mass is not None]


def _sample_answers(session: Session, samples: list[Turn]) -> list[float | str | None]:
    rounds = int(session.options.get("samples", 1))
    return [_sample_answer(session, t, exchanged=t.round > rounds) for t in samples]


def single(session: Session, outcome: Outcome, criterion: str) -> float | None:
    final = answer(session, outcome, criterion)
    if final is None:
        return None
    if _jury(session):
        return share(_agents_said(session, outcome.per_agent, outcome.agent_verdicts, criterion), final)
    samples = _samples(session, criterion)
    if masses := _masses(session, samples):
        return sum(masses) / len(masses)
    return share(_sample_answers(session, samples), final)


def _single_basis(session: Session, outcome: Outcome, criterion: str) -> str | None:
    """The single judge's rule applied, in words: which samples (or judges) agree with which answer.

    The answer of several samples is their mean, so samples 1, 5, 1 (mean 2.33) give 0.0: none is within the
    tolerance of the answer that would be trusted. That is the point: the confidence is in the answer sent on,
    not in the samples' favourite (the mode, 1, is not the answer)."""
    final = answer(session, outcome, criterion)
    if final is None:
        return None
    shown = final if isinstance(final, str) else f"{final:.3g}"
    near = "" if session.task.pairwise else f" within {AGREE_TOLERANCE:g}"
    if _jury(session):
        said = _agents_said(session, outcome.per_agent, outcome.agent_verdicts, criterion)
        return f"{sum(agrees(a, final) for a in said)} of {len(said)} judges{near} of the jury's answer {shown}"
    samples = _samples(session, criterion)
    if _masses(session, samples):
        return f"the mean probability its samples' score tokens put{near} of their own score"
    said = _sample_answers(session, samples)
    mean = "" if session.task.pairwise or len(said) < 2 else ", their mean"
    return f"{sum(agrees(a, final) for a in said)} of {len(said)} samples{near} of the answer {shown}{mean}"


def discussion(session: Session, outcome: Outcome, criterion: str) -> float | None:
    final = answer(session, outcome, criterion)
    end = share(_agents_said(session, outcome.per_agent, outcome.agent_verdicts, criterion), final)
    vote = outcome.vote
    first = (share(_agents_said(session, vote.per_agent, vote.agent_verdicts, criterion), final)
             if vote is not None else None)
    return _mean([end, first]) if end is not None else None


def debate(session: Session, outcome: Outcome, criterion: str) -> float | None:
    final = outcome.scores.get(criterion)
    if final is None:
        return None
    critic = [t for t in session.turns if t.criterion == criterion and t.role == "critic" and t.error is None]
    accepted = 1.0 if critic and critic[-1].no_issue else 0.0
    first = outcome.vote.scores.get(criterion) if outcome.vote is not None else None
    return (accepted + agrees(first, final)) / 2


def mateval(session: Session, outcome: Outcome, criterion: str) -> float | None:
    final = outcome.scores.get(criterion)
    if outcome.vote is None:
        return None
    return share(_agents_said(session, outcome.vote.per_agent, {}, criterion), final)


def of_outcome(rule: Confidence, session: Session, outcome: Outcome) -> dict[str, float | None]:
    """Every criterion's confidence, clipped to [0, 1]."""
    out: dict[str, float | None] = {}
    for criterion in session.criteria:
        value = rule.of(session, outcome, criterion.name)
        out[criterion.name] = None if value is None else min(1.0, max(0.0, value))
    return out


SINGLE = Confidence("with log-probabilities, the mean probability mass the score token puts within the tolerance "
                    "of the sample's own score; else the share of the samples (unreadable ones as disagreeing) "
                    "that agree with the answer (their mean: samples 1, 5, 1 give 0); a jury: the share of its "
                    "judges that agree with its answer", single, _single_basis)
DISCUSSION = Confidence("the mean of the share of agents that agree with the final answer at the end and the share "
                        "that already did in the vote before discussion", discussion)
DEBATE = Confidence("the mean of two facts: the Critic accepted the last score (NO ISSUE), and the Scorer's first "
                    "score agrees with the final one (the debate did not move it)", debate)
MATEVAL = Confidence("the share of the evaluators whose first statement on the error type agrees with the "
                     "Summarizer's count; none without a statement vote (the strategies that do not decompose)",
                     mateval)
