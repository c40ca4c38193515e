"""The probability a judge's own log-probabilities put on its score: the single judge's confidence.

The score token is the last token that spells the parsed score as a whole number
(a token followed by more digits or a decimal part is only part of a number).
Its in-scale alternatives, normalised over themselves as G-Eval's weighted score
does, give the mass within AGREE_TOLERANCE of the score: 1.0 when the judge had
no doubt, 0.4 when it put 60% on another score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from debate_tui.domain import AGREE_TOLERANCE
from debate_tui.llm.base import TokenLogprobs

_INTEGER = re.compile(r"\s*\**\s*(-?\d+)\s*\**\s*")
_MORE_NUMBER = re.compile(r"^(?:\d|\.\d)")


def _value(token: str) -> int | None:
    match = _INTEGER.fullmatch(token)
    return int(match.group(1)) if match else None


def score_mass(tokens: Sequence[TokenLogprobs], low: float, high: float, score: float) -> float | None:
    """The normalised probability of the in-scale values within AGREE_TOLERANCE of `score` at its token;
    None when the score is no whole number or its token is not found."""
    if score != int(score):
        return None
    for i in reversed(range(len(tokens))):
        following = tokens[i + 1].token if i + 1 < len(tokens) else ""
        if _value(tokens[i].token) != score or _MORE_NUMBER.match(following):
            continue
        weights: dict[int, float] = {}
        for token, logprob in tokens[i].top.items():
            value = _value(token)
            if value is not None and low <= value <= high:
                weights[value] = weights.get(value, 0.0) + math.exp(logprob)
        total = sum(weights.values())
        near = sum(p for value, p in weights.items() if abs(value - score) <= AGREE_TOLERANCE)
        return near / total if total > 0 else None
    return None
