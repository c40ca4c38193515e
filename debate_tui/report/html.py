"""The review report as one HTML page: offline, printable, for people who never open a terminal.

The judged text comes first after the result, every located error painted by
type (hover or focus shows its type, explanation, deduction and the agent that
found it); then the tables of the Markdown report and the transcript in
collapsible sections. The frame (no script, a Content-Security-Policy, every
string escaped) is `debate_tui.htmlpage`'s.

A section is a function `Session -> str` (HTML, "" when it has nothing to
say); `SECTIONS` lists them in page order, the place for a new one.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

from debate_tui.domain import ErrorSpan, Session, Turn, Usage
from debate_tui.htmlpage import esc, page, wide
from debate_tui.htmlpage import section as html_section
from debate_tui.htmlpage import table as html_table
from debate_tui.protocols import PROTOCOLS
from debate_tui.protocols.common import counted
from debate_tui.report import facts
from debate_tui.report.errors_text import counts_unlocated, render_errors_text, type_name
from debate_tui.report.facts import Table
from debate_tui.report.quotes import QUOTE_TYPE, TEXT_SHOWN_CHARS, quoted_passages
from debate_tui.report.vote import jury_summary, vote_summary
from debate_tui.writing import size

PALETTE = ("#E06C75", "#E5C07B", "#61AFEF", "#C678DD", "#56B6C2", "#98C379", "#D19A66", "#F0A0C0")
"""The TUI's error colours (ui/widgets/highlighted_text.py), so a type looks the same in both."""

CSS = """
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; }
.text, .turn { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13.5px; }
ol.text { background: var(--panel); padding: .75rem .75rem .75rem 3.5rem; border-radius: 6px; }
ol.text li { white-space: pre-wrap; overflow-wrap: break-word; }
ol.text li::marker { color: var(--muted); }
.turn { white-space: pre-wrap; overflow-wrap: break-word; background: var(--panel); padding: .5rem .75rem;
  border-radius: 6px; margin: .25rem 0 .75rem; }
details { margin: .2rem 0; } summary { cursor: pointer; }
mark { position: relative; color: inherit; border-radius: 3px; padding: 0 1px; outline-offset: 1px; }
mark.q { background: transparent; border-bottom: 2px dotted var(--muted); }
mark .tip { display: none; position: absolute; left: 0; top: 1.6em; z-index: 2; width: max-content;
  max-width: 28rem; white-space: normal; background: var(--tip); color: var(--fg); border: 1px solid var(--line);
  border-radius: 6px; padding: .4rem .6rem; font: 13px/1.4 system-ui, sans-serif;
  box-shadow: 0 2px 8px rgba(0, 0, 0, .25); }
mark:hover .tip, mark:focus .tip { display: block; }
mark:focus { outline: 2px solid var(--fg); }
.legend span.key { display: inline-block; margin-right: 1rem; }
.swatch { display: inline-block; width: .9em; height: .9em; border-radius: 2px; vertical-align: -1px;
  margin-right: .3em; }
.swatch.q { border-bottom: 2px dotted var(--muted); border-radius: 0; }
%(types)s
@media print {
  mark .tip { display: none !important; }
  details::details-content { content-visibility: visible; display: block; }
  details > * { display: block; }
  .turn { break-inside: avoid; }
}
"""


def _type_css() -> str:
    """One class per palette colour (t0..t7): no inline style anywhere, so the policy needs only the hash."""
    rules = []
    for number, colour in enumerate(PALETTE):
        rules.append(f"mark.t{number}, .swatch.t{number} {{ background: {colour}66; }} "
                     f"mark.t{number} {{ box-shadow: inset 0 -2px {colour}; }}")
    return "\n".join(rules)


STYLE = CSS % {"types": _type_css()}


def _table(table: Table | None, caption: str = "") -> str:
    return "" if table is None else html_table(table.head, table.rows, caption)


def _para(label: str, text: str | None) -> str:
    return f"<p><strong>{esc(label)}:</strong> {esc(text)}</p>\n" if text else ""


def _header(session: Session) -> str:
    task = session.task
    rows = [("Session", session.id), ("Protocol", session.protocol), ("Models", ", ".join(session.models)),
            ("Date", f"{session.created_at:%Y-%m-%d %H:%M UTC}"), ("Status", session.status),
            ("Text", f"{counted(*size(task.text))}, sha256 {facts.digest(task.text)}")]
    if task.text_b is not None:
        rows.append(("Text 2", f"{counted(*size(task.text_b))}, sha256 {facts.digest(task.text_b)}"))
    if (origin := facts.fork_origin(session)) is not None:
        rows.append(("Forked from", origin))
    if any(a.model.startswith("demo/") for a in session.agents):
        rows.append(("Note", "produced by the offline demo model, not a real judgment."))
    if warning := facts.caution(session):
        rows.append(("Caution", warning))
    return '<dl class="facts">' + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in rows) + "</dl>\n"


