"""What the offline demo model reads from a request, as any model would: the part it is asked to play, the
texts, the scale and the criterion (`Reading`), and what it notices about a text (`TextFacts`). Shared by
the demo's roles (`demo`, `demo_mateval`, `demo_scaleeval`), which import it and nothing of each other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from debate_tui import writing
from debate_tui.writing import is_cjk

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
ROLE_CLUES: tuple[tuple[str, str, str], ...] = (
    ("system", "You are the Scorer", "scorer"),
    ("system", "You are the Tie-Breaker", "tie_breaker"),
    ("system", "You are the Feedback agent", "feedback"),
    ("system", "You are the Summarizer. After the evaluators' discussion", "mateval/summarizer"),
    ("system", "evaluators who discuss the quality of a text together", "evaluator"),
    ("system", "You are evaluating two submissions", "speaker"),
    ("user", "Criticise the score if it is not justified", "critic"),
    ("user", "Summarize this turn for the referees", "chateval/summarizer"),
    ("user", "Now it's your time to talk", "referee"),
    ("system", "你是评估小组的反馈者", "feedback"),  # MATEval's Chinese prompts
    ("system", "你是总结者", "mateval/summarizer"),
    ("system", "共同讨论文本质量的评估者", "evaluator"),
)
"""(message role, words of the protocol's prompt, the part the demo plays); anything else it judges plainly."""


@dataclass(frozen=True)
class Reading:
    """What the demo gathers from the messages, as a model would: its part, the texts, the scale."""

    role: str
    text: str
    text_b: str | None
    low: float
    high: float
    criterion: str

    @classmethod
    def of(cls, messages: list[dict[str, str]]) -> Reading:
        said = {kind: "\n\n".join(m["content"] for m in messages if m["role"] == kind) for kind in ("system", "user")}
        everything = "\n\n".join(m["content"] for m in messages)
        role = next((part for kind, clue, part in ROLE_CLUES if clue in said[kind]), "judge")
        text, text_b = "", None
        if pair := (_SUBMISSIONS.search(everything) or _PAIR.search(everything)):
            text, text_b = pair.group(1), pair.group(2)
        elif single := _TEXT.search(everything):
            text = single.group(1)
        named = _CRITERION.search(everything)
        scales = [(named.group(2), named.group(3))] if named else _BETWEEN.findall(said["user"])[-1:]
        low, high = (float(scales[0][0]), float(scales[0][1])) if scales else (1.0, 5.0)
        return cls(role, text, text_b, low, high, named.group(1) if named else "quality")
