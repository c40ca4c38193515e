"""An extractive digest of older debate entries: condensation without a model call.

`--condense digest` turns each entry that has aged out of an agent's budget
into one line: who spoke, the opening of what they said (their first sentence,
at most `OPENING_WORDS` words) and their answer line ("Score: 3"). Nothing is
invented or paraphrased, it costs no call, and the same entries always give the
same digest, so a rerun or a resume condenses alike and the digested part of a
prompt stays a stable prefix: later condensations only append lines to it.
"""

from __future__ import annotations

import re

DIGEST_HEADER = "[Condensed history: earlier messages digested, each to its opening words and answer line]"
OPENING_WORDS = 20
"""A typical sentence: enough for a speaker's claim, a fraction of a reply."""
ANSWER_WORDS = 6
"""A last line this short is an answer line ("Score: 3", "Scores: 3 4", "NO ISSUE") and is kept whole."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")


def digest_log(older: list[str]) -> str:
    """One entry holding the digests of `older`; an earlier digest among them is kept, not digested again."""
    lines: list[str] = []
    for entry in older:
        if entry.startswith(DIGEST_HEADER):
            lines.extend(entry.splitlines()[1:])
        else:
            lines.append(digest_entry(entry))
    return "\n".join([DIGEST_HEADER, *lines])


def digest_entry(entry: str) -> str:
    """`[Critic]: The ending does not follow from the middle. ... Score: 2` for a whole reply."""
    lines = entry.strip().splitlines()
    last = lines[-1].strip() if len(lines) > 1 else ""
    answer = last if last and len(last.split()) <= ANSWER_WORDS else ""
    body = " ".join(lines[:-1] if answer else lines)
    opening = " ".join(_SENTENCE_END.split(body, maxsplit=1)[0].split()[:OPENING_WORDS])
    cut = " ..." if opening != " ".join(body.split()) else ""
    return f"{opening}{cut} {answer}".rstrip()
