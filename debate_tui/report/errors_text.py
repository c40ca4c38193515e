"""The error report in prose: MATEval's second report format, for the people who fix models.

The Q&A report and the Markdown table serve measurement; this one is read by
someone improving a generator, so each error becomes a short paragraph that
says what is wrong, where (line, column and sentence number), why, and what it
costs, followed by a one-line tally per type.
"""

from __future__ import annotations

from debate_tui.domain import ERROR_TYPES, ErrorSpan, Session
from debate_tui.writing import sentence_number


def counts_unlocated(session: Session) -> bool:
    """Whether an error not located in the text costs its point in this run (MATEval's --count-unlocated)."""
    return bool(session.options.get("count_unlocated"))


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def type_name(kind: str) -> str:
    return f"{ERROR_TYPES[kind]} ({kind})" if kind in ERROR_TYPES else kind


def _points(value: float) -> str:
    return f"{value:g} point{'' if value == 1 else 's'}"


def where(error: ErrorSpan, text: str) -> str:
    """"line 1, column 65, sentence 3", or why there is no position."""
    if error.start is None:
        return "not found in the text (the quote may be paraphrased)" if error.quote else "no sentence quoted"
    line, column = line_col(text, error.start)
    sentence = sentence_number(text, error.start)
    return f"line {line}, column {column}, sentence {sentence}"


def paragraph(number: int, error: ErrorSpan, text: str, count_unlocated: bool = False) -> str:
    side = " of text 2" if error.which == "b" else ""
    head = f"{number}. {type_name(error.type)}, {where(error, text)}{side}"
    head += f': "{error.quote}"' if error.quote else ""
    head += "" if error.quote.rstrip().endswith((".", "!", "?", "。", "！", "？")) else "."
    explanation = error.explanation.strip().rstrip(".")
    why = f" {explanation}{'' if explanation.endswith(('。', '！', '？')) else '.'}" if explanation else ""
    cost = _points(error.deduction) if error.located or count_unlocated else "none (not located)"
    return f"{head}{why} Deduction: {cost}."


def render_errors_text(errors: list[ErrorSpan], text: str, text_b: str | None = None,
                       count_unlocated: bool = False) -> str:
    """The errors as numbered paragraphs, then the points lost per type and in total (an error not
    located in the text costs nothing unless `count_unlocated`)."""
    if not errors:
        return "No errors were found."
    paragraphs = [paragraph(n, e, text_b if e.which == "b" and text_b else text, count_unlocated)
                  for n, e in enumerate(errors, 1)]
    lost: dict[str, float] = {}
    for error in errors:
        lost[error.type] = lost.get(error.type, 0) + (error.deduction if error.located or count_unlocated else 0)
    tally = "; ".join(f"{type_name(kind)} -{value:g}" for kind, value in lost.items())
    paragraphs.append(f"In all, {len(errors)} error{'s' if len(errors) != 1 else ''} cost "
                      f"{_points(sum(lost.values()))}: {tally}.")
    return "\n\n".join(paragraphs)


def section(session: Session) -> list[str]:
    """The Markdown report's "Error report" section."""
    errors = session.outcome.errors if session.outcome else []
    if not errors:
        return []
    text = render_errors_text(errors, session.task.text, session.task.text_b, counts_unlocated(session))
    return ["## Error report", "", text, ""]
