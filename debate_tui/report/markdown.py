"""The review report in Markdown, MATEval style: it must read well raw and rendered.

Order: header, scores (final and per agent), located errors, how the verdict
was reached, human actions, usage, then the full transcript.
"""

from __future__ import annotations

import hashlib
import re

from debate_tui.domain import ErrorSpan, Session, Turn
from debate_tui.protocols import PROTOCOLS
from debate_tui.protocols.common import counted
from debate_tui.protocols.pairs import FLIP, pair_keys
from debate_tui.report.errors_text import counts_unlocated, line_col, section
from debate_tui.report.quotes import numbered, quoted_passages
from debate_tui.report.vote import jury_lines, vote_lines
from debate_tui.textsafe import inert_markdown
from debate_tui.writing import size

UNSCORED = "unscored"


_LINE_SPACE = re.compile(r"[ \t\n]+")


def cell(text: object) -> str:
    """Make any text safe inside a Markdown table cell (other breaks, such as NEL, are escaped by `render`)."""
    return _LINE_SPACE.sub(" ", str(text)).strip().replace("|", "\\|") or " "


def fmt_score(value: float | None) -> str:
    return UNSCORED if value is None else f"{value:g}"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _header(session: Session) -> list[str]:
    task = session.task
    title = PROTOCOLS.get(session.protocol, session.protocol).split(":")[0]
    lines = [
        f"# Evaluation report: {title}",
        "",
        f"- **Session:** `{session.id}`",
        f"- **Protocol:** {session.protocol}",
        f"- **Models:** {', '.join(session.models)}",
        f"- **Date:** {session.created_at:%Y-%m-%d %H:%M UTC}",
        f"- **Status:** {session.status}",
        f"- **Text:** {counted(*size(task.text))}, sha256 `{digest(task.text)}`",
    ]
    if task.text_b is not None:
        lines.append(f"- **Text 2:** {counted(*size(task.text_b))}, sha256 `{digest(task.text_b)}`")
    if any(a.model.startswith("demo/") for a in session.agents):
        lines.append("- **Note:** produced by the offline demo model, not a real judgment.")
    return lines


def _answer(turn: Turn, swapped: bool) -> str:
    """What one turn answered, verdicts in the original numbering."""
    if turn.verdict is not None:
        return FLIP[turn.verdict] if swapped else turn.verdict
    if turn.score is not None:
        return fmt_score(turn.score) + (f" / {fmt_score(turn.score_b)}" if turn.score_b is not None else "")
    return "unreadable" if turn.unscored else ""


def _so_far(session: Session) -> list[str]:
    """Without a result, what each agent answered in each round (its last turn there), and what is undecided."""
    swapped = session.swapped
    answers: dict[tuple[int, str | None], dict[str, str]] = {}
    for turn in session.turns:
        answer = _answer(turn, swapped) if turn.error is None else ""
        if answer:
            answers.setdefault((turn.round, turn.criterion), {})[turn.agent] = answer
    lines: list[str] = []
    if answers:
        agents = [a.name for a in session.agents if any(a.name in row for row in answers.values())]
        several = len({criterion for _, criterion in answers}) > 1
        lines += ["### Answers so far", ""]
        if any(t.verdict is not None for t in session.turns):
            lines += ["Verdicts in the original numbering: 1 = text 1 better, 2 = text 2 better, 0 = tie.", ""]
        head = ["Round", *(["Criterion"] if several else []), *agents]
        lines += ["| " + " | ".join(cell(h) for h in head) + " |", "|" + "---|" * len(head)]
        for (round, criterion), row in answers.items():
            first = [str(round), *([cell(criterion or "")] if several else [])]
            lines.append("| " + " | ".join(first + [cell(row.get(a, "")) for a in agents]) + " |")
        lines.append("")
    if session.pending_question:
        lines += [f"**Undecided:** {cell(session.pending_question)}", ""]
    return lines


