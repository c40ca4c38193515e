"""The score-parsing rules of two published papers, kept only to reproduce their figures.

Both read a score out of every one of the 20 samples a judge produced for a
row and average them. Neither is how debate-tui parses (a misread becomes
an explicit "unscored" there): G-Eval's rule reads "1. Groundedness: 0" as 1
and "- Coherence: 3" as 0, and Chiang & Lee's reads "2.5" as 2. On the
released GPT-3.5 Topical-Chat outputs (data/topical_chat/gpt35_geval) each
rule reproduces its paper's correlations to 3 decimals.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_LEADING_NUMBER = re.compile(r" ?([0-9.]+)")
_DIGIT = re.compile(r"[0-9]")


def geval_score(response: str) -> float:
    """G-Eval's rule (Liu et al. 2023, nlpyang/geval, meta_eval_summeval.py `parse_output`).

    The run of digits and dots at the very start of the string (one leading
    space allowed) as a float; anything else, including "1.2.3", counts as 0.
    """
    match = _LEADING_NUMBER.match(response)
    if match is None:
        return 0.0
    try:
        return float(match.group(1))
    except ValueError:
        return 0.0


def geval_mean(responses: Iterable[str]) -> float:
    """G-Eval's row score: the mean over all samples, failures included as 0."""
    scores = [geval_score(r) for r in responses]
    return sum(scores) / len(scores)


def chiang_lee_score(response: str) -> float | None:
    """Chiang & Lee's rule (2023, "A Closer Look into Automatic Evaluation Using LLMs",
    d223302/A-Closer-Look-To-LLM-Evaluation, all_eval.py `parse_output`).

    Lower-case, blank the scale mention "1-3", keep the text after the last
    "rating:" if any, then take the first number. Their regular expressions
    make that number a single digit: "2.5" reads 2, "1805" reads 1. None
    when there is no digit at all (their released code averages such a
    failure in as 0; the paper's rule ignores it: on the released outputs
    the two differ only in the 4th decimal of groundedness r, .310892 vs
    .311014).
    """
    text = response.lower().replace("1-3", " ")
    if "rating:" in text:
        text = text.split("rating:")[-1]
    match = _DIGIT.search(text)
    return float(match.group()) if match else None


def chiang_lee_mean(responses: Iterable[str]) -> float | None:
    """Chiang & Lee's row score: the mean of the parsed samples, failures ignored; None if all fail."""
    scores = [s for s in map(chiang_lee_score, responses) if s is not None]
    return sum(scores) / len(scores) if scores else None
