"""The offline demo model: deterministic, clearly labelled, and aware enough of the
text to show every feature without a provider.

It measures a few real defects of the judged text (repeated sentences, very
short text, poor vocabulary) and plays each role with them: a scorer that starts
generous and corrects itself when criticised, a critic that objects once and
then says NO ISSUE, evaluators that locate a repeated sentence, speakers that
disagree before converging. Replies begin with a "(demo)" label.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass

from debate_tui.domain import Usage
from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback

DEMO_MODEL = "demo/offline"
LABEL = "(demo)"
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_WORD = re.compile(r"\w+")
_LAST_SCORE = re.compile(r"Score:\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)


@dataclass(frozen=True)
class TextFacts:
    """What the demo notices about a text, and the score those findings justify."""

    words: int
    distinct_ratio: float
    repeated: tuple[str, ...]
    longest_sentence: str

    @classmethod
    def of(cls, text: str) -> TextFacts:
        sentences = [s.strip() for s in _SENTENCE.findall(text) if _WORD.search(s)]
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
        return cls(len(words), ratio, tuple(repeated), longest)

    def defects(self) -> list[str]:
        found = [f'the sentence "{s}" is repeated' for s in self.repeated]
        if self.words < 8:
            found.append(f"it is very short ({self.words} words)")
        if self.words >= 8 and self.distinct_ratio < 0.45:
            found.append(f"its vocabulary is poor ({self.distinct_ratio:.0%} distinct words)")
        return found

    def fair_score(self, low: float, high: float) -> float:
        return max(low, high - len(self.defects()))


def _scale(request: ChatRequest) -> tuple[float, float]:
    return float(request.hint.get("low", 1)), float(request.hint.get("high", 5))


def _last_score(request: ChatRequest) -> float | None:
    found = _LAST_SCORE.findall(request.messages[-1]["content"]) if request.messages else []
    return float(found[-1]) if found else None


def _was_criticised(request: ChatRequest) -> bool:
    return sum(1 for m in request.messages if m["role"] == "user") > 1


def _fmt(value: float) -> str:
    return f"{value:g}"


def _scorer(request: ChatRequest, facts: TextFacts) -> str:
    low, high = _scale(request)
    criterion = request.hint.get("criterion", "quality")
    fair = facts.fair_score(low, high)
    defects = facts.defects()
    if not _was_criticised(request):
        generous = min(high, fair + 1) if defects else fair
        reason = "It reads smoothly overall and covers its subject." if not defects else (
            f"It reads smoothly overall, though {defects[0]}; that seems minor at first sight."
        )
        return f"Looking at {criterion}: {reason}\n\nScore: {_fmt(generous)}"
    if defects:
        return (
            f"The critic is right that {defects[0]}. That is a real flaw for {criterion}, "
            f"so I lower my score.\n\nScore: {_fmt(fair)}"
        )
    return f"The objection names no concrete defect in the text, so I keep my assessment of {criterion}.\n\nScore: {_fmt(fair)}"


def _critic(request: ChatRequest, facts: TextFacts) -> str:
    low, high = _scale(request)
    score = _last_score(request)
    fair = facts.fair_score(low, high)
    defects = facts.defects()
    if score is not None and score > fair and defects:
        return (
            f"I disagree with a score of {_fmt(score)}. Look closer: {defects[0]}. "
            "A careful reader notices it at once, and the rationale ignores it."
        )
    if not _was_criticised(request) and not defects and facts.longest_sentence:
        return (
            f'Is the score not too kind? The sentence "{facts.longest_sentence}" is long; '
            "could it confuse a reader?"
        )
    return "NO ISSUE"


def _judge(request: ChatRequest, facts: TextFacts) -> str:
    low, high = _scale(request)
    defects = facts.defects()
    why = "; ".join(defects) if defects else "no defect stands out"
    return f"Assessment: {why}.\n\nScore: {_fmt(facts.fair_score(low, high))}"


Behaviour = Callable[[ChatRequest, TextFacts], str]
BEHAVIOURS: dict[str, Behaviour] = {
    "scorer": _scorer,
    "critic": _critic,
    "tie_breaker": _judge,
    "judge": _judge,
}
"""Role -> reply. Protocols register the roles they add (see `register_behaviour`)."""


def register_behaviour(role: str, behaviour: Behaviour) -> None:
    BEHAVIOURS[role] = behaviour


class DemoClient:
    """Answers like a model would, offline. `delay_s` paces the stream for people watching."""

    def __init__(self, delay_s: float = 0.0):
        self.delay_s = delay_s

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        facts = TextFacts.of(request.hint.get("text", ""))
        behaviour = BEHAVIOURS.get(request.hint.get("role", "judge"), _judge)
        text = f"{LABEL} {behaviour(request, facts)}"
        if on_delta is not None:
            for chunk in re.findall(r"\S+\s*", text):
                if self.delay_s:
                    await asyncio.sleep(self.delay_s)
                on_delta(chunk)
        prompt_words = sum(len(m["content"].split()) for m in request.messages)
        usage = Usage(calls=1, prompt_tokens=prompt_words * 4 // 3, completion_tokens=len(text.split()) * 4 // 3)
        return Completion(text=text, usage=usage)