def _scores(session: Session) -> list[str]:
    outcome = session.outcome
    if outcome is None:
        waiting = "a person's decision" if session.status == "needs_human" else None
        status = (f"No result yet: the run waits for {waiting}." if waiting
                  else f"No result: the run is {session.status}.")
        return ["## Result", "", status + (f" ({session.error})" if session.error else ""), "", *_so_far(session)]
    lines = ["## Result", ""]
    if outcome.verdict is not None or outcome.agent_verdicts:
        lines.append(f"**Verdict:** {outcome.verdict or 'none'} (1 = text 1 better, 2 = text 2 better, 0 = tie)")
        lines.append("")
    if outcome.scores:
        lines += ["| Criterion | Scale | Score |", "|---|---|---|"]
        scales = {c.name: c.scale for c in session.criteria}
        scales.update({key: c.scale for c in session.criteria for key in pair_keys(c.name)})  # a pair's two scores
        for name, value in outcome.scores.items():
            lines.append(f"| {cell(name)} | {scales.get(name, '')} | {fmt_score(value)} |")
        lines.append("")
    lines += vote_lines(session) + jury_lines(session)
    if outcome.per_agent:
        names = list(outcome.scores) or sorted({k for v in outcome.per_agent.values() for k in v})
        lines += ["### Per agent", "", "| Agent | " + " | ".join(cell(n) for n in names) + " |",
                  "|---|" + "---|" * len(names)]
        for agent, scores in outcome.per_agent.items():
            lines.append(f"| {cell(agent)} | " + " | ".join(fmt_score(scores.get(n)) for n in names) + " |")
        lines.append("")
    if outcome.agent_verdicts:
        lines += ["| Agent | Verdict |", "|---|---|"]
        lines += [f"| {cell(a)} | {v or UNSCORED} |" for a, v in outcome.agent_verdicts.items()]
        lines.append("")
    unscored = sum(1 for t in session.turns if t.unscored)
    if unscored:
        lines += [f"**Unscored turns:** {unscored} (no score could be read even after a reminder).", ""]
    return lines


def _errors(session: Session, errors: list[ErrorSpan]) -> list[str]:
    lines = ["## Errors", "", "| # | Type | Location | Quote | Explanation | Deduction |", "|---|---|---|---|---|---|"]
    charged = counts_unlocated(session)
    for number, error in enumerate(errors, start=1):
        text = session.task.text_b if error.which == "b" and session.task.text_b else session.task.text
        where = "not located"
        if error.start is not None:
            line, col = line_col(text, error.start)
            where = f"{line}:{col}" + (" (text 2)" if error.which == "b" else "")
        deduction = f"-{error.deduction:g}" if error.located or charged else "0 (not located)"
        lines.append(f"| {number} | {cell(error.type)} | {where} | \"{cell(error.quote)}\" | "
                     f"{cell(error.explanation)} | {deduction} |")
    lines.append("")
    unlocated = sum(1 for e in errors if not e.located)
    if unlocated:
        rule = ("each still costs its point (--count-unlocated)" if charged else
                "no point is deducted for them (--count-unlocated restores the paper's rule)")
        lines += [f"**Not located:** {unlocated} of {counted(len(errors), 'error')}: "
                  f"the quote is not found in the text; {rule}.", ""]
    return lines


def _judged(session: Session) -> list[str]:
    """The text (and text 2) that was judged, lines numbered as the locations count them."""
    task = session.task
    lines = ["## The text judged", ""]
    for title, text in [("Text", task.text)] + ([("Text 2", task.text_b)] if task.text_b is not None else []):
        shown, left_out = numbered(text)
        if task.text_b is not None:
            lines += [f"**{title}**", ""]
        # a hard break (two trailing spaces) ends each line: a viewer would otherwise join them in one paragraph
        lines += [f"> {line.rstrip()}  " for line in shown[:-1]] + [f"> {shown[-1]}".rstrip(), ""]
        if left_out:
            lines += [f"({counted(left_out, 'more line')} not shown; the whole text has sha256 `{digest(text)}`.)", ""]
    return lines


