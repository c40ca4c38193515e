"""DEBATE as the offline demo model plays it (`SPEC.demo`): a Scorer that starts generous and corrects itself when
criticised, a Critic that objects once and then says NO ISSUE, a Tie-Breaker that judges plainly."""

from __future__ import annotations

from debate_tui.llm.base import ChatRequest, DemoPart
from debate_tui.llm.demo import judge
from debate_tui.llm.demo_reading import LAST_SCORE, Reading, TextFacts, fmt, scale


def _last_score(request: ChatRequest) -> float | None:
    """The score under criticism: the last one in the latest message that has one (a moderator's remark, put
    after the prompt by the runner, holds none: the Critic still reads the score it was asked about)."""
    for message in reversed(request.messages):
        if found := LAST_SCORE.findall(message["content"]):
            return float(found[-1])
    return None


def _was_criticised(request: ChatRequest) -> bool:
    return sum(1 for m in request.messages if m["role"] == "user") > 1


def scorer(request: ChatRequest, facts: TextFacts) -> str:
    low, high = scale(request)
    criterion = Reading.of(request.messages).criterion
    fair = facts.fair_score(low, high)
    defects = facts.defects()
    if not _was_criticised(request):
        generous = min(high, fair + 1) if defects else fair
        reason = "It reads smoothly overall and covers its subject." if not defects else (
            f"It reads smoothly overall, though {defects[0]}; that seems minor at first sight."
        )
        return f"Looking at {criterion}: {reason}\n\nScore: {fmt(generous)}"
    if defects:
        return (
            f"The critic is right that {defects[0]}. That is a real flaw for {criterion}, "
            f"so I lower my score.\n\nScore: {fmt(fair)}"
        )
    return (f"The objection names no concrete defect in the text, so I keep my assessment of {criterion}."
            f"\n\nScore: {fmt(fair)}")


def critic(request: ChatRequest, facts: TextFacts) -> str:
    low, high = scale(request)
    score = _last_score(request)
    fair = facts.fair_score(low, high)
    defects = facts.defects()
    if score is not None and score > fair and defects:
        return (
            f"I disagree with a score of {fmt(score)}. Look closer: {defects[0]}. "
            "A careful reader notices it at once, and the rationale ignores it."
        )
    if not _was_criticised(request) and not defects and facts.longest_sentence:
        return (
            f'Is the score not too kind? The sentence "{facts.longest_sentence}" is long; '
            "could it confuse a reader?"
        )
    return "NO ISSUE"


PARTS: dict[str, DemoPart] = {"scorer": scorer, "critic": critic, "tie_breaker": judge}
"""Role -> the part the demo plays."""
