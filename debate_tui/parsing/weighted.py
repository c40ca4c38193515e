"""G-Eval's probability-weighted score, from the log-probabilities of the score token."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from itertools import accumulate

from debate_tui.llm.base import TokenLogprobs

_SCORE_LABEL = re.compile(r"\bscore\b[\s*_]*[:：=]", re.I)
_AROUND_NUMBER = " \t\r\n*_`'\"[]():：="
_INTEGER = re.compile(r"-?\d+")
_CONTINUED = re.compile(r"[.,]?\d")
_CONTINUES = re.compile(r"[\d-][.,]?$")


def _token_value(token: str) -> int | None:
    """The integer a token spells, spaces and markup around it ignored (" 3", "**3"), else None."""
    core = token.strip(_AROUND_NUMBER)
    return int(core) if _INTEGER.fullmatch(core) else None


def _score_position(tokens: Sequence[TokenLogprobs], low: float, high: float, score: float | None) -> int | None:
    """Which token is the score: the first one after the last "Score:" label, if it is an in-scale
    number; else the last token spelling the parsed `score`. A token that is only part of a number
    ("1" of "10", "3" of "3.5", a sign) is none: its alternatives are not scores."""
    text = "".join(t.token for t in tokens)
    ends = list(accumulate(len(t.token) for t in tokens))

    def whole(i: int) -> bool:
        start = ends[i] - len(tokens[i].token)
        return not _CONTINUED.match(text, ends[i]) and not _CONTINUES.search(text[:start])

    labels = list(_SCORE_LABEL.finditer(text))
    if labels:
        after = labels[-1].end()
        for i, token in enumerate(tokens):
            if ends[i] <= after or not token.token.strip(_AROUND_NUMBER):
                continue
            value = _token_value(token.token)
            if value is not None and low <= value <= high and whole(i):
                return i
            break
    if score is not None:
        for i in reversed(range(len(tokens))):
            if _token_value(tokens[i].token) == score and whole(i):
                return i
    return None


def score_probabilities(tokens: Sequence[TokenLogprobs], low: float, high: float,
                        score: float | None = None) -> dict[int, float] | None:
    """The in-scale values among the score token's top alternatives, each with its probability normalised over
    those candidates (what the top-k leaves out, and tokens that are no in-scale number, are not counted);
    spellings of one value (" 3", "3") add up. None when the score token cannot be found or has no in-scale
    candidate. The one weighting both G-Eval's weighted score and a judge's confidence read.

    `score` is the score read from the text, used to find its token when no "Score:" label precedes it.
    """
    at = _score_position(tokens, low, high, score)
    if at is None:
        return None
    weights: dict[int, float] = {}
    for token, logprob in tokens[at].top.items():
        value = _token_value(token)
        if value is not None and low <= value <= high:
            weights[value] = weights.get(value, 0.0) + math.exp(logprob)
    total = sum(weights.values())
    return {value: p / total for value, p in weights.items()} if total > 0 else None


def weighted_score(tokens: Sequence[TokenLogprobs], low: float, high: float,
                   score: float | None = None) -> float | None:
    """G-Eval's probability-weighted score: sum of p(v) * v over `score_probabilities`; None without them."""
    probabilities = score_probabilities(tokens, low, high, score)
    return sum(value * p for value, p in probabilities.items()) if probabilities else None
