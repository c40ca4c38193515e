"""The demo model's ScaleEval speakers: they prefer the submission with fewer defects
(TextFacts), except the last speaker of the initial round, who disagrees, so that an
offline run shows a discussion round and the panel converging.

The protocol puts the texts in the order the speakers see them into the hint
(`text` is Submission 1), and each speaker's place in the speaking order
(`position`, out of `speakers`).
"""

from __future__ import annotations

from debate_tui.llm.base import ChatRequest
from debate_tui.llm.demo import TextFacts, register_behaviour


def fair_verdict(first: TextFacts, second: TextFacts) -> str:
    """The submission with fewer defects, "0" when they have as many."""
    a, b = len(first.defects()), len(second.defects())
    return "1" if a < b else "2" if b < a else "0"


def _why(verdict: str, first: TextFacts, second: TextFacts) -> str:
    if verdict == "0":
        return "Both submissions are about equally good: I see as many defects in one as in the other."
    better, worse = (first, second) if verdict == "1" else (second, first)
    flaws = "; ".join(worse.defects()) or "it is weaker"
    return (f"Submission {verdict} is the stronger one: in the other, {flaws}, while Submission {verdict} "
            f"has {len(better.defects())} such defect(s).")


def speaker(request: ChatRequest, facts: TextFacts) -> str:
    other = TextFacts.of(request.hint.get("text_b") or "")
    fair = fair_verdict(facts, other)
    contrarian = request.hint.get("position") == request.hint.get("speakers", 0) - 1
    if request.hint.get("round", 0) == 0:
        if contrarian:
            verdict = "1" if fair != "1" else "2"
            return (f"At first sight Submission {verdict} reads better to me; its answer feels more direct.\n"
                    f"{verdict}")
        return f"{_why(fair, facts, other)}\n{fair}"
    change = "I change my original answer" if contrarian else "I keep my original answer"
    return f"Having reviewed the other speakers' evaluations, {change}. {_why(fair, facts, other)}\n{fair}"


def register() -> None:
    register_behaviour("speaker", speaker)