def _quotes(session: Session, quotes: list[ErrorSpan]) -> list[str]:
    if not quotes:
        return []
    lines = ["## Quoted passages", "", "Sentences the agents quoted from the text, located.", "",
             "| # | Quoted by | Location | Quote |", "|---|---|---|---|"]
    for number, quote in enumerate(quotes, start=1):
        text = session.task.text_b if quote.which == "b" and session.task.text_b else session.task.text
        line, col = line_col(text, quote.start or 0)
        where = f"{line}:{col}" + (" (text 2)" if quote.which == "b" else "")
        lines.append(f"| {number} | {cell(quote.explanation)} | {where} | \"{cell(quote.quote)}\" |")
    return [*lines, ""]


def _how(session: Session) -> list[str]:
    outcome = session.outcome
    if outcome is None or not outcome.notes:
        return []
    return ["## How the verdict was reached", "", *(f"- {cell(note)}" for note in outcome.notes), ""]


def _actions(session: Session) -> list[str]:
    if not session.actions:
        return []
    lines = ["## Human actions", "", "| When | Who | Action | Detail |", "|---|---|---|---|"]
    for action in session.actions:
        detail = ", ".join(p for p in (
            action.criterion and f"criterion {action.criterion}",
            action.value is not None and f"value {action.value}",
            action.text,
        ) if p)
        lines.append(f"| {action.at:%Y-%m-%d %H:%M:%S} (after turn {action.after_turn}) | {cell(action.who)} | "
                     f"{action.kind} | {cell(detail)} |")
    return [*lines, ""]


def _usage(session: Session) -> list[str]:
    usage = session.usage
    truncated = sum(turn.truncated for turn in session.turns)
    replies = "1 reply did not end on its own" if truncated == 1 else f"{truncated} replies did not end on their own"
    unfinished = f" {replies} (token cap, deadline or cut off): see the transcript." if truncated else ""
    return ["## Usage", "", f"{counted(usage.calls, 'call')}, {counted(usage.prompt_tokens, 'prompt token')}, "
            f"{counted(usage.completion_tokens, 'completion token')}, ${usage.cost_usd:.4f}.{unfinished}", ""]


def _turn(turn: Turn, swapped: bool = False) -> list[str]:
    """One turn of the transcript; `swapped`: its verdict is in the presented numbering, told in both."""
    facts = [f"round {turn.round}"]
    if turn.criterion:
        facts.append(turn.criterion)
    if turn.score is not None:
        second = f" / {fmt_score(turn.score_b)}" if turn.score_b is not None else ""
        facts.append(f"score {fmt_score(turn.score)}{second}")
    if turn.verdict is not None:
        facts.append(f"verdict {turn.verdict}" + (f" as presented ({FLIP[turn.verdict]} in the original numbering)"
                                                  if swapped and turn.verdict != "0" else ""))
    if turn.unscored:
        facts.append(UNSCORED)
    if turn.no_issue:
        facts.append("NO ISSUE")
    if turn.ending:
        facts.append(turn.ending)
    if turn.error:
        facts.append(f"failed: {turn.error}" + (" (partial text kept)" if turn.partial else ""))
    body = turn.content.strip() or "(empty reply)"
    quoted = "\n".join(f"> {line}" if line else ">" for line in body.split("\n"))  # not splitlines: NEL is no break
    return [f"### {turn.agent} ({turn.role.replace('_', ' ')}): {', '.join(facts)}", "", quoted, ""]


def render(session: Session) -> str:
    lines = _header(session) + [""] + _scores(session)
    errors = session.outcome.errors if session.outcome else []
    if errors:
        lines += _errors(session, errors) + section(session)
    lines += _quotes(session, quoted_passages(session)) + _judged(session)
    lines += _how(session) + _actions(session) + _usage(session)
    lines += ["## Transcript", ""]
    swapped = session.swapped
    for turn in session.turns:
        lines += _turn(turn, swapped)
    # model and user text is everywhere in it: nothing may act on a terminal or a renderer (our own lines hold
    # no "<", "&" or control characters, so escaping the whole document changes only theirs)
    return inert_markdown("\n".join(lines).rstrip()) + "\n"
