"""ChatEval as the offline demo model plays it (`SPEC.demo`): referees that lean by persona and move towards the
scores they have heard, and a summarizer that condenses a turn to each referee's score."""

from __future__ import annotations

import math
import re

from debate_tui.llm.base import ChatRequest, DemoPart
from debate_tui.llm.demo_reading import (
    LAST_SCORE,
    SCORES,
    Reading,
    TextFacts,
    defect_or_none,
    fmt,
    pair_fair,
    scale,
)
from debate_tui.protocols.chateval import HISTORY_END, HISTORY_START

_HEARD = re.compile(rf"{re.escape(HISTORY_START)}(.*?){re.escape(HISTORY_END)}", re.DOTALL)
_TURN_TALK = re.compile(r"\[Discussion in turn \d+\](.*?)\[End of discussion in turn", re.DOTALL)
_SPEAKER = re.compile(r"^\[([^\]\n]+)\]:", re.MULTILINE)
_TALKER = re.compile(r"please make your talk short and clear, (.+?)!")
_LEANINGS: dict[str, tuple[int, str]] = {
    "general-public": (1, "As an ordinary reader"),
    "critic": (-1, "Looking hard at the wording"),
    "news-author": (0, "Checking it against the source"),
    "psychologist": (0, "Thinking of how a reader will take it"),
    "scientist": (0, "Weighing the evidence systematically"),
}
"""ChatEval personas: how far each leans from the fair score, and how it opens."""


def _toward(own: float, heard: list[float], low: float, high: float) -> float:
    """One's own view averaged with every score heard, rounded towards the panel: a panel that talks converges."""
    if heard:
        panel = sum(heard) / len(heard)
        blended = (own + sum(heard)) / (len(heard) + 1)
        own = math.floor(blended + 0.5) if panel >= blended else math.ceil(blended - 0.5)
    return max(low, min(high, own))


def referee(request: ChatRequest, facts: TextFacts) -> str:
    """A referee: its persona's leaning on the fair score, drawn towards the scores it has heard."""
    low, high = scale(request)
    lean, opening = _LEANINGS.get(_persona(request), (0, "Reading it closely"))
    found = _HEARD.search(request.messages[-1]["content"]) if request.messages else None
    heard = found.group(1) if found else ""
    text_b = Reading.of(request.messages).text_b
    if text_b is not None:
        facts_b = TextFacts.of(text_b)
        pairs = [(float(a), float(b)) for a, b in SCORES.findall(heard)]
        fair = pair_fair(facts, facts_b, low, high)
        shift = min(lean, high - max(fair)) if lean > 0 else max(lean, low - min(fair))  # never flips the order
        a, b = (_toward(f + shift, [p[i] for p in pairs], low, high) for i, f in enumerate(fair))
        echo = " Having heard the other referees, I move towards them." if pairs else ""
        return (f"{opening}: in text 1 {defect_or_none(facts)}; in text 2 {defect_or_none(facts_b)}.{echo}"
                f"\n\nScores: {fmt(a)} {fmt(b)}")
    scores = [float(v) for v in LAST_SCORE.findall(heard)]
    own = _toward(facts.fair_score(low, high) + lean, scores, low, high)
    echo = " Having heard the other referees, I move towards them." if scores else ""
    return f"{opening}: {defect_or_none(facts)}.{echo}\n\nScore: {fmt(own)}"


def _persona(request: ChatRequest) -> str:
    """The referee's persona, from the name it is called by ("News Author 2" -> news-author)."""
    called = _TALKER.search(request.messages[-1]["content"]) if request.messages else None
    words = called.group(1).split() if called else []
    return "-".join(w.lower() for w in words if not w.isdigit())


def summarizer(request: ChatRequest, facts: TextFacts) -> str:
    """Condenses a turn to each referee's score, which is all the demo referees read back."""
    content = request.messages[-1]["content"] if request.messages else ""
    found = _TURN_TALK.search(content)
    parts = _SPEAKER.split(found.group(1) if found else content)[1:]
    positions: list[str] = []
    views: set[str] = set()
    for name, said in zip(parts[::2], parts[1::2], strict=True):  # split on one group: name, words, name, ...
        pair, single = SCORES.findall(said), LAST_SCORE.findall(said)
        if pair:
            a, b = pair[-1]
            positions.append(f"{name} gave Scores: {a} {b}")
            views.add("1" if float(a) > float(b) else "2" if float(b) > float(a) else "0")
        elif single:
            positions.append(f"{name} gave Score: {single[-1]}")
            views.add(fmt(float(single[-1])))
        else:
            positions.append(f"{name} gave no score")
    agreement = ("They agree." if len(views) == 1 else "They do not agree yet.") if views else ""
    return f"In brief: {'; '.join(positions) or 'nobody spoke'}. {agreement}".strip()


PARTS: dict[str, DemoPart] = {"referee": referee, "summarizer": summarizer}
"""Role -> the part the demo plays."""
