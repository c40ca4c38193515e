"""The offline demo model: deterministic, clearly labelled, and aware enough of the
text to show every feature without a provider.

It measures a few real defects of the judged text (repeated sentences, very
short text, poor vocabulary) and plays each role with them: a scorer that starts
generous and corrects itself when criticised, a critic that objects once and
then says NO ISSUE, evaluators that locate a repeated sentence, speakers that
disagree before converging. Replies begin with a "(demo)" label.

It is only a provider: it reads what any model reads, the messages. Who it is
asked to be, the text, the scale and the criterion come from the protocols'
prompts as written (`Reading`), never from a side channel.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Callable

from debate_tui.domain import Usage
from debate_tui.llm import demo_mateval, demo_scaleeval
from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback
from debate_tui.llm.demo_reading import Reading, TextFacts

LABEL = "(demo)"
_LAST_SCORE = re.compile(r"Score:\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)


def _scale(request: ChatRequest) -> tuple[float, float]:
    reading = Reading.of(request.messages)
    return reading.low, reading.high


def _last_score(request: ChatRequest) -> float | None:
    """The score under criticism: the last one in the latest message that has one (a moderator's remark, put
    after the prompt by the runner, holds none: the Critic still reads the score it was asked about)."""
    for message in reversed(request.messages):
        if found := _LAST_SCORE.findall(message["content"]):
            return float(found[-1])
    return None


def _was_criticised(request: ChatRequest) -> bool:
    return sum(1 for m in request.messages if m["role"] == "user") > 1


def _fmt(value: float) -> str:
    return f"{value:g}"


def _scorer(request: ChatRequest, facts: TextFacts) -> str:
    low, high = _scale(request)
    criterion = Reading.of(request.messages).criterion
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
    return (f"The objection names no concrete defect in the text, so I keep my assessment of {criterion}."
            f"\n\nScore: {_fmt(fair)}")


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
    if Reading.of(request.messages).text_b is not None:
        return _pair_judge(request, facts)
    defects = facts.defects()
    why = "; ".join(defects) if defects else "no defect stands out"
    return f"Assessment: {why}.\n\nScore: {_fmt(facts.fair_score(low, high))}"


_SCORES = re.compile(r"Scores:\s*(-?\d+(?:\.\d+)?)\s+(-?\d+(?:\.\d+)?)", re.IGNORECASE)
_HEARD = re.compile(r"\[Discussion history\](.*?)\[End of discussion history\]", re.DOTALL)
_TURN_TALK = re.compile(r"\[Discussion in turn \d+\](.*?)\[End of discussion in turn", re.DOTALL)
_SPEAKER = re.compile(r"^\[([^\]\n]+)\]:", re.MULTILINE)
_TALKER = re.compile(r"Now it's your time to talk, please make your talk short and clear, (.+?)!")
_LEANINGS: dict[str, tuple[int, str]] = {
    "general-public": (1, "As an ordinary reader"),
    "critic": (-1, "Looking hard at the wording"),
    "news-author": (0, "Checking it against the source"),
    "psychologist": (0, "Thinking of how a reader will take it"),
    "scientist": (0, "Weighing the evidence systematically"),
}
"""ChatEval personas: how far each leans from the fair score, and how it opens."""


def _pair_fair(facts: TextFacts, facts_b: TextFacts, low: float, high: float) -> tuple[float, float]:
    """Defects decide; between equally clean texts the clearly more detailed one keeps a point more."""
    a, b = facts.fair_score(low, high), facts_b.fair_score(low, high)
    if a == b and facts.words > 1.2 * facts_b.words:
        b = max(low, b - 1)
    elif a == b and facts_b.words > 1.2 * facts.words:
        a = max(low, a - 1)
    return a, b


def _pair_judge(request: ChatRequest, facts: TextFacts) -> str:
    low, high = _scale(request)
    facts_b = TextFacts.of(Reading.of(request.messages).text_b or "")
    a, b = _pair_fair(facts, facts_b, low, high)
    return f"Text 1: {_defect_or_none(facts)}. Text 2: {_defect_or_none(facts_b)}.\n\nScores: {_fmt(a)} {_fmt(b)}"


def _defect_or_none(facts: TextFacts) -> str:
    defects = facts.defects()
    return defects[0] if defects else "no defect stands out"


def _toward(own: float, heard: list[float], low: float, high: float) -> float:
    """One's own view averaged with every score heard, rounded towards the panel: a panel that talks converges."""
    if heard:
        panel = sum(heard) / len(heard)
        blended = (own + sum(heard)) / (len(heard) + 1)
        own = math.floor(blended + 0.5) if panel >= blended else math.ceil(blended - 0.5)
    return max(low, min(high, own))


