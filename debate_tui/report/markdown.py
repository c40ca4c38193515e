"""The review report in Markdown, MATEval style: it must read well raw and rendered.

Order: header, scores (final and per agent), located errors, how the verdict
was reached, human actions, usage, then the full transcript.
"""

from __future__ import annotations

import re

from debate_tui.domain import ErrorSpan, PairOrder, Session, Turn
from debate_tui.protocols import PROTOCOLS
from debate_tui.protocols.common import counted
from debate_tui.report.errors_text import section
from debate_tui.report.facts import (
    HOW_TITLE,
    VERDICT,
    VERDICT_KEY,
    Table,
    action_table,
    agent_verdict_table,
    answers_so_far,
    caution,
    confidence_lines,
    deduction,
    digest,
    fork_origin,
    has_verdicts,
    how_decided,
    ladder,
    location,
    no_result,
    per_agent_table,
    score_table,
    set_by_person,
    turn_heading,
    turn_parts,
    unlocated_note,
    unscored_turns,
    usage_sentence,
)
from debate_tui.report.quotes import numbered, quoted_passages
from debate_tui.report.vote import jury_lines, vote_lines
from debate_tui.textsafe import inert_markdown, markdown_literal
from debate_tui.writing import size

_LINE_SPACE = re.compile(r"[ \t\n]+")


def cell(text: object) -> str:
    """Make any text safe inside a Markdown table cell (other breaks, such as NEL, are escaped by `render`)."""
    return _LINE_SPACE.sub(" ", str(text)).strip().replace("|", "\\|") or " "


def hard_breaks(lines: list[str], prefix: str = "") -> list[str]:
    """`lines` as Markdown that keeps each break: a single newline is a soft break that a viewer joins into one
    run-on paragraph (a MATEval report's "Q: / A: / Location:" lines, "Score: 3" under its reason), so each
    line ends in a hard break (two spaces: a backslash would show where a block ends, before a list item);
    a blank line still ends a paragraph. The lines must be `markdown_literal` already."""
    return [f"{prefix}{line.rstrip()}  " if line.strip() else prefix.rstrip() for line in lines]


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
    if (origin := fork_origin(session)) is not None:
        lines.append(f"- **Forked from:** {origin}")
    if any(a.model.startswith("demo/") for a in session.agents):
        lines.append("- **Note:** produced by the offline demo model, not a real judgment.")
    if warning := caution(session):
        lines.append(f"- **Caution:** {warning}")
    return lines


def _table(table: Table | None, cells: bool = True) -> list[str]:
    """A Markdown table, every cell made safe (`cells=False`: our own numbers, left as they are)."""
    if table is None:
        return []
    fmt = cell if cells else str
    return ["| " + " | ".join(fmt(h) for h in table.head) + " |", "|" + "---|" * len(table.head),
            *("| " + " | ".join(fmt(v) for v in row) + " |" for row in table.rows), ""]


def _so_far(session: Session) -> list[str]:
    """Without a result, what each agent answered in each round (its last turn there), and what is undecided."""
    lines: list[str] = []
    table = answers_so_far(session)
    if table is not None:
        lines += ["### Answers so far", ""]
        if has_verdicts(session):
            lines += [f"Verdicts in the original numbering: {VERDICT_KEY}.", ""]
        lines += _table(table)
    if session.pending_question:
        lines += [f"**Undecided:** {cell(session.pending_question)}", ""]
    return lines


def _scores(session: Session, reader: str | None = None) -> list[str]:
    outcome = session.outcome
    if outcome is None:
        return ["## Result", "", no_result(session), "", *_so_far(session)]
    lines = ["## Result", ""]
    set_by = set_by_person(session, reader)
    if outcome.verdict is not None or outcome.agent_verdicts:
        verdict = set_by.get(VERDICT, outcome.verdict or "none")
        lines += [f"**Verdict:** {cell(verdict)} ({VERDICT_KEY})", ""]
    scores = score_table(session)
    if scores is not None:
        rows = [[cell(name), scale, cell(set_by[name]) if name in set_by else score]
                for name, scale, score in scores.rows]
        lines += _table(Table(scores.head, rows), False)
    lines += vote_lines(session) + jury_lines(session)
    per_agent = per_agent_table(session)
    if per_agent is not None:
        lines += ["### Per agent", "", *_table(per_agent)]
    lines += _table(agent_verdict_table(session))
    confident = confidence_lines(session)
    if confident:
        lines += [f"**Confidence:** {cell('; '.join(confident))}.", ""]
    unscored = unscored_turns(session)
    if unscored:
        lines += [f"**Unscored turns:** {unscored} (no score could be read even after a reminder).", ""]
    return lines


