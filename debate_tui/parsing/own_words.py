"""What in a reply is not the judge's own words: the prompt's blocks copied back, quoted passages, markup tags."""

from __future__ import annotations

import re

QUOTED = re.compile(r"\"[^\"\n]{0,400}\"|“[^”\n]{0,400}”|(?<![\w'])'[^'\n]{1,400}'(?![\w'])")
"""A passage in quotes (double, or single where no word touches them: "it's" is no quote): of three words or more,
a submission's or a rubric's words, not the judge's."""

_ECHOED_BLOCK = re.compile(  # the task as the prompt gave it, copied back: its numbers are the text's, not a score
    r"^[ \t]*\[(?:source|context|text to evaluate|text [12])\][ \t]*\n"
    r".*?(?:^[ \t]*\[end of [^\]\n]*\][ \t]*$|\n[ \t]*\n|\Z)"
    r"|^[ \t]*\[(?:question|context|submission [12]|criteria)\]:.*?(?=^[ \t]*\[[\w ']+\]:|\n[ \t]*\n|\Z)",
    re.I | re.M | re.S,
)


def without_echo(text: str) -> str:
    """The reply without the blocks of the prompt it copied back ("[Text to evaluate] ... [End of text]")."""
    return _ECHOED_BLOCK.sub("", text)


TAG_LINES = re.compile(r"(?m)^[ \t]*<[^<>\n]*>(?:[^\n]*</[^<>\n]*>)?[ \t]*\n?")


def unquoted(text: str) -> str:
    """The judge's own words: quoted passages of three words or more emptied (a submission's or a rubric's
    words), and lines of markup tags dropped ("<function1>", a "<system_instruction>...</...>" echoed back)."""
    text = TAG_LINES.sub("", text)
    return QUOTED.sub(lambda m: '""' if len(m.group().split()) >= 3 or ":" in m.group() else m.group(), text)


def line_start(text: str, at: int) -> int:
    """Where the line holding offset `at` begins: what a reply says on that line before a number or a verdict."""
    return text.rfind("\n", 0, at) + 1
