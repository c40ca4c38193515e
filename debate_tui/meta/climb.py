"""One text up a trust ladder (`run --policy`, the TUI's `--policy`): each tier a session, then maybe a person.

Tier 1 judges; while a tier is not sure (its least sure criterion's confidence
below its threshold), the next tier judges the same text in a session of its
own. The last session run keeps the ladder in its state (`LADDER_KEY`): every
rung (answer, confidence, threshold, calls, tokens, cost), the guarantee the
policy gives, the ladder's totals over all tiers, and who decided.

When no tier trusts its answer, nobody has decided: the last session then
*waits* (status `needs_human`, `pending_question` set) and has no result. Its
own tier's answer is not the result: only the rungs keep it. A person decides
later (`decide`: the TUI's dialog, its sessions screen, `resume --decide`), and
only then does the session complete, with the person's answer as its result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, cast

from debate_tui.domain import HumanAction, Outcome, Session, Task, Verdict, new_session_id
from debate_tui.engine.judged import stamp

if TYPE_CHECKING:  # the debate screen reads `waiting` here: it must not pay for the batch's readers (0.4 s)
    from debate_tui.meta.ladder import Tier

LADDER_KEY: Final = "ladder"
"""Where a one-text ladder keeps its rungs in the last session's state."""
WAITING = "needs_human"
"""The ladder's status while no tier trusted its answer and no person decided (escalate's word for it)."""
DECIDED_BY = "no tier of the trust ladder trusted its answer"


def tier_session(tier: Tier, task: Task) -> Session:
    """A fresh session of the tier's recorded task on this text."""
    template = tier.template
    return Session(protocol=template.protocol, options=dict(template.options),
                   criteria=[c.model_copy(deep=True) for c in template.criteria],
                   agents=[a.model_copy(deep=True) for a in template.agents], task=task, id=new_session_id(),
                   spec=template.spec, seal=template.seal)


def lowest_confidence(session: Session) -> float | None:
    """The least sure criterion's confidence; None when any is unscored or the run did not complete."""
    if session.status != "completed" or session.outcome is None:
        return None
    values = [session.outcome.confidence.get(c.name) for c in session.criteria]
    return None if any(v is None for v in values) else min(v for v in values if v is not None)


