"""The offline demo model: deterministic, clearly labelled, and aware enough of the
text to show every feature without a provider.

It measures a few real defects of the judged text (repeated sentences, very
short text, poor vocabulary) and plays each agent's part with them. Who it plays
is declared once, beside each protocol (`protocols/<name>_demo.py`, listed in the
spec's `demo`), and handed to it with the request (`ChatRequest.demo`); the text,
the scale and the criterion it reads from the messages, as any model would
(`Reading`). A request with no part (a history condenser, a probe) it judges
plainly. Replies begin with a "(demo)" label.
"""

from __future__ import annotations

import asyncio
import re

from debate_tui.domain import Usage
from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback
from debate_tui.llm.demo_reading import Reading, TextFacts, defect_or_none, fmt, pair_fair, scale

LABEL = "(demo)"


def judge(request: ChatRequest, facts: TextFacts) -> str:
    """The plain judge: the fair score of the text (of each text, for a pair) and its defects."""
    low, high = scale(request)
    text_b = Reading.of(request.messages).text_b
    if text_b is not None:
        facts_b = TextFacts.of(text_b)
        a, b = pair_fair(facts, facts_b, low, high)
        return f"Text 1: {defect_or_none(facts)}. Text 2: {defect_or_none(facts_b)}.\n\nScores: {fmt(a)} {fmt(b)}"
    defects = facts.defects()
    why = "; ".join(defects) if defects else "no defect stands out"
    return f"Assessment: {why}.\n\nScore: {fmt(facts.fair_score(low, high))}"


class DemoClient:
    """Answers like a model would, offline. `delay_s` paces the stream for people watching."""

    def __init__(self, delay_s: float = 0.0):
        self.delay_s = delay_s

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        part = request.demo or judge
        text = f"{LABEL} {part(request, TextFacts.of(Reading.of(request.messages).text))}"
        if on_delta is not None:
            for chunk in re.findall(r"\S+\s*", text):
                if self.delay_s:
                    await asyncio.sleep(self.delay_s)
                on_delta(chunk)
        prompt_words = sum(len(m["content"].split()) for m in request.messages)
        usage = Usage(calls=1, prompt_tokens=prompt_words * 4 // 3, completion_tokens=len(text.split()) * 4 // 3)
        return Completion(text=text, usage=usage)
