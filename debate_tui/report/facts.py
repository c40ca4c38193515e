"""What a report says, as plain values: the Markdown and the HTML renderer format the same facts.

Every string here may hold text from a model or a user: each renderer makes it inert its own way
(a Markdown table cell, an escaped HTML cell).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from debate_tui.domain import ErrorSpan, HumanAction, PairOrder, Session, Turn, task_injection_signs
from debate_tui.pasted import injection_note
from debate_tui.people import current_user
from debate_tui.protocols import PROTOCOLS, get_protocol
from debate_tui.protocols.common import counted
from debate_tui.protocols.mateval import REFLECTING
from debate_tui.protocols.pairs import pair_keys
from debate_tui.report.errors_text import counts_unlocated, line_col
from debate_tui.report.quotes import QUOTE_TYPE

UNSCORED = "unscored"
VERDICT_KEY = "1 = text 1 better, 2 = text 2 better, 0 = tie"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def fmt_score(value: float | None) -> str:
    return UNSCORED if value is None else f"{value:g}"


@dataclass(frozen=True)
class Table:
    head: list[str]
    rows: list[list[str]]


def _answer(turn: Turn, order: PairOrder) -> str:
    """What one turn answered, verdicts in the original numbering."""
    if turn.verdict is not None:
        return order.original(turn.verdict) or ""
    if turn.score is not None:
        return fmt_score(turn.score) + (f" / {fmt_score(turn.score_b)}" if turn.score_b is not None else "")
    return "unreadable" if turn.unscored else ""


def confidence_lines(session: Session) -> list[str]:
    """Each criterion's confidence with what it measured ("coherence 0.00: 0 of 3 samples within 0.5 of the
    answer 2.33, their mean"); none for an answer a person gave, or a protocol this version does not know."""
    outcome = session.outcome
    if outcome is None or session.protocol not in PROTOCOLS:
        return []
    rule = get_protocol(session.protocol).confidence
    return [f"{name} {value:.2f}: {rule.stated(session, outcome, name)}"
            for name, value in outcome.confidence.items() if value is not None]


def no_result(session: Session) -> str:
    """Why there is no result yet, in one sentence."""
    ladder = isinstance(session.state.get("ladder"), dict)
    waiting = ("a person's decision" + (" (no tier of the trust ladder trusted its answer)" if ladder else "")
               if session.status == "needs_human" else None)
    status = (f"No result yet: the run waits for {waiting}." if waiting
              else f"No result: {ENDED.get(session.status, f'the run is {session.status}')}.")
    return status + (f" ({session.error})" if session.error else "")


ENDED = {"failed": "the run failed",
         "cancelled": "the run was stopped before its end (resumable: debate-tui resume, or u on the sessions list)",
         "pending": "the run has not started", "running": "the run has not finished"}
"""How a run without a result ended, as a sentence ("the run is failed" read as a machine's)."""


def answers_so_far(session: Session) -> Table | None:
    """Without a result, what each agent answered in each round (its last turn there)."""
    order = session.order
    answers: dict[tuple[int, str | None], dict[str, str]] = {}
    for turn in session.turns:
        answer = _answer(turn, order) if turn.error is None else ""
        if answer:
            answers.setdefault((turn.round, turn.criterion), {})[turn.agent] = answer
    if not answers:
        return None
    agents = [a.name for a in session.agents if any(a.name in row for row in answers.values())]
    several = len({criterion for _, criterion in answers}) > 1
    head = ["Round", *(["Criterion"] if several else []), *agents]
    rows = [[str(round), *([criterion or ""] if several else []), *(row.get(a, "") for a in agents)]
            for (round, criterion), row in answers.items()]
    return Table(head, rows)


def has_verdicts(session: Session) -> bool:
    return any(t.verdict is not None for t in session.turns)


def score_table(session: Session) -> Table | None:
    """Criterion, scale and final score."""
    outcome = session.outcome
    if outcome is None or not outcome.scores:
        return None
    scales = {c.name: c.scale for c in session.criteria}
    scales.update({key: c.scale for c in session.criteria for key in pair_keys(c.name)})  # a pair's two scores
    return Table(["Criterion", "Scale", "Score"],
                 [[name, scales.get(name, ""), fmt_score(value)] for name, value in outcome.scores.items()])


def per_agent_table(session: Session) -> Table | None:
    outcome = session.outcome
    if outcome is None or not outcome.per_agent:
        return None
    names = list(outcome.scores) or sorted({k for v in outcome.per_agent.values() for k in v})
    return Table(["Agent", *names],
                 [[agent, *(fmt_score(scores.get(n)) for n in names)] for agent, scores in outcome.per_agent.items()])


