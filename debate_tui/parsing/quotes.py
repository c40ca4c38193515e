"""Locating a quoted passage in the evaluated text, tolerant to spacing, case, quotes, dashes and punctuation."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from functools import lru_cache

from debate_tui.writing import is_cjk_char

_SPELLING = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "‑": "-",
                           "−": "-", "\u00a0": " ", "…": ".", "「": '"', "」": '"', "『": '"', "』": '"',
                           "。": ".", "、": ",", "\u3000": " ", "؟": "?", "،": ",", "؛": ";", "۔": "."})
WRAPPING = re.compile(r"^[\s\"'“”‘’「」『』]+|[\s\"'“”‘’「」『』]+$")
_EDGE_DOTS = re.compile(r"^(?:\.{2,}|…)\s*|\s*(?:\.{2,}|…)$")
_TRAILING_PUNCT = re.compile(r"[\s.,;:!?。，、；：！？]+$")
_ELLIPSIS = re.compile(r"\s*(?:\.{3}|…)\s*")
_WORD_CHARS = re.compile(r"\w")


@lru_cache(maxsize=64)
def _normalise(s: str, words_only: bool) -> tuple[str, tuple[int, ...]]:
    """Lower-cased, one spelling of quotes and dashes, single spaces; plus each kept char's original offset."""
    out: list[str] = []
    where: list[int] = []
    gap = False
    for i, ch in enumerate(s):
        low = unicodedata.normalize("NFKC", ch).translate(_SPELLING).lower()  # full-width "，" is ","
        ch = low if len(low) == 1 else ch
        if ch.isspace() or (words_only and not ch.isalnum()):
            gap = bool(out)
            continue
        if gap:
            out.append(" ")
            where.append(i)
            gap = False
        out.append(ch)
        where.append(i)
    return "".join(out), tuple(where)


def _joined(a: str, b: str) -> bool:
    """Whether two neighbouring characters belong to one word: CJK writes words without spaces, so a
    quote may begin or end next to any character there."""
    return a.isalnum() and b.isalnum() and not (is_cjk_char(a) or is_cjk_char(b))


def _find_whole(needle: str, hay: str, start: int) -> int:
    """First occurrence that does not cut a word: "he went" is not in "She went"."""
    i = hay.find(needle, start) if needle else -1
    while i >= 0:
        j = i + len(needle)
        if (i == 0 or not _joined(hay[i - 1], needle[0])) and (j == len(hay) or not _joined(needle[-1], hay[j])):
            return i
        i = hay.find(needle, i + 1)
    return -1


def _find_normalised(quote: str, text: str, start: int, words_only: bool) -> tuple[int, int] | None:
    hay, where = _normalise(text, words_only)
    needle = _normalise(quote, words_only)[0]
    i = _find_whole(needle, hay, bisect_left(where, start))
    return (where[i], where[i + len(needle) - 1] + 1) if i >= 0 else None


def locate(quote: str, text: str, start: int = 0) -> tuple[int, int] | None:
    """Offsets [start, end) of `quote` in `text`, tolerant to spacing, case, quotes, dashes and punctuation.

    Exact match first; quotes with fewer than 3 word characters are matched only exactly.
    """
    for candidate in (quote, WRAPPING.sub("", quote)):
        i = _find_whole(candidate, text, start)
        if i >= 0:
            return i, i + len(candidate)
    core = _EDGE_DOTS.sub("", WRAPPING.sub("", quote))
    if len(_WORD_CHARS.findall(core)) < 3:
        return None
    pieces = [p for p in _ELLIPSIS.split(core) if len(_WORD_CHARS.findall(p)) >= 3]
    if len(pieces) > 1:  # "A ... B": each part in order
        first = locate(pieces[0], text, start)
        last = first
        for piece in pieces[1:]:
            last = locate(piece, text, last[1]) if last else None
        return (first[0], last[1]) if first and last else None
    for variant, words_only in ((core, False), (_TRAILING_PUNCT.sub("", core), False), (core, True)):
        span = _find_normalised(variant, text, start, words_only)
        if span:
            return span
    return None


_PASSAGE = re.compile(
    r"[“\"「『‘]([^“”\"「」『』‘’\n]{2,}?)[”\"」』’]"
    # 'like this': a straight single quote opens and closes only beside a non-word character, one between two
    # letters is an apostrophe inside the passage ('He didn't go.'), never its end, and a single word in them is
    # a word named ("the name 'John'"), not a passage
    r"|(?<![\w'])'((?:[^'\n]|(?<=\w)'(?=\w))+?\s(?:[^'\n]|(?<=\w)'(?=\w))+?)'(?![\w'])"
)
"""A passage in quotes, in any of the forms Chinese and English reports use: double, curly, corner or single."""


def find_passages(text: str) -> list[re.Match[str]]:
    """The quoted passages of `text`, in order; `passage_words(m)` is one's words without its quotes."""
    return list(_PASSAGE.finditer(text))


def passage_words(m: re.Match[str]) -> str:
    return m.group(1) if m.group(1) is not None else m.group(2)