def rung(tier: Tier, session: Session, confidence: float | None, trusted: bool) -> dict[str, Any]:
    outcome, usage = session.outcome, session.usage
    return {"tier": tier.number, "protocol": tier.protocol, "label": tier.label, "session": session.id,
            "status": session.status, "scores": dict(outcome.scores) if outcome else {},
            "verdict": outcome.verdict if outcome else None, "confidence": confidence, "threshold": tier.threshold,
            "trusted": trusted, "calls": usage.calls, "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens, "cost_usd": round(usage.cost_usd, 8)}


def step_message(tier: Tier, confidence: float | None, trusted: bool, later: Tier | None, status: str) -> str:
    """The line after a tier: trusted (with its guarantee), or "tier 1 (single, conf 0.40 < 0.72): not sure,
    escalating to tier 2 (debate)"."""
    if trusted:
        return f"trusted: {tier.guarantee}"
    if status != "completed":
        return f"tier {tier.number} ({tier.label}) ended {status}"
    shown = "no confidence" if confidence is None else f"conf {confidence:.2f}"
    threshold = "-" if tier.threshold is None else f"{tier.threshold:.2f}"
    then = f"escalating to tier {later.number} ({later.label})" if later else "no tier left: a person decides"
    return f"tier {tier.number} ({tier.label}, {shown} < {threshold}): not sure, {then}"


def totals(rungs: list[dict[str, Any]]) -> dict[str, Any]:
    """The ladder's cost over every tier that ran (the last session's own usage is its tier's alone)."""
    return {"tiers": len(rungs), "calls": sum(r.get("calls") or 0 for r in rungs),
            "prompt_tokens": sum(r.get("prompt_tokens") or 0 for r in rungs),
            "completion_tokens": sum(r.get("completion_tokens") or 0 for r in rungs),
            "cost_usd": round(sum(r.get("cost_usd") or 0 for r in rungs), 8)}


def guarantee(tiers: list[Tier]) -> dict[str, Any]:
    """What the policy promises, as the report states it: alpha, delta, the calibration items, each threshold."""
    first = tiers[0]
    return {"alpha": first.alpha, "delta": first.delta, "calibrated_on": first.calibrated_on,
            "thresholds": [{"tier": t.number, "label": t.label, "threshold": t.threshold, "reached": t.reached}
                           for t in tiers]}


def said(rungs: list[dict[str, Any]]) -> str:
    """Every tier's answer and confidence, on one line: what a person deciding must see."""
    def one(r: dict[str, Any]) -> str:
        answer = r.get("verdict") or ", ".join(f"{k} {v:g}" for k, v in (r.get("scores") or {}).items()
                                               if v is not None)
        sure = "no confidence" if r.get("confidence") is None else f"confidence {r['confidence']:.2f}"
        return f"tier {r['tier']} {r.get('label') or r['protocol']}: {answer or 'none'} ({sure})"

    return "; ".join(one(r) for r in rungs)


def record_ladder(session: Session, rungs: list[dict[str, Any]], policy: str, tiers: list[Tier]) -> str | None:
    """Put the ladder into the last session's state; returns the trusted tier, or None.

    None: no tier trusted its answer (and the last one completed), so the session waits for a person: status
    needs_human, no result, the question pending. A run that failed or was stopped keeps its own status."""
    decided = next((f"tier {r['tier']} ({r.get('label') or r['protocol']})" for r in rungs if r["trusted"]), None)
    waiting = decided is None and session.status == "completed"
    session.state[LADDER_KEY] = {"rungs": rungs, "decided_by": decided, "policy": policy,
                                 "status": WAITING if waiting else session.status, "guarantee": guarantee(tiers),
                                 "totals": totals(rungs)}
    if waiting:
        session.status, session.outcome = "needs_human", None
        session.pending_question = f"No tier trusted its answer ({said(rungs)}). Decide {question_of(session)}."
    return decided


def question_of(session: Session) -> str:
    if session.task.pairwise:
        return "the verdict (1: text 1 is better, 2: text 2 is better, 0: a tie)"
    return ", ".join(f"the {c.name} score ({c.scale})" for c in session.criteria)


def ladder_of(session: Session) -> dict[str, Any] | None:
    recorded = session.state.get(LADDER_KEY)
    return recorded if isinstance(recorded, dict) else None


def waiting(session: Session) -> bool:
    """A ladder no tier trusted and no person decided. Sessions saved before this was kept (status completed,
    "a person (no tier trusted itself)" named without a person's action) wait too: nobody had decided them."""
    recorded = ladder_of(session)
    if recorded is None:
        return False
    if recorded.get("status") == WAITING:
        return session.status == "needs_human"
    return (recorded.get("decided_by") == "a person (no tier trusted itself)" and session.status == "completed"
            and not any(r.get("trusted") for r in recorded.get("rungs") or []))


class DecisionError(ValueError):
    """A person's answer that does not fit the question; the message is the one line shown."""


def parse_decision(session: Session, given: str) -> dict[str, float | str]:
    """`--decide`'s value: one answer (a verdict for a pair, a score for one criterion), or NAME=SCORE,... for
    several criteria; DecisionError when it does not fit."""
    if session.task.pairwise:
        if given.strip() not in ("1", "2", "0"):
            raise DecisionError(f"{given!r}: the verdict is 1 (text 1 better), 2 (text 2 better) or 0 (a tie)")
        return {session.criteria[0].name: given.strip()}
    names = [c.name for c in session.criteria]
    if "=" not in given:
        if len(names) > 1:
            raise DecisionError(f"{given!r}: this session judges {', '.join(names)}; give NAME=SCORE for each, "
                                "comma-separated")
        pairs = {names[0]: given}
    else:
        pairs = dict(part.partition("=")[::2] for part in given.split(","))
        pairs = {k.strip(): v.strip() for k, v in pairs.items()}
    if set(pairs) != set(names):
        raise DecisionError(f"{given!r}: expected a score for each of {', '.join(names)}")
    out: dict[str, float | str] = {}
    for criterion in session.criteria:
        try:
            value = float(pairs[criterion.name])
        except ValueError:
            raise DecisionError(f"{pairs[criterion.name]!r} is not a score on {criterion.name}'s scale "
                                f"{criterion.scale}") from None
        if not criterion.low <= value <= criterion.high:
            raise DecisionError(f"{value:g} is outside {criterion.name}'s scale {criterion.scale}")
        out[criterion.name] = value
    return out


def decide(session: Session, answers: dict[str, float | str], who: str, where: str) -> str:
    """A person's answer to a waiting ladder: recorded as a decision per criterion (who, when, where, what the
    tiers had said), and the session's result, marked as theirs. Returns who decided."""
    recorded = ladder_of(session)
    assert recorded is not None and waiting(session)
    done = sum(1 for t in session.turns if t.error is None)
    rungs = recorded.get("rungs") or []
    note = f"trust ladder ({where}): {DECIDED_BY}; {said(rungs)}"
    last = rungs[-1] if rungs else {}
    for criterion, value in answers.items():
        judge = last.get("verdict") if session.task.pairwise else (last.get("scores") or {}).get(criterion)
        action = HumanAction(kind="decide", after_turn=done, who=who, criterion=criterion, value=value, text=note,
                             where=where, source="decision", judge_answer=judge,
                             judge_confidence=last.get("confidence") if judge is not None else None)
        session.actions.append(stamp(action, session))  # a label against the last tier's answer and confidence
    method = f"decided by {who}: {DECIDED_BY}"
    if session.task.pairwise:
        verdict = cast(Verdict, str(next(iter(answers.values()))))  # parse_decision and the dialog: 1, 2 or 0
        outcome = Outcome(verdict=verdict, method=method, confidence=dict.fromkeys(answers))
    else:
        outcome = Outcome(scores={c.name: float(answers[c.name]) for c in session.criteria}, method=method,
                          confidence={c.name: None for c in session.criteria})
    outcome.notes.append(f"{method} ({said(recorded.get('rungs') or [])})")
    session.outcome, session.status, session.pending_question = outcome, "completed", None
    person = f"a person ({who})"
    recorded |= {"decided_by": person, "status": "decided"}
    return person
