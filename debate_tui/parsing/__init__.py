"""Reading what judges wrote: scores, verdicts, error reports and quoted spans.

Every reader returns None (or an unlocated span) rather than a guess. The
peers' parsers turned a failure into 0, the minimum, a tie or "submission 1",
and read list numbers or word counts as scores (GUIDE section 2); here a reply
that cannot be read is reported as such, so the protocol can re-ask.

One module per reader: scores (a score, a pair of scores), verdicts (a pairwise verdict, a Critic's
acceptance), refusals, quotes (locating a passage in the text), errors (MATEval-style reports), weighted
(G-Eval's probability-weighted score); own_words holds what every reader leaves out of the judge's words.
"""

from __future__ import annotations

from debate_tui.domain import ERROR_TYPES, Verdict
from debate_tui.parsing.errors import (
    ERROR_REPORT_FORMAT,
    answer_says,
    answered_types,
    normalize_error_type,
    normalize_qa,
    parse_error_report,
    readable_types,
)
from debate_tui.parsing.quotes import find_passages, locate, passage_words
from debate_tui.parsing.refusals import is_refusal
from debate_tui.parsing.scores import parse_pair_scores, parse_score
from debate_tui.parsing.verdicts import is_no_issue, parse_verdict
from debate_tui.parsing.weighted import weighted_score

Answer = float | tuple[float, float] | Verdict | bool | None


def read_answer(text: str, expect: str, low: float = 1, high: float = 5, criterion: str | None = None) -> Answer:
    """What a reply answers to what was asked: a score, a pair of scores, a verdict, or whether a
    Critic accepts ("no_issue"); None when it gives none, several, or refuses (numbers in a refusal
    are no answer: "I cannot score this: 2 texts are missing")."""
    if expect == "no_issue":
        return is_no_issue(text)
    if expect == "score":
        return parse_score(text, low, high, criterion=criterion)
    if expect == "pair":
        return parse_pair_scores(text, low=low, high=high)
    if expect == "verdict":
        return parse_verdict(text)
    return None


__all__ = [
    "ERROR_REPORT_FORMAT", "ERROR_TYPES", "Answer", "answer_says", "answered_types", "find_passages", "is_no_issue",
    "is_refusal", "locate", "normalize_error_type", "normalize_qa", "parse_error_report", "parse_pair_scores",
    "parse_score", "parse_verdict", "passage_words", "read_answer", "readable_types", "weighted_score",
]