def _result(session: Session) -> str:
    outcome = session.outcome
    if outcome is None:
        parts = [f"<p>{esc(facts.no_result(session))}</p>\n"]
        table = facts.answers_so_far(session)
        if table is not None:
            key = f" Verdicts in the original numbering: {facts.VERDICT_KEY}." if facts.has_verdicts(session) else ""
            parts.append(_table(table, "Answers so far." + key))
        parts.append(_para("Undecided", session.pending_question))
        return html_section("result", "Result", "".join(parts))
    parts = []
    set_by = facts.set_by_person(session)
    if outcome.verdict is not None or outcome.agent_verdicts:
        verdict = set_by.get(facts.VERDICT, outcome.verdict or "none")
        parts.append(_para("Verdict", f"{verdict} ({facts.VERDICT_KEY})"))
    scores = facts.score_table(session)
    if scores is not None:
        scores = Table(scores.head, [[name, scale, set_by.get(name, score)] for name, scale, score in scores.rows])
    parts += [_table(scores), _para("Vote before discussion", vote_summary(session)),
              _para("Jury", jury_summary(session)), _table(facts.per_agent_table(session), "Per agent"),
              _table(facts.agent_verdict_table(session))]
    confident = facts.confidence_lines(session)
    if confident:
        parts.append(_para("Confidence", "; ".join(confident)))
    unscored = facts.unscored_turns(session)
    if unscored:
        parts.append(_para("Unscored turns", f"{unscored} (no score could be read even after a reminder)."))
    return html_section("result", "Result", "".join(parts))


def _classes(errors: list[ErrorSpan]) -> dict[str, str]:
    """Error type -> its colour class, in order of first appearance; quoted passages get their own."""
    classes: dict[str, str] = {}
    for error in errors:
        if error.type != QUOTE_TYPE:
            classes.setdefault(error.type, f"t{len(classes) % len(PALETTE)}")
    classes[QUOTE_TYPE] = "q"
    return classes


def _tip(session: Session, number: int, span: ErrorSpan) -> str:
    if span.type == QUOTE_TYPE:
        return f"Quoted by {span.explanation}"
    lines = [f"#{number} {type_name(span.type)}", span.explanation.strip() or "(no explanation)",
             f"Deduction: {facts.deduction(session, span)}", f"Found by: {facts.found_by(session, span)}"]
    return "\n".join(lines)


def _painted_lines(text: str, spans: list[tuple[int, int, str, str]]) -> tuple[list[str], int]:
    """The text's lines as HTML, each span (start, end, class, tip) marked; and how many lines are left out.

    Offsets are cut on the raw text and each piece is escaped after the cut, so a mark never drifts."""
    lines = text.rstrip("\n").split("\n")  # not splitlines: locations count only "\n" as a break
    painted: list[str] = []
    offset = kept = 0
    for line in lines:
        if painted and kept + len(line) > TEXT_SHOWN_CHARS:
            break
        end_of_line = offset + len(line)
        cuts = {0, len(line)}
        for start, end, _, _ in spans:
            if start < end_of_line and end > offset:
                cuts.update((max(start, offset) - offset, min(end, end_of_line) - offset))
        pieces = []
        for left, right in itertools.pairwise(sorted(cuts)):
            covering = [s for s in spans if s[0] <= offset + left and offset + right <= s[1]]
            piece = esc(line[left:right])
            if covering:
                _, _, klass, tip = covering[-1]
                piece = (f'<mark class="{klass}" tabindex="0" title="{esc(tip)}">{piece}'
                         f'<span class="tip" role="tooltip">{esc(tip)}</span></mark>')
            pieces.append(piece)
        painted.append("".join(pieces))
        kept += len(line) + 1
        offset = end_of_line + 1
    return painted, len(lines) - len(painted)


def _judged(session: Session) -> str:
    """The judged text(s), lines numbered as the locations count them, every located error and quote marked."""
    task = session.task
    errors = session.outcome.errors if session.outcome else []
    quotes = quoted_passages(session)
    classes = _classes(errors)
    parts = [_legend(session, errors, quotes, classes)]
    texts = [("a", "Text", task.text)] + ([("b", "Text 2", task.text_b)] if task.text_b is not None else [])
    for which, title, text in texts:
        spans = [(span.start, span.end, classes[span.type], _tip(session, number, span))
                 for number, span in itertools.chain(enumerate(errors, 1), enumerate(quotes, 1))
                 if span.start is not None and span.end is not None and span.which == which]
        # painted in order, the last one covering a piece shows: errors over quotes, inner spans over outer ones
        spans.sort(key=lambda s: (s[2] != "q", s[0], -s[1]))
        lines, left_out = _painted_lines(text, spans)
        if task.text_b is not None:
            parts.append(f"<h3>{title}</h3>\n")
        parts.append('<ol class="text">' + "".join(f"<li>{line or ' '}</li>" for line in lines) + "</ol>\n")
        if left_out:
            parts.append(f'<p class="note">({counted(left_out, "more line")} not shown; the whole text has sha256 '
                         f"{facts.digest(text)}.)</p>\n")
    return html_section("text", "The text judged", "".join(parts))


