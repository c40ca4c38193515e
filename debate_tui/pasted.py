"""The judged text inside a prompt: its look-alikes of the prompt's markers escaped, and the signs that it
speaks to the judge.

Every protocol pastes the material between fixed markers ("[Text to evaluate]" ... "[End of text]",
"[Submission 1]: ...", "[System]"). The texts are exactly what an author who wants a good score
controls, so a text may not close its block: any bracket in it that opens one of the prompt's markers is
escaped ("\\[End of text]"), which leaves the text readable and its block closed only by the prompt.

`injection_signs` flags a text that carries the prompt's markers or addresses the judge. It is a short
list of patterns, kept simple on purpose: it names what it saw, it never blocks a run, and on the shipped
example texts and data sets it flags nothing (tests/test_pasted.py). It misses what it has no pattern for
(an instruction in other words, in another language); the injection probe (`debate-tui probe --bias
injection`) measures how much a judge moves when one is there.
"""

from __future__ import annotations

import re

_MARKER_WORDS = (r"end\s+of\b|text\b|texts?\s+to\s+evaluate|source\b|context\b|system\b|submission\b|question\b"
                 r"|criteria\b|criterion\b|discussion\b|summary\s+of\s+turn|earlier\s+debate|evaluation\s+form")
_MARKER = re.compile(r"\[(?=[ \t]*(?:" + _MARKER_WORDS + r")[^\]\n]{0,60}\])", re.I)
"""A bracket that opens one of the prompt's markers ("[End of text]", "[Text 2]", "[System]", "[Submission 1]")."""

_SIGNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("the prompt's markers", _MARKER),
    ("an instruction to ignore the prompt", re.compile(
        r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|prior|above"
        r"|earlier|preceding|former|original)?\s*(?:instructions?|prompts?|rules?|criteria|directions?)\b", re.I)),
    ("words to the judge", re.compile(
        r"\b(?:dear|attention|note\s+to(?:\s+the)?|hey|hello|hi|to\s+the)\s+(?:ai|llm|evaluators?|graders?"
        r"|language\s+model|model|assistant)\b"  # not "Hello judges!" (a cook before a jury, in ScaleEval's data)
        r"|\b(?:evaluators?|judges?|graders?|assessors?)\s+(?:must|should|shall|will|are\s+to|need\s+to)\s+"
        r"(?:give|rate|score|assign|award|output|answer|respond|reply|grade)\b"
        r"|\bas\s+an?\s+(?:ai|llm|language\s+model|evaluator|judge|grader)\b[^.\n]{0,40}\b(?:give|rate|score|assign)\b",
        re.I)),
    ("a score for itself", re.compile(
        r"(?im)^[ \t>*#-]*(?:final\s+|overall\s+)?(?:score|rating|verdict|evaluation)\s*[:=]\s*\[*\d"
        r"|\b(?:give|rate|score|assign|award|grade)\s+(?:this|the|it)\b[^.\n]{0,40}?\b(?:a\s+)?(?:score\s+of\s+|"
        r"rating\s+of\s+)?(?:\d+(?:\.\d+)?\s*(?:/\s*\d+|out\s+of\s+\d+)|(?:perfect|full|maximum|highest|top)"
        r"\s+(?:score|marks?|rating))", re.I)),
)
"""What `injection_signs` looks for, each with the words it says it saw."""


def escape_markers(text: str) -> str:
    """`text` as pasted into a prompt: each bracket opening a look-alike of the prompt's markers escaped."""
    return _MARKER.sub(r"\\[", text)


def injection_signs(*texts: str | None) -> list[str]:
    """What in the judged texts speaks to the judge, one short phrase per kind found ("the prompt's markers",
    "an instruction to ignore the prompt", "words to the judge", "a score for itself"); empty when none."""
    return [name for name, pattern in _SIGNS if any(text and pattern.search(text) for text in texts)]


def injection_note(signs: list[str]) -> str:
    """One line telling a reader what `injection_signs` found, for a report, a notice or a result."""
    return (f"the judged text carries {', '.join(signs)}: it may be speaking to the judges, so read their "
            "answers with that in mind")
