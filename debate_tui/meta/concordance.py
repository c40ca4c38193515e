"""The judge against the person, over the decisions taken so far: agreement, Cohen's kappa, the confusion.

"Agree" is `domain.agrees` (the same verdict, or scores within the tolerance).
Kappa is Cohen's, over the answers as categories (a verdict, or a score's value;
a missing answer is its own category "none"): (p_o - p_e) / (1 - p_e), with p_o
the share of identical answers and p_e the share expected from each side's own
frequencies; undefined (None) when both sides always give one same answer.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from debate_tui.domain import AGREE_TOLERANCE, agrees

Answer = float | str | None
Pair = tuple[Answer, Answer]
"""(the judge's answer, the person's)."""


def category(answer: Answer) -> str:
    if answer is None:
        return "none"
    return answer if isinstance(answer, str) else f"{float(answer):g}"


@dataclass(frozen=True)
class Concordance:
    n: int
    agreement: float | None
    kappa: float | None
    confusion: dict[tuple[str, str], int]
    """(judge's category, person's) -> count."""


def cohen_kappa(pairs: list[tuple[str, str]]) -> float | None:
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    judge, person = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(judge[c] * person[c] for c in judge) / (n * n)
    return None if expected >= 1 - 1e-12 else (observed - expected) / (1 - expected)


def concordance(pairs: list[Pair], tolerance: float = AGREE_TOLERANCE) -> Concordance:
    categories = [(category(judge), category(person)) for judge, person in pairs]
    agreed = sum(agrees(judge, person, tolerance) for judge, person in pairs)
    return Concordance(len(pairs), agreed / len(pairs) if pairs else None, cohen_kappa(categories),
                       dict(Counter(categories)))