def _legend(session: Session, errors: list[ErrorSpan], quotes: list[ErrorSpan], classes: dict[str, str]) -> str:
    keys = []
    for kind, klass in classes.items():
        count = sum(1 for e in (quotes if kind == QUOTE_TYPE else errors) if e.type == kind)
        if count:
            name = "quoted by an agent (no deduction)" if kind == QUOTE_TYPE else type_name(kind)
            keys.append(f'<span class="key"><span class="swatch {klass}"></span>{esc(name)} ({count})</span>')
    if not keys:
        return '<p class="legend muted">No located errors in this report.</p>\n'
    hint = "Hover over or tab to a marked passage for its type, explanation, deduction and finder."
    return f'<p class="legend">{"".join(keys)}</p>\n<p class="note">{hint}</p>\n'


def _errors(session: Session) -> str:
    errors = session.outcome.errors if session.outcome else []
    if not errors:
        return ""
    classes = _classes(errors)
    rows = []
    for number, error in enumerate(errors, 1):
        cells = [f'<span class="swatch {classes[error.type]}"></span>{esc(type_name(error.type))}',
                 esc(facts.location(session, error)), f"&ldquo;{esc(error.quote)}&rdquo;", esc(error.explanation),
                 esc(facts.deduction(session, error)), esc(facts.found_by(session, error))]
        rows.append(f'<tr id="error-{number}"><td>{number}</td>' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("#", "Type", "Location", "Quote", "Explanation", "Deduction",
                                               "Found by"))
    prose = render_errors_text(errors, session.task.text, session.task.text_b, counts_unlocated(session))
    body = (wide(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
            + _para("Not located", facts.unlocated_note(session, errors))
            + "<h3>Error report</h3>\n" + "".join(f"<p>{esc(p)}</p>\n" for p in prose.split("\n\n")))
    return html_section("errors", "Errors", body)


def _how(session: Session) -> str:
    """Who decided, in one sentence; the protocol's notes, a person's changes apart from them; every human action."""
    parts = []
    if session.outcome is not None:
        sentence, rule, changed = facts.how_decided(session)
        parts.append(f"<p>{esc(sentence)}</p>\n")
        for title, notes in (("The agents' answer, by the protocol's rule:", rule),
                             ("Changed by a person afterwards:", changed)):
            if notes:
                parts.append(f"<p>{esc(title)}</p>\n<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>\n")
    parts.append(_table(facts.action_table(session), "Human actions"))
    return html_section("decided", facts.HOW_TITLE, "".join(parts))


def _agent_usage(turns: Iterable[Turn]) -> Table | None:
    spent: dict[str, Usage] = {}
    for turn in turns:
        spent.setdefault(turn.agent, Usage()).add(turn.usage)
    if not spent:
        return None
    return Table(["Agent", "Calls", "Prompt tokens", "Completion tokens", "Cost (USD)"],
                 [[agent, f"{u.calls:,}", f"{u.prompt_tokens:,}", f"{u.completion_tokens:,}", f"{u.cost_usd:.4f}"]
                  for agent, u in spent.items()])


def _usage(session: Session) -> str:
    return html_section("usage", "Usage and cost", f"<p>{esc(facts.usage_sentence(session))}</p>\n"
                    + _table(_agent_usage(session.turns), "Per agent"))


def _transcript(session: Session) -> str:
    """Every turn, its line breaks kept (the turn's box is `white-space: pre-wrap`)."""
    order, parts = session.order, facts.turn_parts(session)
    turns = []
    for turn in session.turns:
        body = turn.content.strip() or "(empty reply)"
        heading = facts.turn_heading(turn, order, parts.get(turn.slot))
        turns.append(f"<details><summary>{esc(heading)}</summary>"
                     f'<div class="turn">{esc(body)}</div></details>\n')
    return html_section("transcript", "Transcript", "".join(turns))


def _ladder(session: Session) -> str:
    found = facts.ladder(session)
    if found is None:
        return ""
    return html_section("ladder", "Trust ladder", _para("Decided by", found.decided_by)
                        + _para("Guarantee", found.guarantee) + _para("Ladder totals", found.totals)
                        + _table(found.table))


SECTIONS: list[Callable[[Session], str]] = [_result, _ladder, _judged, _errors, _how, _usage, _transcript]
"""The page's sections in order; each gives "" when it has nothing to say."""


def render_html(session: Session) -> str:
    """The whole page: one self-contained file, no script, nothing fetched."""
    title = PROTOCOLS.get(session.protocol, session.protocol).split(":")[0]
    body = "".join(section(session) for section in SECTIONS)
    return page(f"Evaluation report: {title} ({session.id})",
                f"<h1>Evaluation report: {esc(title)}</h1>\n{_header(session)}{body}", STYLE)
