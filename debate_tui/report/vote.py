"""The report's lines on the vote before discussion and on a jury: what the debate changed, at what price, and
how far a jury's judges agree with each other."""

from __future__ import annotations

from debate_tui.domain import Session, Usage, Vote
from debate_tui.protocols.common import counted
from debate_tui.report.facts import UNSCORED
from debate_tui.report.facts import fmt_score as _score


def vote_usage(session: Session, vote: Vote) -> Usage:
    """What the vote's turns cost: the first round's calls and tokens."""
    spent = Usage()
    slots = set(vote.slots)
    for turn in session.turns:
        if turn.slot in slots:
            spent.add(turn.usage)
    return spent


def vote_lines(session: Session) -> list[str]:
    """One line: the vote's scores or verdict beside the final ones, its method, and its calls and cost."""
    summary = vote_summary(session)
    return [f"**Vote before discussion:** {summary}", ""] if summary else []


def vote_summary(session: Session) -> str | None:
    """The vote's scores or verdict beside the final ones, its method, and its calls and cost; None without one."""
    outcome = session.outcome
    if outcome is None or outcome.vote is None:
        return None
    vote = outcome.vote
    parts = []
    if outcome.verdict is not None or vote.verdict is not None:
        parts.append(f"verdict {vote.verdict or 'none'} (final {outcome.verdict or 'none'})")
    if not session.task.pairwise:
        parts += [f"{name} {_score(value)} (final {_score(outcome.scores.get(name))})"
                  for name, value in vote.scores.items()]
    spent, total = vote_usage(session, vote), session.usage
    cost = f"{counted(spent.calls, 'call')} of {total.calls}"
    if total.cost_usd:  # no price known (a local model, the demo): no "$0.0000 of $0.0000"
        cost += f", ${spent.cost_usd:.4f} of ${total.cost_usd:.4f}"
    return f"{'; '.join(parts) or 'none'}: {vote.method}; {cost}."


def jury_lines(session: Session) -> list[str]:
    """For a jury: each criterion's judges' scores (or preferences) and how far apart they are."""
    summary = jury_summary(session)
    return [f"**Jury:** {summary}", ""] if summary else []


def jury_summary(session: Session) -> str | None:
    """The jury's judges and their agreement per criterion; None without a jury."""
    judges = [a for a in session.agents if a.role == "judge"]
    outcome = session.outcome
    if len(judges) < 2 or outcome is None:
        return None
    parts = []
    if outcome.agent_verdicts:
        verdicts = [outcome.agent_verdicts.get(j.name) for j in judges]
        cast = [v for v in verdicts if v is not None]
        top = max((cast.count(v) for v in set(cast)), default=0)
        parts.append(f"preferences {', '.join(v or UNSCORED for v in verdicts)} ({top} of {len(judges)} agree)")
    else:
        for criterion in session.criteria:
            values = [outcome.per_agent.get(j.name, {}).get(criterion.name) for j in judges]
            read = [v for v in values if v is not None]
            spread = "all agree" if read and max(read) == min(read) else \
                f"spread {max(read) - min(read):g}" if read else "none readable"
            parts.append(f"{criterion.name} {', '.join(map(_score, values))} ({spread})")
    models = ", ".join(f"{j.name}: {j.model}" for j in judges)
    return f"{counted(len(judges), 'judge')} ({models}); inter-judge agreement: {'; '.join(parts)}."
