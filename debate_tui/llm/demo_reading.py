"""What the offline demo model reads from a request, as any model would: the texts, the scale and the criterion
(`Reading`), and what it notices about a text (`TextFacts`); and the few ways of scoring its parts share. Read by
the demo (`demo`) and by the parts each protocol declares beside itself (`protocols/<name>_demo.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from debate_tui import writing
from debate_tui.writing import is_cjk

if TYPE_CHECKING:
    from debate_tui.llm.base import ChatRequest

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class TextFacts:
    """What the demo notices about a text, and the score those findings justify."""

    words: int
    distinct_ratio: float
    repeated: tuple[str, ...]
    longest_sentence: str
    unit: str = "words"
    """What `words` counts: words, or characters in a CJK text."""

    @classmethod
    def of(cls, text: str) -> TextFacts:
        cjk = is_cjk(text)  # Chinese or Japanese: sentences end at 。！？ and length is in characters
        pieces = writing.sentences(text) if cjk else [s.strip() for s in _SENTENCE.findall(text)]
        sentences = [s for s in pieces if _WORD.search(s)]
        seen: set[str] = set()
        repeated: list[str] = []
        for sentence in sentences:
            key = " ".join(_WORD.findall(sentence.lower()))
            if key in seen and sentence not in repeated:
                repeated.append(sentence)
            seen.add(key)
        words = [w.lower() for w in _WORD.findall(text)]
        ratio = len(set(words)) / len(words) if words else 0.0
        longest = max(sentences, key=len, default="")
        if cjk:  # a "word" there is a run of characters between punctuation: count characters, skip the ratio
            return cls(writing.size(text)[0], 1.0, tuple(repeated), longest, "characters")
        return cls(len(words), ratio, tuple(repeated), longest)

    def defects(self) -> list[str]:
        found = [f'the sentence "{s}" is repeated' for s in self.repeated]
        if self.words < (20 if self.unit == "characters" else 8):
            found.append(f"it is very short ({self.words} {self.unit})")
        if self.words >= 8 and self.distinct_ratio < 0.45:
            found.append(f"its vocabulary is poor ({self.distinct_ratio:.0%} distinct words)")
        return found

    def fair_score(self, low: float, high: float) -> float:
        return max(low, high - len(self.defects()))


_BETWEEN = re.compile(r"between (-?\d+(?:\.\d+)?) and (-?\d+(?:\.\d+)?)")
_CRITERION = re.compile(r"Evaluation criterion: (.+?) \((-?[\d.]+)(?:-|\.\.)(-?[\d.]+)\)")
_TEXT = re.compile(r"\[Text to evaluate\]\n(.*?)\n\[End of text\]", re.S)
_PAIR = re.compile(r"\[Text 1\]\n(.*?)\n\[End of text 1\].*?\[Text 2\]\n(.*?)\n\[End of text 2\]", re.S)
_SUBMISSIONS = re.compile(r"\[Submission 1\]: (.*?)\n\n\[Submission 2\]: (.*?)\n\n\[Criteria\]", re.S)
@dataclass(frozen=True)
class Reading:
    """What the demo gathers from the messages, as a model would: the texts, the scale, the criterion."""

    text: str
    text_b: str | None
    low: float
    high: float
    criterion: str

    @classmethod
    def of(cls, messages: list[dict[str, str]]) -> Reading:
        asked = "\n\n".join(m["content"] for m in messages if m["role"] == "user")
        everything = "\n\n".join(m["content"] for m in messages)
        text, text_b = "", None
        if pair := (_SUBMISSIONS.search(everything) or _PAIR.search(everything)):
            text, text_b = pair.group(1), pair.group(2)
        elif single := _TEXT.search(everything):
            text = single.group(1)
        named = _CRITERION.search(everything)
        scales = [(named.group(2), named.group(3))] if named else _BETWEEN.findall(asked)[-1:]
        low, high = (float(scales[0][0]), float(scales[0][1])) if scales else (1.0, 5.0)
        return cls(text, text_b, low, high, named.group(1) if named else "quality")


LAST_SCORE = re.compile(r"Score:\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)
SCORES = re.compile(r"Scores:\s*(-?\d+(?:\.\d+)?)\s+(-?\d+(?:\.\d+)?)", re.IGNORECASE)


def scale(request: ChatRequest) -> tuple[float, float]:
    reading = Reading.of(request.messages)
    return reading.low, reading.high


def fmt(value: float) -> str:
    return f"{value:g}"


def pair_fair(facts: TextFacts, facts_b: TextFacts, low: float, high: float) -> tuple[float, float]:
    """Defects decide; between equally clean texts the clearly more detailed one keeps a point more."""
    a, b = facts.fair_score(low, high), facts_b.fair_score(low, high)
    if a == b and facts.words > 1.2 * facts_b.words:
        b = max(low, b - 1)
    elif a == b and facts_b.words > 1.2 * facts.words:
        a = max(low, a - 1)
    return a, b


def defect_or_none(facts: TextFacts) -> str:
    defects = facts.defects()
    return defects[0] if defects else "no defect stands out"