def agent_verdict_table(session: Session) -> Table | None:
    outcome = session.outcome
    if outcome is None or not outcome.agent_verdicts:
        return None
    return Table(["Agent", "Verdict"], [[a, v or UNSCORED] for a, v in outcome.agent_verdicts.items()])


def unscored_turns(session: Session) -> int:
    return sum(1 for t in session.turns if t.unscored)


def text_of(session: Session, span: ErrorSpan) -> str:
    """The text a span points into (text 2 for a pair's second text)."""
    return session.task.text_b if span.which == "b" and session.task.text_b else session.task.text


def location(session: Session, span: ErrorSpan) -> str:
    """"line:column", with "(text 2)" for a pair's second text, or "not located"."""
    if span.start is None:
        return "not located"
    line, col = line_col(text_of(session, span), span.start)
    return f"{line}:{col}" + (" (text 2)" if span.which == "b" else "")


def deduction(session: Session, error: ErrorSpan) -> str:
    return f"-{error.deduction:g}" if error.located or counts_unlocated(session) else "0 (not located)"


def unlocated_note(session: Session, errors: list[ErrorSpan]) -> str | None:
    """Why errors whose quote is not in the text cost (or do not cost) their point."""
    unlocated = sum(1 for e in errors if not e.located)
    if not unlocated:
        return None
    rule = ("each still costs its point (--count-unlocated)" if counts_unlocated(session) else
            "no point is deducted for them (--count-unlocated restores the paper's rule)")
    return (f"{unlocated} of {counted(len(errors), 'error')}: the quote is not found in the text; {rule}.")


def found_by(session: Session, error: ErrorSpan) -> str:
    """The agent that first wrote the error's quote (an evaluator in the discussion), else the one who reported it.

    MATEval's summarizer writes the report the errors are read from, but it only repeats what an
    evaluator raised: the reader wants to know who noticed.
    """
    quote = error.quote.strip().casefold()
    ok = [turn for turn in session.turns if turn.error is None]
    if quote:
        for turn in ok:
            if turn.role != "summarizer" and quote in turn.content.casefold():
                return f"{turn.agent}, round {turn.round}"
    reporters = [turn for turn in ok if turn.role == "summarizer"] or ok
    return f"{reporters[-1].agent} (report)" if reporters else "unknown"


HOW_TITLE = "How the verdict was reached"
"""The section's title in every report (the HTML page called it "Who decided what")."""
VERDICT = "verdict"
"""The key of a pair's verdict among what a person set (a criterion's name keys its score)."""
OVERRIDE_NOTE = " overridden by "
"""What `engine.runner.apply_overrides` writes in the note it adds: a person's change, not the protocol's rule."""


def _person_set(session: Session) -> dict[str, HumanAction]:
    """What a person set in the result, by criterion (or VERDICT): their last override or decision on it."""
    outcome = session.outcome
    if outcome is None:
        return {}
    set_by: dict[str, HumanAction] = {}
    for action in session.actions:
        if action.kind not in ("override", "decide") or action.value is None:
            continue
        on_verdict = outcome.verdict is not None and action.criterion not in outcome.scores
        key = VERDICT if on_verdict else action.criterion
        if key is not None:
            set_by[key] = action
    return set_by


def _agents_said(session: Session, key: str, criterion: str | None) -> str:
    """What the agents' last answers were on what a person set: "the agents said 4, 4, 4", "Scorer said 4"."""
    order = session.order
    last: dict[str, str] = {}
    for turn in session.turns:
        if turn.error is not None or turn.role in ("human", "summarizer", "feedback"):
            continue
        if criterion is not None and turn.criterion not in (criterion, None):
            continue
        answer = order.original(turn.verdict) if key == VERDICT else turn.score
        if answer is not None:
            last[turn.agent] = answer if isinstance(answer, str) else fmt_score(answer)
    if not last:
        return "the agents gave no answer on it"
    if len(last) == 1:
        agent, only = next(iter(last.items()))
        return f"{agent} said {only}"
    return f"the agents said {', '.join(last.values())}"


def person(who: str, reader: str | None) -> str:
    """A person's name as the reader sees it: "you" for the reader, by default whoever runs the program (the
    TUI's user, who made the report screen's override, exports it as they saw it), else "a person (name)"."""
    return "you" if who == (reader or current_user()) else f"a person ({who})"