def _referee(request: ChatRequest, facts: TextFacts) -> str:
    """A ChatEval referee: its persona's leaning on the fair score, drawn towards the scores it has heard."""
    low, high = _scale(request)
    lean, opening = _LEANINGS.get(_persona(request), (0, "Reading it closely"))
    found = _HEARD.search(request.messages[-1]["content"]) if request.messages else None
    heard = found.group(1) if found else ""
    text_b = Reading.of(request.messages).text_b
    if text_b is not None:
        facts_b = TextFacts.of(text_b)
        pairs = [(float(a), float(b)) for a, b in _SCORES.findall(heard)]
        fair = _pair_fair(facts, facts_b, low, high)
        shift = min(lean, high - max(fair)) if lean > 0 else max(lean, low - min(fair))  # never flips the order
        a, b = (_toward(f + shift, [p[i] for p in pairs], low, high) for i, f in enumerate(fair))
        echo = " Having heard the other referees, I move towards them." if pairs else ""
        return (f"{opening}: in text 1 {_defect_or_none(facts)}; in text 2 {_defect_or_none(facts_b)}.{echo}"
                f"\n\nScores: {_fmt(a)} {_fmt(b)}")
    scores = [float(v) for v in _LAST_SCORE.findall(heard)]
    own = _toward(facts.fair_score(low, high) + lean, scores, low, high)
    echo = " Having heard the other referees, I move towards them." if scores else ""
    return f"{opening}: {_defect_or_none(facts)}.{echo}\n\nScore: {_fmt(own)}"


def _persona(request: ChatRequest) -> str:
    """The referee's persona, from the name it is called by ("News Author 2" -> news-author)."""
    called = _TALKER.search(request.messages[-1]["content"]) if request.messages else None
    words = called.group(1).split() if called else []
    return "-".join(w.lower() for w in words if not w.isdigit())


def _chateval_summarizer(request: ChatRequest, facts: TextFacts) -> str:
    """Condenses a ChatEval turn to each referee's score, which is all the demo referees read back."""
    content = request.messages[-1]["content"] if request.messages else ""
    found = _TURN_TALK.search(content)
    parts = _SPEAKER.split(found.group(1) if found else content)[1:]
    positions: list[str] = []
    views: set[str] = set()
    for name, said in zip(parts[::2], parts[1::2], strict=True):  # split on one group: name, words, name, ...
        pair, single = _SCORES.findall(said), _LAST_SCORE.findall(said)
        if pair:
            a, b = pair[-1]
            positions.append(f"{name} gave Scores: {a} {b}")
            views.add("1" if float(a) > float(b) else "2" if float(b) > float(a) else "0")
        elif single:
            positions.append(f"{name} gave Score: {single[-1]}")
            views.add(_fmt(float(single[-1])))
        else:
            positions.append(f"{name} gave no score")
    agreement = ("They agree." if len(views) == 1 else "They do not agree yet.") if views else ""
    return f"In brief: {'; '.join(positions) or 'nobody spoke'}. {agreement}".strip()


Behaviour = Callable[[ChatRequest, TextFacts], str]
BEHAVIOURS: dict[str, Behaviour] = {
    "scorer": _scorer,
    "critic": _critic,
    "tie_breaker": _judge,
    "judge": _judge,
    "referee": _referee,
    "chateval/summarizer": _chateval_summarizer,
    **demo_mateval.BEHAVIOURS,
    **demo_scaleeval.BEHAVIOURS,
}
"""The part read from the messages (`ROLE_CLUES`) -> reply, every protocol's parts listed here."""


class DemoClient:
    """Answers like a model would, offline. `delay_s` paces the stream for people watching."""

    def __init__(self, delay_s: float = 0.0):
        self.delay_s = delay_s

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        reading = Reading.of(request.messages)
        text = f"{LABEL} {BEHAVIOURS.get(reading.role, _judge)(request, TextFacts.of(reading.text))}"
        if on_delta is not None:
            for chunk in re.findall(r"\S+\s*", text):
                if self.delay_s:
                    await asyncio.sleep(self.delay_s)
                on_delta(chunk)
        prompt_words = sum(len(m["content"].split()) for m in request.messages)
        usage = Usage(calls=1, prompt_tokens=prompt_words * 4 // 3, completion_tokens=len(text.split()) * 4 // 3)
        return Completion(text=text, usage=usage)
