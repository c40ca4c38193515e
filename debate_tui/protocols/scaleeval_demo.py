"""ScaleEval as the offline demo model plays it (`SPEC.demo`): speakers that prefer the submission with fewer
defects (TextFacts), except the second speaker asked the initial question, who disagrees, so that an offline run
shows a discussion round and the panel converging.

Every speaker reads the same initial prompt, so the demo tells them apart the only way
a provider can: by how often it has been asked that prompt (the second of every three
disagrees). In a discussion round a speaker reads its name and its own initial
evaluation, and changes its answer when that one was not the fair verdict.
"""

from __future__ import annotations

import re
from collections import Counter

from debate_tui.llm.base import ChatRequest, DemoPart
from debate_tui.llm.demo_reading import Reading, TextFacts
from debate_tui.protocols.scaleeval import DISCUSSION_SYSTEM, INITIAL_REQUEST

_NAME = re.compile(re.escape(DISCUSSION_SYSTEM.split("{name}")[0]) + r"(.+?)\.")
_ASKED: Counter[str] = Counter()
"""How often each initial prompt was asked: which speaker this is, in the order they are asked."""


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


def _initial_verdict(record: str, name: str) -> str | None:
    """The last line of `name`'s initial evaluation in the discussion record."""
    found = re.search(rf"\[{re.escape(name)}'s Initial Evaluation\]: (.*?)(?=\n\n\[|\Z)", record, re.S)
    return found.group(1).strip().splitlines()[-1].strip() if found else None


def speaker(request: ChatRequest, facts: TextFacts) -> str:
    other = TextFacts.of(Reading.of(request.messages).text_b or "")
    fair = fair_verdict(facts, other)
    prompt = request.messages[-1]["content"] if request.messages else ""
    if INITIAL_REQUEST in prompt:
        _ASKED[prompt] += 1
        if _ASKED[prompt] % 3 == 2:
            verdict = "1" if fair != "1" else "2"
            return (f"At first sight Submission {verdict} reads better to me; its answer feels more direct.\n"
                    f"{verdict}")
        return f"{_why(fair, facts, other)}\n{fair}"
    name = _NAME.search(prompt)
    contrarian = name is not None and _initial_verdict(prompt, name.group(1)) not in (None, fair)
    change = "I change my original answer" if contrarian else "I keep my original answer"
    return f"Having reviewed the other speakers' evaluations, {change}. {_why(fair, facts, other)}\n{fair}"


PARTS: dict[str, DemoPart] = {"speaker": speaker}
"""Role -> the part the demo plays."""
