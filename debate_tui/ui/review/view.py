"""What the review screen shows about one item, as plain strings: testable without a screen.

Verdicts are shown in the original numbering (1 = the first text, 2 = the
second), the numbering a decision is given in. ScaleEval shows its speakers
the pair in a drawn order (`Session.order`); their turn verdicts are turned
back (`Session.original_verdict`), so "Speaker 2: 1" always means the first text.
"""

from __future__ import annotations

from debate_tui.domain import HumanAction, Session, Turn, agrees
from debate_tui.meta.concordance import Pair, concordance
from debate_tui.meta.review import ReviewItem

REASON_CHARS = 600
VERDICT_WORDS = {"1": "Submission 1 is better", "2": "Submission 2 is better", "0": "a tie"}


def answer(session: Session, turn: Turn) -> str:
    """A turn's position in a few words."""
    if turn.verdict is not None:
        return f"verdict {session.original_verdict(turn.verdict)}"
    if turn.score is not None:
        return f"score {turn.score:g}" + (f" / {turn.score_b:g}" if turn.score_b is not None else "")
    if turn.no_issue is not None:
        return "NO ISSUE" if turn.no_issue else "objects"
    return "unscored" if turn.unscored else "no answer read"


def numbering_note(session: Session) -> str:
    """Said beside the positions when the agents saw the pair in the other order."""
    if not session.swapped:
        return ""
    return "verdicts in the original numbering; the speakers saw the second text as Submission 1"


def final_positions(session: Session) -> str:
    """Each agent's last word, in the session's agent order: its position, then the start of its reasoning."""
    last: dict[str, Turn] = {}
    for turn in session.turns:
        if turn.error is None:
            last[turn.agent] = turn
    lines = []
    for name, turn in sorted(last.items(), key=lambda pair: _agent_rank(session, pair[0])):
        reason = " ".join(turn.content.split())
        if len(reason) > REASON_CHARS:
            reason = reason[: REASON_CHARS - 1] + "…"
        lines.append(f"{name} ({turn.role.replace('_', ' ')}, round {turn.round}): {answer(session, turn)}\n  {reason}")
    return "\n\n".join(lines) or "(no turns recorded)"


def _agent_rank(session: Session, name: str) -> int:
    names = [a.name for a in session.agents]
    return names.index(name) if name in names else len(names)


def transcript(session: Session) -> str:
    """Every turn in order, failed attempts included, as the debate happened."""
    parts = []
    for turn in session.turns:
        about = f", {turn.criterion}" if turn.criterion else ""
        who = f"{turn.agent} ({turn.role.replace('_', ' ')})"
        head = f"--- {who}, round {turn.round}{about}: {answer(session, turn)} ---"
        body = f"[failed: {turn.error}] {turn.content}" if turn.error else turn.content
        parts.append(f"{head}\n{body}")
    for action in session.actions:
        parts.append(f"--- {action.who}, {action.kind} {action.value if action.value is not None else ''} "
                     f"after turn {action.after_turn}, {action.at:%Y-%m-%d %H:%M} ---\n{action.text}")
    return "\n\n".join(parts) or "(no turns recorded)"


def option_label(value: str, pairwise: bool) -> str:
    return f"{value}: {VERDICT_WORDS[value]}" if pairwise and value in VERDICT_WORDS else value


def heading(item: ReviewItem, left: int, total: int) -> str:
    row = item.rows[0] if item.rows else {}
    group = f" · group {row['group']}" if row.get("group") is not None else ""
    criteria = ", ".join(str(r.get("criterion")) for r in item.rows)
    if item.blind:  # nothing of the judge's, not even whether a tier trusted the line
        return f"Blind audit · {left} of {total} left · item {item.id}{group} · {criteria}"
    queue = "Override queue" if item.criterion is not None and not item.ladder else "Review queue"
    return f"{queue} · {left} of {total} left · item {item.id}{group} · {criteria} · {item.status.replace('_', ' ')}"


def shown(answer: float | str | None) -> str:
    if answer is None:
        return "no answer"
    return answer if isinstance(answer, str) else f"{float(answer):g}"


def judge_said(action: HumanAction) -> str:
    """What the judge had answered, as a blind audit reveals it once the person has answered."""
    sure = "" if action.judge_confidence is None else f", confidence {action.judge_confidence:.2f}"
    verdict = "agree" if agrees(action.judge_answer, _as_answer(action)) else "disagree"
    return f"the judge had answered {shown(action.judge_answer)}{sure}: you {verdict}"


def _as_answer(action: HumanAction) -> float | str | None:
    value = action.value
    if isinstance(value, str) and isinstance(action.judge_answer, int | float):
        return float(value)
    return value


def decided(action: HumanAction) -> str:
    said = f"; {judge_said(action)}" if action.kind == "audit" else ""
    blind = " blind" if action.blind else ""
    return (f"Decided{blind} {shown(action.value)} by {action.who} at {action.at:%Y-%m-%d %H:%M:%S} "
            f"(after turn {action.after_turn}){said}. Press an answer key to change it.")


def revealed(item: ReviewItem) -> str:
    """Said once a blind answer is recorded: the judge's answer, now that it can no longer sway the person."""
    action = item.decision
    if action is None:
        return ""
    return f"Item {item.id}, {item.criterion}: you answered {shown(action.value)}; {judge_said(action)}."


def agreement(all_pairs: list[Pair], blind_pairs: list[Pair]) -> str:
    """The judge against the person so far: every decision, then the blind ones, then the blind confusion (or
    every decision's, when none was blind)."""
    def part(name: str, pairs: list[Pair]) -> str:
        c = concordance(pairs)
        if not c.n:
            return f"{name} 0"
        kappa = "n/a" if c.kappa is None else f"{c.kappa:.2f}"  # n/a: both sides gave one same answer throughout
        return f"{name} {c.n}: agree {100 * (c.agreement or 0):.0f}%, κ {kappa}"

    confused = concordance(blind_pairs or all_pairs).confusion
    cells = " · ".join(f"{judge}→{person} ×{count}" for (judge, person), count in sorted(confused.items()))
    table = f"judge→person ({'blind' if blind_pairs else 'all'}): {cells or '-'}"
    return f"Judge vs person · {part('all', all_pairs)} · {part('blind', blind_pairs)}\n{table}"