def set_by_person(session: Session, reader: str | None = None) -> dict[str, str]:
    """Each result a person set, as it reads in the Result: {"coherence": "2, set by you; the agents said 4, 4, 4"}.

    An override or a decision replaces the agents' answer: shown bare beside the per-agent table, a 2 under
    three 4s reads as a mistake."""
    outcome = session.outcome
    if outcome is None:
        return {}
    said = {}
    for key, action in _person_set(session).items():
        value = (outcome.verdict or "none") if key == VERDICT else fmt_score(outcome.scores.get(key))
        said[key] = (f"{value}, set by {person(action.who, reader)}; "
                     f"{_agents_said(session, key, action.criterion)}")
    return said


def how_decided(session: Session, reader: str | None = None) -> tuple[str, list[str], list[str]]:
    """"How the verdict was reached": one sentence first (who decided), then the protocol's notes, then a
    person's changes apart from them (they are not one more step of the protocol's rule)."""
    outcome = session.outcome
    if outcome is None:
        return no_result(session), [], []
    rule = [note for note in outcome.notes if OVERRIDE_NOTE not in note]
    changed = [note for note in outcome.notes if OVERRIDE_NOTE in note]
    set_by = set_by_person(session, reader)
    if set_by:
        what = "; ".join(f"{key} {said}" for key, said in set_by.items())
        return f"The result is a person's: {what}.", rule, changed
    return "The agents decided the result, by the protocol's rule (below).", rule, changed


def explained(session: Session, span: ErrorSpan) -> tuple[str, str]:
    """What an error says and who raised it; for a passage an agent quoted (`quoted_passages`), that it
    was quoted, and by whom (its `explanation` holds the quoter)."""
    if span.type == QUOTE_TYPE:
        return "quoted in the debate (no deduction)", span.explanation
    return span.explanation.strip() or "(no explanation)", found_by(session, span)


def action_table(session: Session) -> Table | None:
    """Who decided what: every human action, when, by whom."""
    if not session.actions:
        return None
    rows = []
    for action in session.actions:
        detail = ", ".join(p for p in (
            action.criterion and f"criterion {action.criterion}",
            action.value is not None and f"value {action.value}",
            action.text,
        ) if p)
        rows.append([f"{action.at:%Y-%m-%d %H:%M:%S} (after turn {action.after_turn})", action.who, action.kind,
                     detail])
    return Table(["When", "Who", "Action", "Detail"], rows)


def fork_origin(session: Session) -> str | None:
    """Where a fork came from, in one line for its report; None for a session that is not a fork."""
    origin = session.forked_from
    if origin is None:
        return None
    copied = ("no turn copied" if origin.turns == 0 else
              f"its first {counted(origin.turns, 'completed turn')} copied, no call made for them")
    return f"session {origin.session}, at turn {origin.turns} ({copied})"


def usage_sentence(session: Session) -> str:
    usage = session.usage
    truncated = sum(turn.truncated for turn in session.turns)
    replies = "1 reply did not end on its own" if truncated == 1 else f"{truncated} replies did not end on their own"
    unfinished = f" {replies} (token cap, deadline or cut off): see the transcript." if truncated else ""
    return (f"{counted(usage.calls, 'call')}, {counted(usage.prompt_tokens, 'prompt token')}, "
            f"{counted(usage.completion_tokens, 'completion token')}, ${usage.cost_usd:.4f}.{unfinished}")


def turn_parts(session: Session) -> dict[int, str]:
    """Which part of its round each MATEval evaluator turn is, by slot: "statement" or "self-reflection".

    With SR and SR+CoT an evaluator speaks twice a round, its statement then its self-reflection
    (protocols/mateval.py's `Discussion.round`): the transcript tells them apart. A failed or empty turn is
    neither (an empty reply is asked again, as one more turn)."""
    if session.protocol != "mateval" or session.options.get("strategy") not in REFLECTING:
        return {}
    seen: dict[tuple[str, int], int] = {}
    parts = {}
    for turn in session.turns:
        if turn.role == "evaluator" and turn.error is None and turn.content.strip():
            count = seen[turn.agent, turn.round] = seen.get((turn.agent, turn.round), 0) + 1
            parts[turn.slot] = "statement" if count == 1 else "self-reflection"
    return parts


