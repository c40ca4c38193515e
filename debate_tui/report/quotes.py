"""The judged text in the report, and every sentence an agent quoted from it, located.

MATEval's summarizer names its errors with quotes, which the protocol locates;
the other protocols' agents quote the text too (a Critic's objection, a
referee's example, a speaker's evidence) in plain prose. Each quoted passage
found in the text becomes a span the report lists and the report screen paints
exactly like an error, with no deduction: a reader sees at once what the
argument was about.
"""

from __future__ import annotations

import re
from typing import Literal

from debate_tui.domain import ErrorSpan, Session
from debate_tui.parsing import locate
from debate_tui.parsing.quotes import WRAPPING

QUOTED = re.compile(r'"([^"\n]*?\w\s+\w[^"\n]*?)"|“([^”\n]*?\w\s+\w[^”\n]*?)”')
"""A passage in double quotes, straight or curly, of two words at least: a phrase of the text ("Tom swam." is
one), not a word named (single quotes are apostrophes too often to tell)."""
MAX_QUOTE = 400
QUOTE_TYPE = "quoted"
TEXT_SHOWN_CHARS = 20_000
"""Past this size the report holds the text's first part (whole lines) and says how much is left out."""


def quoted_passages(session: Session) -> list[ErrorSpan]:
    """Every passage an agent quoted that is found in a judged text, once, in order of first quotation;
    those already located as errors (MATEval's) are left to the errors."""
    task = session.task
    texts: list[tuple[Literal["a", "b"], str]] = [("a", task.text)]
    if task.text_b:
        texts.append(("b", task.text_b))
    errors = [e for e in (session.outcome.errors if session.outcome else []) if e.located]
    taken = {(e.which, e.start) for e in errors}
    said = {(e.which, _passage(e.quote)) for e in errors}  # a REP error points at the repeat, a quote at the first
    found: list[ErrorSpan] = []
    for turn in session.turns:
        if turn.error is not None:
            continue
        for match in QUOTED.finditer(turn.content):
            quote = match.group(1) or match.group(2)
            if len(quote) > MAX_QUOTE:
                continue
            for which, text in texts:
                span = locate(quote, text)
                if span is None:
                    continue
                if (which, span[0]) not in taken and (which, _passage(text[span[0]:span[1]])) not in said:
                    taken.add((which, span[0]))
                    found.append(ErrorSpan(type=QUOTE_TYPE, quote=text[span[0]:span[1]], start=span[0], end=span[1],
                                           explanation=f"{turn.agent}, round {turn.round}", deduction=0,
                                           which=which))
                break
    return found


def _passage(quote: str) -> str:
    """A passage as compared with an error's quote: one location per passage, the error's."""
    return " ".join(WRAPPING.sub("", quote).casefold().split()).rstrip(".!?")


def numbered(text: str, limit: int = TEXT_SHOWN_CHARS) -> tuple[list[str], int]:
    """The text's lines numbered from 1, whole lines up to `limit` characters; and how many lines are left out."""
    lines = text.rstrip("\n").split("\n")  # not splitlines: the locations count only "\n" as a break
    kept: list[str] = []
    size = 0
    for line in lines:
        if kept and size + len(line) > limit:
            break
        kept.append(line)
        size += len(line) + 1
    width = len(str(len(kept)))
    return [f"{number:>{width}}: {line}" for number, line in enumerate(kept, start=1)], len(lines) - len(kept)
