"""The probability a judge's own log-probabilities put on its score: the single judge's confidence.

The score token and its in-scale alternatives, normalised over themselves, are
G-Eval's weighting (`parsing.score_probabilities`, which the weighted score also
reads); the mass is their share within AGREE_TOLERANCE of the score: 1.0 when the
judge had no doubt, 0.4 when it put 60% on another score.
"""

from __future__ import annotations

from collections.abc import Sequence

from debate_tui.domain import AGREE_TOLERANCE
from debate_tui.llm.base import TokenLogprobs
from debate_tui.parsing.weighted import score_probabilities


def score_mass(tokens: Sequence[TokenLogprobs], low: float, high: float, score: float) -> float | None:
    """The normalised probability of the in-scale values within AGREE_TOLERANCE of `score` at its token;
    None when the score is no whole number or its token is not found."""
    if score != int(score):
        return None
    probabilities = score_probabilities(tokens, low, high, score)
    if not probabilities:
        return None
    return sum(p for value, p in probabilities.items() if abs(value - score) <= AGREE_TOLERANCE)