def _errors(session: Session, errors: list[ErrorSpan]) -> list[str]:
    lines = ["## Errors", "", "| # | Type | Location | Quote | Explanation | Deduction |", "|---|---|---|---|---|---|"]
    for number, error in enumerate(errors, start=1):
        lines.append(f"| {number} | {cell(error.type)} | {location(session, error)} | \"{cell(error.quote)}\" | "
                     f"{cell(error.explanation)} | {deduction(session, error)} |")
    lines.append("")
    note = unlocated_note(session, errors)
    if note:
        lines += [f"**Not located:** {note}", ""]
    return lines


def _judged(session: Session) -> list[str]:
    """The text (and text 2) that was judged, lines numbered as the locations count them."""
    task = session.task
    lines = ["## The text judged", ""]
    for title, text in [("Text", task.text)] + ([("Text 2", task.text_b)] if task.text_b is not None else []):
        shown, left_out = numbered(text)
        if task.text_b is not None:
            lines += [f"**{title}**", ""]
        lines += [*hard_breaks([markdown_literal(line) for line in shown], "> "), ""]
        if left_out:
            lines += [f"({counted(left_out, 'more line')} not shown; the whole text has sha256 `{digest(text)}`.)", ""]
    return lines


def _quotes(session: Session, quotes: list[ErrorSpan]) -> list[str]:
    if not quotes:
        return []
    lines = ["## Quoted passages", "", "Sentences the agents quoted from the text, located.", "",
             "| # | Quoted by | Location | Quote |", "|---|---|---|---|"]
    for number, quote in enumerate(quotes, start=1):
        lines.append(f"| {number} | {cell(quote.explanation)} | {location(session, quote)} | \"{cell(quote.quote)}\" |")
    return [*lines, ""]


def _ladder(session: Session) -> list[str]:
    found = ladder(session)
    if found is None:
        return []
    return ["## Trust ladder", "", f"Decided by: {cell(found.decided_by)}.", "", f"Guarantee: {cell(found.guarantee)}.",
            "", f"Ladder totals: {cell(found.totals)}.", "", *_table(found.table)]


def _how(session: Session, reader: str | None = None) -> list[str]:
    """Who decided, in one sentence; then the protocol's notes, and a person's changes apart from them."""
    if session.outcome is None:
        return []
    sentence, rule, changed = how_decided(session, reader)
    lines = [f"## {HOW_TITLE}", "", cell(sentence), ""]
    if rule:
        lines += ["The agents' answer, by the protocol's rule:", "", *(f"- {cell(note)}" for note in rule), ""]
    if changed:
        lines += ["Changed by a person afterwards:", "", *(f"- {cell(note)}" for note in changed), ""]
    return lines


def _actions(session: Session) -> list[str]:
    table = action_table(session)
    if table is None:
        return []
    return ["## Human actions", "", *_table(Table(table.head, [[when, cell(who), kind, cell(detail)]
                                                              for when, who, kind, detail in table.rows]), False)]


def _usage(session: Session) -> list[str]:
    return ["## Usage", "", usage_sentence(session), ""]


def _turn(turn: Turn, order: PairOrder, part: str | None = None) -> list[str]:
    """One turn of the transcript; with a swapped `order` its verdict is in the presented numbering, told in both.
    The reply is shown as written: no heading, table or rule of its can pass for the report's own, and each of
    its line breaks stays one (`hard_breaks`)."""
    body = markdown_literal(turn.content.strip()) or "(empty reply)"
    quoted = hard_breaks(body.split("\n"), "> ")  # not splitlines: NEL is no break
    return [f"### {turn_heading(turn, order, part)}", "", *quoted, ""]


def render(session: Session, reader: str | None = None) -> str:
    """The report; what `reader` set reads "set by you" (by default: whoever runs the program, see `facts.person`)."""
    lines = _header(session) + [""] + _scores(session, reader) + _ladder(session)
    errors = session.outcome.errors if session.outcome else []
    if errors:
        lines += _errors(session, errors) + section(session)
    lines += _quotes(session, quoted_passages(session)) + _judged(session)
    lines += _how(session, reader) + _actions(session) + _usage(session)
    lines += ["## Transcript", ""]
    order, parts = session.order, turn_parts(session)
    for turn in session.turns:
        lines += _turn(turn, order, parts.get(turn.slot))
    # model and user text is everywhere in it: nothing may act on a terminal or a renderer (our own lines hold
    # no "<", "&" or control characters, so escaping the whole document changes only theirs)
    return inert_markdown("\n".join(lines).rstrip()) + "\n"