def turn_heading(turn: Turn, order: PairOrder, part: str | None = None) -> str:
    """"Agent (role): round 1, criterion, score 3, ..."; with a swapped `order` its verdict is in the presented
    numbering, told in both; `part` is what the turn is in its round (`turn_parts`)."""
    facts = [f"round {turn.round}"] + ([part] if part else [])
    if turn.criterion:
        facts.append(turn.criterion)
    if turn.score is not None:
        second = f" / {fmt_score(turn.score_b)}" if turn.score_b is not None else ""
        facts.append(f"score {fmt_score(turn.score)}{second}")
    if turn.verdict is not None:
        shown = f" as presented ({order.original(turn.verdict)} in the original numbering)"
        facts.append(f"verdict {turn.verdict}" + (shown if order.swapped and turn.verdict != "0" else ""))
    if turn.unscored:
        facts.append(UNSCORED)
    if turn.no_issue:
        facts.append("NO ISSUE")
    if turn.ending:
        facts.append(turn.ending)
    if turn.error:
        facts.append(f"failed: {turn.error}" + (" (partial text kept)" if turn.partial else ""))
    return f"{turn.agent} ({turn.role.replace('_', ' ')}): {', '.join(facts)}"


@dataclass(frozen=True)
class LadderFacts:
    decided_by: str
    guarantee: str
    totals: str
    table: Table


def _decided_by(recorded: dict[str, object], session: Session) -> str:
    if recorded.get("status") == "needs_human" and session.status == "needs_human":
        return (f"nobody yet: no tier trusted its answer, so it waits for a person (debate-tui resume {session.id} "
                "--decide, or the TUI's sessions screen)")
    return str(recorded.get("decided_by") or f"nobody: the last tier ended {session.status}")


def _guarantee(recorded: dict[str, Any]) -> str:
    """alpha, delta, the calibration items and each tier's threshold, as the policy gave them."""
    given = recorded.get("guarantee")
    if not isinstance(given, dict) or given.get("alpha") is None or given.get("delta") is None:
        return "not recorded (a session saved before the guarantee was kept)"
    alpha, delta = float(given["alpha"]), float(given["delta"])
    thresholds = "; ".join(f"tier {t.get('tier')} ({t.get('label')}) at confidence >= {t.get('threshold'):.2f}, "
                           f"chosen on the {t.get('reached')} items that reached it"
                           for t in given.get("thresholds") or [] if isinstance(t.get("threshold"), int | float))
    return (f"the answers a tier trusts agree with people at least {100 * (1 - alpha):.0f}% of the time (alpha "
            f"{alpha:g}), with probability at least {100 * (1 - delta):.0f}% (delta {delta:g}); calibrated on "
            f"{given.get('calibrated_on')} labelled items; thresholds: {thresholds}")


def _totals(recorded: dict[str, Any]) -> str:
    spent = recorded.get("totals")
    if not isinstance(spent, dict):
        return "not recorded"
    return (f"{counted(spent.get('calls') or 0, 'call')}, {counted(spent.get('prompt_tokens') or 0, 'prompt token')}, "
            f"{counted(spent.get('completion_tokens') or 0, 'completion token')}, ${spent.get('cost_usd') or 0:.4f} "
            f"over {counted(spent.get('tiers') or 0, 'tier')} (Usage below is this session's, the last tier's, alone)")


def ladder(session: Session) -> LadderFacts | None:
    """`--policy`: who decided, the guarantee, the ladder's totals, and each tier's answer, confidence against
    its threshold, and cost."""
    recorded = session.state.get("ladder")
    if not isinstance(recorded, dict):
        return None
    rows = []
    for rung in recorded.get("rungs") or []:
        answer = rung.get("verdict") or ", ".join(f"{k} {fmt_score(v)}" for k, v in (rung.get("scores") or {}).items())
        confidence = "none" if rung.get("confidence") is None else f"{rung['confidence']:.2f}"
        threshold = "-" if rung.get("threshold") is None else f"{rung['threshold']:.2f}"
        tokens = (rung.get("prompt_tokens") or 0) + (rung.get("completion_tokens") or 0)
        rows.append([str(rung.get("tier")), str(rung.get("label") or rung.get("protocol")), answer or "none",
                     confidence, threshold, "yes" if rung.get("trusted") else "no", str(rung.get("calls")),
                     f"{tokens:,}", f"${rung.get('cost_usd', 0):.4f}"])
    head = ["Tier", "Protocol", "Answer", "Confidence", "Threshold", "Trusted", "Calls", "Tokens", "Cost"]
    return LadderFacts(_decided_by(recorded, session), _guarantee(recorded), _totals(recorded), Table(head, rows))


def caution(session: Session) -> str | None:
    """What the report says first when the judged text speaks to the judges (`pasted.injection_signs`)."""
    signs = task_injection_signs(session.task)
    return injection_note(signs) if signs else None
