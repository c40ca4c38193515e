"""Text by writing system: where sentences end, how long a text is, which language a prompt should be in.

Chinese and Japanese put no spaces between words and end sentences with 。！？
(closing quotes may follow, no space); counting "words" by spaces would call a
whole Chinese story one word. So a text whose letters are mostly CJK is sized
in characters and split at those marks; every other script (Latin, Cyrillic,
Arabic, Hebrew, ...) is sized in words and split at . ! ? (and Arabic's ؟ and
۔) followed by a space. Right-to-left text needs nothing special here: offsets
and line:column count characters in logical order, as the file stores them.
"""

from __future__ import annotations

import re
from typing import Literal

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
"""Kana, CJK ideographs (with extension A and compatibility forms) and Hangul."""
_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LETTER = re.compile(r"[^\W\d_]")
_SENTENCE_END = re.compile(
    r"[.!?؟۔]+[\"'”’)\]»]*(?=\s)"  # a space-separated script: the mark, its closing quotes, then a space
    r"|[。！？…]+[”’」』）)\]\"']*"  # CJK: the mark and its closing quotes end the sentence, no space needed
)

Unit = Literal["character", "word"]


def is_cjk(text: str) -> bool:
    """Whether most of the text's letters are Chinese, Japanese or Korean characters."""
    letters = len(_LETTER.findall(text))
    return letters > 0 and len(_CJK.findall(text)) * 2 > letters


def is_cjk_char(ch: str) -> bool:
    return bool(_CJK.match(ch))


def size(text: str) -> tuple[int, Unit]:
    """The text's length as a reader counts it: characters for CJK text (spaces aside), words otherwise."""
    if is_cjk(text):
        return sum(1 for ch in text if not ch.isspace()), "character"
    return len(text.split()), "word"


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Each sentence's [start, end) offsets, surrounding spaces left out; line breaks end sentences too."""
    spans: list[tuple[int, int]] = []
    for line in re.finditer(r"[^\n]+", text):
        start = line.start()
        for end in (*(m.end() for m in _SENTENCE_END.finditer(text, line.start(), line.end())), line.end()):
            piece = text[start:end]
            if piece.strip():
                lead = len(piece) - len(piece.lstrip())
                spans.append((start + lead, start + len(piece.rstrip())))
            start = end
    return spans


def sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in sentence_spans(text)]


def sentence_number(text: str, offset: int) -> int:
    """1-based number of the sentence holding `offset` (the last one before it, when between two)."""
    return max(1, sum(1 for start, _ in sentence_spans(text) if start <= offset))


def prompt_language(text: str) -> Literal["en", "zh"]:
    """The language of MATEval's prompts for `text`: Chinese for Chinese text (Han, no kana), else English."""
    han, kana = len(_HAN.findall(text)), len(_KANA.findall(text))
    return "zh" if is_cjk(text) and han > 0 and kana * 10 < han else "en"
