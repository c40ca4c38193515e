"""Telling a refusal or an abstention from an answer, so the protocol can re-ask."""

from __future__ import annotations

import re

from debate_tui.parsing.own_words import unquoted

_REFUSAL = re.compile(
    r"^\W*(?:unfortunately,?\s*)?(?:i'?m sorry|i am sorry|i apologi[sz]e|sorry)\b[^.\n]{0,40}?"
    r"\b(?:can(?:not|'t|\s+not)|unable|not able|won't|will not)\b"
    r"|^\W*(?:\w+,\s*)?as an ai(?: language model| assistant| model)?,? "
    r"i (?:cannot|can't|can not|am (?:not able|unable)"
    r"|do not|don't)\b"
    r"|^\W*(?:unfortunately,?\s*)?i (?:cannot|can't|can not|am unable to|am not able to|won't|will not|must decline)"
    # "I cannot agree with this score" is a Critic's objection, not a refusal
    r"(?:\s+(?!(?:agree|accept|support|justify|endorse|share|see|find)\b)\w+){0,3}?"
    r"\s+(?:evaluate|rate|score|judge|assess|provide|help|comply|answer|do|complete|fulfill?|give)\b"
    # "Unfortunately I do not have enough context to evaluate the submissions" (a judge that abstains)
    r"|^\W*(?:unfortunately,?\s*)?i (?:do not|don't|did not|didn't) have (?:enough|sufficient|the full|full|access)\b",
    re.I,
)
_CONNECTOR = re.compile(r"\b(?:but|however|that said|nevertheless|nonetheless)\b", re.I)
_ANSWER_FOLLOWS = re.compile(  # "..., but I would rate it 3", "However, I can provide an evaluation"
    r"[^.\n]{0,60}?\b(?:rate|rating|score|scoring|give|giving|grade|evaluat(?:e|ion)|assess(?:ment)?|judge"
    r"|judg(?:e)?ment|verdict|answer|choose|prefer)", re.I)
_ABSTAINS = re.compile(  # "I still believe abstaining is the most ethical choice", anywhere in the reply
    r"\b(?:I|me)\b[^.\n]{0,40}\b(?:abstain(?:ing)?|refrain(?:ing)? from (?:choosing|evaluating|selecting|judging"
    r"|making a (?:choice|judg(?:e)?ment|decision)))\b", re.I)
_OPENING = 300
"""A refusal says so at the start; "I cannot ..." deep in a reply is part of an argument."""


def is_refusal(text: str) -> bool:
    """An empty reply or a refusal, so the protocol can re-ask; "I cannot ..., but I'd rate it 3" is not one.
    Quoted passages (a submission that itself declines) are not the judge's words."""
    text = unquoted(text.replace("’", "'")).lstrip()
    m = _REFUSAL.search(text[:_OPENING])
    if not text.strip() or _ABSTAINS.search(text):
        return True
    if m is None:
        return False
    connector = _CONNECTOR.search(text, m.end())  # the refusal's own "but" decides
    return connector is None or not _ANSWER_FOLLOWS.match(text, connector.end())
