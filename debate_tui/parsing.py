"""Reading what judges wrote: scores, verdicts, error reports and quoted spans.

Every reader returns None (or an unlocated span) rather than a guess. The
peers' parsers turned a failure into 0, the minimum, a tie or "submission 1",
and read list numbers or word counts as scores (GUIDE section 2); here a reply
that cannot be read is reported as such, so the protocol can re-ask.
"""

from __future__ import annotations

import math
import re
import unicodedata
from bisect import bisect_left
from collections.abc import Sequence
from functools import lru_cache
from itertools import accumulate

from debate_tui.domain import ERROR_TYPES, ErrorSpan, Verdict
from debate_tui.llm.base import TokenLogprobs
from debate_tui.writing import is_cjk_char, sentences

_N = r"-?\d+(?:\.\d+)?"
_NUMBER_WORDS = {w: float(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten".split())}
_NUMBER = re.compile(r"(?<![\w.])(?:" + _N + r"(?!\w|\.\d)|(?:" + "|".join(_NUMBER_WORDS) + r")\b)", re.I)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"

# Context around a number, read on a short window before (`pre`) and after (`post`).
_NOT_A_SCORE_PRE = re.compile(
    r"(?:[$£€#]\s*|\d\s*[:,]|\w[-–]|/\s*|\bout\s+of\s*|\bscale\s+(?:of|from)\s*"  # money, 9:30, 10,000, COVID-19
    r"|\d\s*(?:\([^)\n]{0,30}\)\s*)?(?:,|[-–~]|\bto|\bor|\band|,\s*(?:or|and))\s*"  # second of "1, 2, or 3", "1-3"
    r"|\b(?:step|item|point|question|turn|speaker|round|part|line|example|assistant|submission|response|answer"
    r"|sentence|paragraph|version|number|no\.|section|page|option|criterion|criteria|aspect|metric|dimension"
    r"|category|rule|task|text|summary|document|story|chapter|figure|table|iteration|agent|evaluator|reviewer"
    r"|judge|critic|referee|candidate|case|claim|issue|error|reason|argument|factor|note|top|day|week|year"
    r"|" + _MONTH + r")\s*#?"
    r"|\b(?:steps?|issues?|errors?|mistakes?|problems?|reasons?|points?|examples?|words?|length|count|number|date"
    r"|time|years?|criteri(?:on|a)|questions?|scale|range|notes?|page|lines?|paragraphs?|sentences?|iterations?"
    r"|rounds?|turns?|version)\s*[:：=]\s*[\[(]*)$",  # "Errors: 2" counts, it does not score
    re.I,
)
_NOT_A_SCORE_POST = re.compile(
    r"^(?:[:,]\d|\s*%|-[A-Za-z]"  # 9:30, 10,000, 40%, 21-year-old
    r"|\s*(?:\([^)\n]{0,30}\)\s*)?(?:,|[-–~]|to\b|or\b|and\b)\s*(?:or\s+|and\s+)?-?\d"  # first of a list or range
    r"|\s*(?:\([^)\n]*\)\s*)?(?:means|indicates|signifies|represents|corresponds|stands\s+for)\b"  # rubric echo
    r"|\s*=\s*[A-Za-z\"'(]"  # "1 = poor"
    r"|\s*(?:or|and)\s+(?:higher|lower|more|less|above|below|better|worse|greater|up|over)\b|\+"  # a threshold
    r"|\s*\((?:the\s+)?(?:highest|lowest|best|worst|max(?:imum)?|min(?:imum)?)\b"  # a scale's end: "5 (highest)"
    r"|\s*(?:a\.?m\.?|p\.?m\.?|o'?clock)(?!\w)|\s+" + _MONTH + r"(?!\w)"  # times and dates
    r"|\s*(?:words?|sentences?|characters?|chars|letters?|lines?|paragraphs?|tokens?|years?|months?"
    r"|weeks?|days?|hours?|minutes?|seconds?|times|people|persons?|percent|per\s*cent|items?|steps?"
    r"|examples?|questions?|errors?|mistakes?|issues?|reasons?|facts?|criteri(?:on|a)|aspects?|of\b)\b)",
    re.I,
)
_POINTS_POST = re.compile(r"^\s*(?:points?|pts?)\b", re.I)
_STARS_POST = re.compile(r"^\s*stars?\b", re.I)
_FRACTION_POST = re.compile(r"^\s*(?:/|out\s+of)\s*(" + _N + r"|" + "|".join(_NUMBER_WORDS) + r")\b", re.I)
_LABEL_PRE = re.compile(r"[A-Za-z)\]]\s*[:：=]\s*[\[(]*$|(?:^|\n)[ \t>•-]*[A-Za-z][\w ]{0,30}?[ \t][-–—][ \t]*$")
"""A label before the number: "Score: 4", "Rating: [[4]]", a line "Coherence - 4"."""
_SCORE_LABEL_PRE = re.compile(
    r"\b(?:scores?|rating|grade|mark|verdict|result|overall|final)\b[^\n:：=]{0,30}[:：=]\s*[\[(]*$", re.I)
_REVISED_PRE = re.compile(r"\bfrom\s+(" + _N + r")\s+to\s+$", re.I)  # "from 4 to 3": the new score
_CHANGED_TO_PRE = re.compile(
    r"\b(?:chang|lower|rais|revis|adjust|increas|decreas|updat|reduc|bump)(?:e|es|ed|ing)?\b"
    r"[^\n.;]{0,40}\bto\s+$", re.I)
_SOMEONE_ELSES_PRE = re.compile(  # "the Scorer gave 4", "your score of 4": quoted, not given
    r"\b(?:scorer|critic|commander|tie-?breaker|evaluator|speaker|referee|judge|you|your|previous(?:ly)?|earlier"
    r"|initial(?:ly)?|original(?:ly)?|old|other)\b[^\d\n.:;]{0,40}$", re.I)
_RANGE_WORDS = re.compile(r"\b(?:scale|range|between|ranging)\b", re.I)
_PHRASE_PRE = re.compile(
    r"(?:\b(?:scor(?:e|es|ed|ing)|rat(?:e|es|ed|ing)|grade[sd]?|give[sn]?|gave|giving|assign(?:s|ed)?"
    r"|award(?:s|ed)?|deserves?|merits?)\b[^\d\n.:;]{0,50}"
    r"|\b(?:it|this|that|text|summary|response|reply|answer|story|translation)\s+(?:is|was|gets|earns|receives)"
    r"\s+(?:an?\s+)?(?:solid\s+|clear\s+|strong\s+|weak\s+|low\s+|high\s+)?"
    r"|\b(?:answer|grade|mark|verdict)\s+(?:is|would\s+be|remains|stays)\s+(?:an?\s+)?"  # "my answer is 4"
    r"|\b(?:I'd|I\s+would|I)\s+(?:say|go\s+with|settle\s+on|stick\s+with|maintain|keep\s+it\s+at|put\s+it\s+at)"
    r"\s+(?:an?\s+)?)$",
    re.I,
)
_PHRASE_POST = re.compile(
    r"^\s+(?:is|would\s+be|seems)\s+(?:a\s+)?(?:fair|appropriate|justified|right|correct|reasonable|accurate)\b", re.I)
_LINE_START = re.compile(r"^[ \t>•-]*\(?$")
_ALONE_PRE = re.compile(r"^[ \t>•-]*(?:\(?\d{1,2}[.)][ \t]+)?[\[(]*$")  # a line's first word, after a bullet
_ALONE_POST = re.compile(r"^[\])]*[ \t]*(?:[.!]?[ \t]*(?:\n|$)|\([^)\n]{1,40}\)|[.,:)–—-][ \t]+\S)")
# "The response does not use the fact. 0" (its last word)
_SENTENCE_BEFORE = re.compile(r"[.!?:;,][ \t]*(?:[-–][ \t]*)?$")
_INSTRUCTION_ITEM = re.compile(
    r"^[ \t>•-]*\(?\d+[.)][ \t]+(?:assign|give|rate|provide|evaluate|read|check|write|end|use|score|compare"
    r"|identify|determine|decide|consider|assess)\b", re.I)
_CRITERION_LINE = re.compile(r"^\W*(?:evaluation\s+)?criteri(?:on|a)\b", re.I)
_ITEM_START = re.compile(r"^[ \t>•-]*\(?\d+[.)][ \t]")  # the line is an item of a numbered list
_ENUMERATOR_POST = re.compile(r"^[.)][ \t]+\S")
_ENUMERATED_LINE = re.compile(r"(?m)^[ \t>•-]*\(?\d+[.)][ \t]+\S")
_ENUMERATOR = re.compile(r"(?<![\w.])\(?(\d{1,2})([.)])(?=[ \t]+\S)")
_COUNTED_WORD = re.compile(r"^[ \t]+([A-Za-z]+)")
_PAREN_NUMBER = re.compile(r"\((\d+(?:\.\d+)?)\)")
"""A number in brackets: several on one line ("coherence (1), clarity (3), style (5)") are a series, not a score."""
_RUBRIC_ENTRY = re.compile(  # a scale level at a line's start or after a comma, then its description
    r"(?:^|\n|[,;]|\bto\b)[ \t>•-]*\(?(\d+(?:\.\d+)?)\)?[ \t]*(?:[-–—:=]|\(|means\b)[ \t]*[A-Za-z\"']")
_QUOTED = re.compile(r"\"[^\"\n]{0,400}\"|“[^”\n]{0,400}”")
_STARS = re.compile(r"[★⭐]+(?:[ \t]*[☆✩]+)?|(?<=[:：] )\*{3,10}(?=[ \t]*(?:\n|$|[☆✩(]))")
"""Stars given as a score: "★★★★☆", "Rating: ****" (three or more asterisks after a label, not bold markup)."""
_SCORE_NOUNS = frozenset("out stars star points point rating score grade mark".split())
_CONNECTORS = frozenset(
    "is as because since for out on and but so given overall here with which that would"
    " somewhat very quite fairly rather moderately".split()
)


_ECHOED_BLOCK = re.compile(  # the task as the prompt gave it, copied back: its numbers are the text's, not a score
    r"^[ \t]*\[(?:source|context|text to evaluate|text [12])\][ \t]*\n"
    r".*?(?:^[ \t]*\[end of [^\]\n]*\][ \t]*$|\n[ \t]*\n|\Z)"
    r"|^[ \t]*\[(?:question|context|submission [12]|criteria)\]:.*?(?=^[ \t]*\[[\w ']+\]:|\n[ \t]*\n|\Z)",
    re.I | re.M | re.S,
)


def _without_echo(text: str) -> str:
    """The reply without the blocks of the prompt it copied back ("[Text to evaluate] ... [End of text]")."""
    return _ECHOED_BLOCK.sub("", text)


def _value(token: str) -> float:
    return _NUMBER_WORDS.get(token.lower()) if token[0].isalpha() else float(token)  # type: ignore[return-value]


class _Reading:
    """What a reply's layout says about its numbers: list numbering and quoted passages."""

    def __init__(self, text: str):
        self.text = text
        items = [m.start() for m in _ENUMERATED_LINE.finditer(text)]
        self.numbered_list = len(items) >= 2
        last_item_end = text.find("\n", items[-1]) if items else -1
        self.list_span = (items[0], len(text) if last_item_end < 0 else last_item_end) if self.numbered_list else (0, 0)
        """From the first numbered line to the end of the last: a number alone in there is the list's, not a score."""
        found = [(m.start(1), int(m.group(1)), m.group(2)) for m in _ENUMERATOR.finditer(text)]
        # n is an item of a list when n-1 came before it or n+1 comes after it, closed alike ("1." or "1)")
        self.list_numbers = {at for at, n, closer in found if any(
            c == closer and (k == n - 1 and a < at or k == n + 1 and a > at) for a, k, c in found)}
        rubric: dict[str, set[int]] = {}
        for m in _RUBRIC_ENTRY.finditer(text):
            rubric.setdefault(m.group(1), set()).add(m.start(1))
        self.rubric = set().union(*rubric.values()) if len(rubric) >= 2 else set()
        lines_of_parens: dict[int, set[str]] = {}
        for m in _PAREN_NUMBER.finditer(text):
            lines_of_parens.setdefault(text.count("\n", 0, m.start()), set()).add(m.group(1))
        self.paren_series = {m.start(1) for m in _PAREN_NUMBER.finditer(text)
                             if len(lines_of_parens[text.count("\n", 0, m.start())]) >= 2}
        self.quoted = [m.span() for m in _QUOTED.finditer(text) if len(m.group().split()) >= 3 or ":" in m.group()]

    def in_quote(self, at: int) -> bool:
        return any(start < at < end for start, end in self.quoted)


def _classify(reading: _Reading, m: re.Match[str], low: float, high: float, criterion: str | None) -> int:
    """How explicitly the number at `m` is given as a score: 4 labelled with the criterion's name or a score word,
    3 labelled, 2 phrased, 1 alone at the start of a line, 0 not a score."""
    text, value, word = reading.text, _value(m.group()), m.group()[0].isalpha()
    if not low <= value <= high or reading.in_quote(m.start()):
        return 0
    pre, post = text[max(0, m.start() - 80) : m.start()], text[m.end() : m.end() + 40]
    revised = _REVISED_PRE.search(pre)
    if revised and not _RANGE_WORDS.search(pre) and (float(revised.group(1)), value) != (low, high):
        return 2
    if _CHANGED_TO_PRE.search(pre):
        return 2
    if m.start() in reading.rubric or m.start() in reading.paren_series:
        return 0  # an echoed rubric: "1 - Poor", "5 (excellent)"; a series "(1), (3) and (5)"
    if _NOT_A_SCORE_PRE.search(pre) or _NOT_A_SCORE_POST.match(post):
        return 0
    line_before = text[text.rfind("\n", 0, m.start()) + 1 : m.start()]
    if _LINE_START.match(line_before) and _ENUMERATOR_POST.match(post) and (value == 1 or reading.numbered_list):
        return 0  # "1. Groundedness: 0": a list number, not the score
    score_label = _SCORE_LABEL_PRE.search(pre) or (criterion and re.search(
        r"\b" + re.escape(criterion) + r"\b[^\n:：=]{0,20}[:：=]\s*[\[(]*$", pre, re.I))
    if m.start() in reading.list_numbers and not score_label:
        return 0  # "1) coherence, 2) fluency": an inline list's numbering
    fraction = _FRACTION_POST.match(post)
    if fraction and _value(fraction.group(1)) != high:
        return 0  # "2 out of 5" on a 1-3 scale is another scale's score
    labelled, phrased = _LABEL_PRE.search(pre), _PHRASE_PRE.search(pre) or _PHRASE_POST.match(post)
    if phrased and not labelled and _SOMEONE_ELSES_PRE.search(pre):
        return 0
    if _POINTS_POST.match(post) and not (labelled or phrased):
        return 0  # "has 3 points" counts; "Score: 3 points" scores
    counted = _COUNTED_WORD.match(post)
    noun = counted.group(1).lower() if counted else ""
    if word and counted and noun not in _SCORE_NOUNS:
        return 0  # "one more read", "two of them"
    if phrased and not labelled and counted and noun not in _SCORE_NOUNS | _CONNECTORS:
        return 0  # "I would say 2 things"
    if score_label:
        return 4
    if labelled:
        return 3
    in_list = reading.list_span[0] <= m.start() < reading.list_span[1]
    if in_list and _INSTRUCTION_ITEM.match(line_before):
        return 0  # "3. Assign a coherence score of 1 based on ...": an evaluation step echoed back
    bracketed = pre.endswith("(") and post.startswith(")") and not (
        word or in_list or (reading.numbered_list and _ITEM_START.match(line_before))
        or _CRITERION_LINE.match(line_before))  # "Evaluation criterion: coherence (1)" echoes the prompt
    if phrased or fraction or _STARS_POST.match(post) or bracketed:
        return 2  # "somewhat coherent (2)", "The response ignores the fact (1)"
    last = _SENTENCE_BEFORE.search(pre) and not post.strip(" \t\n.!")
    if word or in_list or reading.rubric or not (last or _ALONE_PRE.match(line_before) and _ALONE_POST.match(post)):
        return 0  # a number inside a sentence or a numbered list is not a score unless something says so
    if counted and counted.group(1).lower() not in _CONNECTORS:
        return 0  # "3 pop albums"
    return 1


def parse_score(text: str, low: float, high: float, *, criterion: str | None = None) -> float | None:
    """The score the judge gave on the [low, high] scale, or None when absent, ambiguous or refused.

    Candidates are ranked: labelled with a score word or the criterion's name ("Score: 3",
    "Coherence: 3") > other labels ("Response: 3") > phrased ("rate it 3", "3/5", "four out of five",
    "(3)", stars) > alone at the start of a line ("3", "2. The reply ..."); the best rank must agree on
    a single value. List numbers, ranges and scale ends, rubric lines, dates, times, counts and
    quoted passages never count.
    """
    if is_refusal(text):
        return None
    text = _without_echo(text)
    text = _STARS.sub(lambda m: str(sum(m.group().count(star) for star in "★⭐*")), text)
    text = text.replace("*", "").replace("`", "")
    reading = _Reading(text)
    found: dict[int, dict[float, list[int]]] = {}
    for m in _NUMBER.finditer(text):
        rank = _classify(reading, m, low, high, criterion)
        if rank:
            found.setdefault(rank, {}).setdefault(_value(m.group()), []).append(m.start())
    if not found:
        return None
    best = found[max(found)]
    if len(best) == 1:
        return next(iter(best))
    return _first_aspect(text, best, criterion)


_ASPECT_HEADING = re.compile(r"(?m)^[ \t>•-]*([A-Za-z][A-Za-z '/&-]{2,40}?)[ \t]*:[ \t]*$")
_FIELD_HEADING = re.compile(  # the reply's own parts, or the prompt's fields echoed back: not another aspect
    r"(?:(?:final|overall|evaluation|corresponding|conversation|my)\s+)?(?:rating|score|rationale|analysis|explanation"
    r"|reasoning|evaluation|answer|response|result|justification|feedback|comments?|conclusion|summary|verdict"
    r"|assessment|example|notes?|steps?|criteri(?:on|a)|fact|history|form|strengths?|weakness(?:es)?|pros|cons"
    r"|issues?|errors?|problems?|improvements?|suggestions?|details?|reasons?|observations?|points?|overview"
    r"|introduction|output|recommendations?|judg(?:e)?ment|decision|opinion|review|critique|comparison)s?", re.I)
_REVISION = re.compile(r"\b(?:revised|updated|final|alternative|new|second|correction|reconsider\w*|after|instead)\b",
                       re.I)


def _first_aspect(text: str, best: dict[float, list[int]], criterion: str | None) -> float | None:
    """A reply that rates the asked aspect first, then aspects it was not asked about under headings of
    their own ("Rating: 2 ... - Use of Fact:\nRating: 1"): the score before the first such heading, when
    no heading names the asked criterion and every other aspect got a score of its own. Otherwise None."""
    headings = [m for m in _ASPECT_HEADING.finditer(text) if not _FIELD_HEADING.fullmatch(m.group(1).strip())]
    if not headings or any(_REVISION.search(m.group(1)) for m in headings):
        return None  # a second opinion on the same aspect is a second answer, not another aspect
    bounds = [0] + [m.start() for m in headings] + [len(text)]
    sections = [{value for value, starts in best.items() if any(bounds[i] <= at < bounds[i + 1] for at in starts)}
                for i in range(len(bounds) - 1)]
    named = [i + 1 for i, m in enumerate(headings) if criterion and criterion.lower() in m.group(1).lower()]
    if not all(sections[1:]):
        return None
    mine = sections[named[0]] if len(named) == 1 else set() if named else sections[0]
    return mine.pop() if len(mine) == 1 else None


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


def weighted_score(tokens: Sequence[TokenLogprobs], low: float, high: float,
                   score: float | None = None) -> float | None:
    """G-Eval's probability-weighted score: sum of p(v) * v over the integers v in [low, high] among
    the score token's top alternatives, p normalised over those candidates (what the top-k leaves
    out, and tokens that are no in-scale number, are not counted). Spellings of one value (" 3",
    "3") add up. None when the score token cannot be found or has no in-scale candidate.

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
    return sum(value * p for value, p in weights.items()) / total if total > 0 else None


_NO_ISSUE_TOKEN = re.compile(r"\bNO[ _-]?ISSUES?\b")
_NO_ISSUE_LINE = re.compile(
    r"^(?:[a-z ]{0,25}:\s*)?(?:there (?:is|are) )?no[ _-]?issues?(?: (?:found|here|detected))?[.!]*$", re.I
)


_ECHOED_INSTRUCTION = re.compile(r"\b(?:reply|replies|write|say|answer|respond|output|type)(?:\s+with)?[\s:]*[\"'“‘]?$",
                                 re.I)
_NOT_ABOUT_THE_SCORE = re.compile(r"^\s+(?:with|in|about|regarding)\b[^.\n]*\b(?:but|however|although|though)\b", re.I)


def _accepts(text: str, m: re.Match[str]) -> bool:
    """A "NO ISSUE" that is the Critic's own acceptance: not the instruction echoed back ("If it is, reply
    NO ISSUE"), not quoted, not "no issue with the grammar, but the score is too high"."""
    before, after = text[max(0, m.start() - 40) : m.start()], text[m.end() :]
    quoted = before.endswith(('"', "“", "'", "‘")) and after.startswith(('"', "”", "'", "’"))
    return not (quoted or _ECHOED_INSTRUCTION.search(before) or _NOT_ABOUT_THE_SCORE.match(after))


def is_no_issue(text: str) -> bool:
    """Whether a DEBATE critic accepts: its own "NO ISSUE", or a last line that is only that phrase."""
    if any(_accepts(text, m) for m in _NO_ISSUE_TOKEN.finditer(text)):
        return True
    lines = [line.strip(" \t*#>-") for line in text.splitlines() if line.strip(" \t*#>-")]
    return bool(lines) and bool(_NO_ISSUE_LINE.match(lines[-1]))


_VERDICT_WORD = r"([012]|tie|draw|equal|both|neither)\b"
_SUBJECT = r"(?:submission|response|answer|output|assistant)\s*#?\s*"
_FINAL_VERDICT = re.compile(
    r"\[\[\s*([012])\s*\]\]|\bfinal\s+(?:answer|verdict|decision|choice|judg(?:e)?ment)\s*(?:[:：=]|\bis\b)\s*"
    r"(?:" + _SUBJECT + r")?" + _VERDICT_WORD,
    re.I,
)
_LABEL_VERDICT = re.compile(
    r"\b(?:answer|verdict|decision|choice|judg(?:e)?ment|output|result|winner|preference)\s*(?:[:：=]|\bis\b)\s*"
    r"(?:" + _SUBJECT + r")?" + _VERDICT_WORD,
    re.I,
)
_QUALITY = r"(?:helpful|accurate|relevant|appropriate|effective|useful|informative|comprehensive|complete|correct)\b"
_BETTER = re.compile(
    r"\b" + _SUBJECT + r"([12])\s+(?:is|was|seems|appears|remains)\s+(?:still\s+)?(?:\w+ly\s+|much\s+)?(?:the\s+)?"
    r"(better|superior|stronger|preferred|preferable|worse|inferior|weaker|(?:more|less)\s+" + _QUALITY + ")"
    r"|\bprefer\s+" + _SUBJECT + r"([12])\b|\b" + _SUBJECT + r"([12])\s+(?:wins|edges\s+out|comes\s+out\s+ahead"
    r"|has\s+(?:a|the)\s+(?:slight\s+)?edge)\b",
    re.I,
)
_TIE = re.compile(
    r"(?<!not a )(?<!no )\b(?:tie|tied|draw|equally\s+(?:good|bad|well|strong|helpful|valid|effective|accurate|poor)"
    r"|of\s+equal\s+quality|neither\s+(?:submission\s+|response\s+)?(?:is\s+(?:clearly\s+|significantly\s+|distinctly\s+)?"
    r"better|stands\s+out)|no\s+clear\s+winner)\b",
    re.I,
)
_VERDICTS: dict[str, Verdict] = {"1": "1", "2": "2", "0": "0", "tie": "0", "draw": "0", "equal": "0",
                                  "both": "0", "neither": "0"}
_LAST_LINE_VERDICT = re.compile(r"(?:" + _SUBJECT + r")?" + _VERDICT_WORD + r"$", re.I)
_CONCLUSION = 300
"""How far before the answer line a verdict in words counts as the reply's conclusion."""
_ITEM_NUMBER = re.compile(r"\d[.)]")
_BARE_VERDICT = re.compile(r"([012]|tie|draw)", re.I)
_QUOTED_CHOICE = re.compile(  # 'I choose: "1"', 'the better submission is: "2"', 'Based on the evaluation, "1"'
    r"(?:\b(?:choose|chose|choice|answer|verdict|option|decision|select(?:ed)?|pick|is|be|evaluation|conclusion)\b"
    r"[ \t,:]{0,3}|:[ \t]*)[\"“']([012])[\"”'](?![ \t]*(?:,|\bor\b|\band\b|/))", re.I)


def _single(values: list[str]) -> Verdict | None:
    distinct = {_VERDICTS[v.lower()] for v in values}
    return distinct.pop() if len(distinct) == 1 else None


def _answer_lines(text: str) -> list[str]:
    """Verdicts standing alone on their lines ("2", "Tie."), and "Submission 2" only as the last line:
    ScaleEval asks to repeat the number alone on the last line, and judges often write it twice."""
    raw = [line.strip() for line in text.splitlines() if line.strip(" \t#.[]()\"'“”")]
    lines = [line.strip(" \t#.[]()\"'“”") for line in raw]
    # "1." opening a list ("1. \nThe answer you provided ...") is an item number, except as the last line
    found = [m.group(1) for n, line in enumerate(lines) if (m := _BARE_VERDICT.fullmatch(line))
             and not (_ITEM_NUMBER.fullmatch(raw[n]) and n < len(lines) - 1)]
    last = _LAST_LINE_VERDICT.fullmatch(lines[-1]) if lines else None
    return found or ([last.group(1)] if last else [])


def parse_verdict(text: str) -> Verdict | None:
    """ScaleEval's verdict: "1" or "2" for the better submission, "0" for a tie; None when unclear,
    refused, or when the reply gives two different answers. Quoted passages (a submission's words,
    the options echoed back) are not the judge's verdict."""
    if is_refusal(text):
        return None
    text = _unquoted(_without_echo(text).replace("*", "").replace("`", ""))
    values = [next(g for g in m.groups() if g) for m in _FINAL_VERDICT.finditer(text)]
    if values:
        return _single(values)
    values = _answer_lines(text)
    if values:  # the conclusion written just before the answer must not say otherwise
        lines = list(re.finditer(r"(?m)^\W*(?:" + "|".join(map(re.escape, set(values))) + r")\W*$", text))
        concluded = _stated(text[max(0, lines[0].start() - _CONCLUSION) : lines[0].start()] + "\n"
                            + text[lines[-1].end() :]) if lines else []
        return _single(values + concluded)
    values = [m.group(1) for m in _QUOTED_CHOICE.finditer(text)]
    if values:
        return _single(values)
    values = [next(g for g in m.groups() if g) for m in _LABEL_VERDICT.finditer(text)]
    if values:
        return _single(values)
    values = _stated(text)
    return _single(values) if values else None


def _stated(text: str) -> list[str]:
    """Verdicts said in words: "Submission 2 is better", "Submission 1 is less accurate", "a tie"."""
    values = []
    for m in _BETTER.finditer(text):
        which, quality = m.group(1) or m.group(3) or m.group(4), (m.group(2) or "").lower()
        worse = quality.startswith(("worse", "inferior", "weaker", "less"))
        values.append({"1": "2", "2": "1"}[which] if worse else which)
    return values + ["0" for _ in _TIE.finditer(text)]


_PAIR_LABELLED = re.compile(
    r"\b(?:assistant|submission|response|answer|model|output|candidate)\s*#?\s*([12AB])\b[^:：\n]{0,20}?[:：]\s*"
    r"(" + _N + r")(?:\s*(?:/|out\s+of)\s*(" + _N + r"))?(?=\s*(?:$|[\n,.;)(-]|points?\b))",
    re.I,
)
_PAIR_AFTER_LABEL = re.compile(
    r"\bscores?\s*[:：]\s*(" + _N + r")\s*(?:,|;|\band\b|\bvs\.?|\s)\s*(" + _N + r")\b", re.I)
_PAIR_LINE = re.compile(r"(?m)^[ \t]*(" + _N + r")[ \t]*(?:,|;|\band\b|\bvs\.?|[ \t])[ \t]*(" + _N + r")[ \t.]*$")


def parse_pair_scores(text: str, *, low: float = 1, high: float = 10) -> tuple[float, float] | None:
    """Two scores for a pairwise comparison (ChatEval/FairEval "8 6"), or None.

    A judge that states its own scale ("4/5") is read on it when both scores
    share it and it fits inside [low, high].
    """
    if is_refusal(text):
        return None
    text = _without_echo(text).replace("*", "")
    per_side: dict[str, set[float]] = {"1": set(), "2": set()}
    denominators: set[float] = set()
    for m in _PAIR_LABELLED.finditer(text):
        per_side[{"A": "1", "B": "2"}.get(m.group(1).upper(), m.group(1))].add(float(m.group(2)))
        if m.group(3):
            denominators.add(float(m.group(3)))
    if per_side["1"] and per_side["2"]:
        if len(per_side["1"]) > 1 or len(per_side["2"]) > 1 or len(denominators) > 1:
            return None
        top = denominators.pop() if denominators else high
        pair = (per_side["1"].pop(), per_side["2"].pop())
        return pair if top <= high and all(low <= v <= top for v in pair) else None
    found = _PAIR_AFTER_LABEL.search(text) or _PAIR_LINE.search(text)
    if found is None:
        return None
    pair = (float(found.group(1)), float(found.group(2)))
    return pair if all(low <= v <= high for v in pair) else None


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
_TAG_LINES = re.compile(r"(?m)^[ \t]*<[^<>\n]*>(?:[^\n]*</[^<>\n]*>)?[ \t]*\n?")
_OPENING = 300
"""A refusal says so at the start; "I cannot ..." deep in a reply is part of an argument."""


def is_refusal(text: str) -> bool:
    """An empty reply or a refusal, so the protocol can re-ask; "I cannot ..., but I'd rate it 3" is not one.
    Quoted passages (a submission that itself declines) are not the judge's words."""
    text = _unquoted(text.replace("’", "'")).lstrip()
    m = _REFUSAL.search(text[:_OPENING])
    if not text.strip() or _ABSTAINS.search(text):
        return True
    if m is None:
        return False
    connector = _CONNECTOR.search(text, m.end())  # the refusal's own "but" decides
    return connector is None or not _ANSWER_FOLLOWS.match(text, connector.end())


def _unquoted(text: str) -> str:
    """The judge's own words: quoted passages of three words or more emptied (a submission's or a rubric's
    words), and lines of markup tags dropped ("<function1>", a "<system_instruction>...</...>" echoed back)."""
    text = _TAG_LINES.sub("", text)
    return _QUOTED.sub(lambda m: '""' if len(m.group().split()) >= 3 or ":" in m.group() else m.group(), text)


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


_SPELLING = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "‑": "-",
                           "−": "-", "\u00a0": " ", "…": ".", "「": '"', "」": '"', "『": '"', "』": '"',
                           "。": ".", "、": ",", "\u3000": " ", "؟": "?", "،": ",", "؛": ";", "۔": "."})
_WRAPPING = re.compile(r"^[\s\"'“”‘’「」『』]+|[\s\"'“”‘’「」『』]+$")
_EDGE_DOTS = re.compile(r"^(?:\.{2,}|…)\s*|\s*(?:\.{2,}|…)$")
_TRAILING_PUNCT = re.compile(r"[\s.,;:!?。，、；：！？]+$")
_ELLIPSIS = re.compile(r"\s*(?:\.{3}|…)\s*")
_WORD_CHARS = re.compile(r"\w")


@lru_cache(maxsize=64)
def _normalise(s: str, words_only: bool) -> tuple[str, tuple[int, ...]]:
    """Lower-cased, one spelling of quotes and dashes, single spaces; plus each kept char's original offset."""
    out: list[str] = []
    where: list[int] = []
    gap = False
    for i, ch in enumerate(s):
        low = unicodedata.normalize("NFKC", ch).translate(_SPELLING).lower()  # full-width "，" is ","
        ch = low if len(low) == 1 else ch
        if ch.isspace() or (words_only and not ch.isalnum()):
            gap = bool(out)
            continue
        if gap:
            out.append(" ")
            where.append(i)
            gap = False
        out.append(ch)
        where.append(i)
    return "".join(out), tuple(where)


def _joined(a: str, b: str) -> bool:
    """Whether two neighbouring characters belong to one word: CJK writes words without spaces, so a
    quote may begin or end next to any character there."""
    return a.isalnum() and b.isalnum() and not (is_cjk_char(a) or is_cjk_char(b))


def _find_whole(needle: str, hay: str, start: int) -> int:
    """First occurrence that does not cut a word: "he went" is not in "She went"."""
    i = hay.find(needle, start) if needle else -1
    while i >= 0:
        j = i + len(needle)
        if (i == 0 or not _joined(hay[i - 1], needle[0])) and (j == len(hay) or not _joined(needle[-1], hay[j])):
            return i
        i = hay.find(needle, i + 1)
    return -1


def _find_normalised(quote: str, text: str, start: int, words_only: bool) -> tuple[int, int] | None:
    hay, where = _normalise(text, words_only)
    needle = _normalise(quote, words_only)[0]
    i = _find_whole(needle, hay, bisect_left(where, start))
    return (where[i], where[i + len(needle) - 1] + 1) if i >= 0 else None


def locate(quote: str, text: str, start: int = 0) -> tuple[int, int] | None:
    """Offsets [start, end) of `quote` in `text`, tolerant to spacing, case, quotes, dashes and punctuation.

    Exact match first; quotes with fewer than 3 word characters are matched only exactly.
    """
    for candidate in (quote, _WRAPPING.sub("", quote)):
        i = _find_whole(candidate, text, start)
        if i >= 0:
            return i, i + len(candidate)
    core = _EDGE_DOTS.sub("", _WRAPPING.sub("", quote))
    if len(_WORD_CHARS.findall(core)) < 3:
        return None
    pieces = [p for p in _ELLIPSIS.split(core) if len(_WORD_CHARS.findall(p)) >= 3]
    if len(pieces) > 1:  # "A ... B": each part in order
        first = locate(pieces[0], text, start)
        last = first
        for piece in pieces[1:]:
            last = locate(piece, text, last[1]) if last else None
        return (first[0], last[1]) if first and last else None
    for variant, words_only in ((core, False), (_TRAILING_PUNCT.sub("", core), False), (core, True)):
        span = _find_normalised(variant, text, start, words_only)
        if span:
            return span
    return None


_TYPE_CLUES: tuple[dict[str, re.Pattern[str]], ...] = (
    {abbr: re.compile(rf"\b{abbr}s?\b", re.I) for abbr in ERROR_TYPES},
    {
        "REP": re.compile(r"repetiti", re.I),
        "LINC": re.compile(r"logical(?:ly)?\s+inconsisten", re.I),
        "DCONT": re.compile(r"discontinu", re.I),
        "ILC": re.compile(r"lexical", re.I),
        "FER": re.compile(r"factual|fact\s+errors?", re.I),
    },
    {
        "REP": re.compile(r"redundan|repeat", re.I),
        "LINC": re.compile(r"inconsisten|contradict", re.I),
        "DCONT": re.compile(r"unrelated|off[- ]topic|incoheren", re.I),
        "ILC": re.compile(r"word\s+choice|wording", re.I),
        "FER": re.compile(r"common\s+sense", re.I),
    },
    {  # MATEval's Chinese names (重复问题, 逻辑问题, 连贯性问题, 用词不当, 事实性错误) and their short forms
        "REP": re.compile(r"重复"),
        "LINC": re.compile(r"逻辑|矛盾"),
        "DCONT": re.compile(r"连贯|衔接"),
        "ILC": re.compile(r"用词|措辞"),
        "FER": re.compile(r"事实|常识"),
    },
)


def normalize_error_type(label: str) -> str | None:
    """The canonical abbreviation for a free-form label ("Factual Errors.", "**REP**"), None if unclear."""
    for clues in _TYPE_CLUES:
        hits = {abbr for abbr, clue in clues.items() if clue.search(label)}
        if hits:
            return hits.pop() if len(hits) == 1 else None
    return None


ERROR_REPORT_FORMAT = "\n".join(
    [
        "Answer one question per error type, in this order and exactly in this form:",
        "",
        *(f"Q: Does the text contain {name} ({abbr}) errors?" for abbr, name in ERROR_TYPES.items()),
        "",
        "After each question write \"A: Yes\" or \"A: No\". After \"A: Yes\", give every error of that type as:",
        'Location: "<the erroneous sentence, copied exactly from the text>"',
        "Explanation: <why it is an error>",
        "Deduction: -1",
        "",
        "The form, with <...> for what you write (copy no placeholder into your report):",
        "Q: Does the text contain Repetition (REP) errors?",
        "A: Yes",
        'Location: "<a sentence copied exactly from the text>"',
        "Explanation: <why it is an error>",
        "Deduction: -1",
        "Q: Does the text contain Logical Inconsistency (LINC) errors?",
        "A: No",
    ]
)

_FIELD = re.compile(
    r"^\s*(?:[-*•>]+\s*|\d+[.)、]\s*)?(error\s+location|location|quote|error\s+type|type|reason|explanation"
    r"|description|deduction|q\d*|question|a\d*|answer|story|text|total\s+score|score"
    r"|问题?|答案?|回答|单项问题得分|单项得分|最终得分|总分|计算过程"
    r"|具体原句|(?:原句|原文|错误位置|位置)\d*|问题解释|解释问题|解释|原因|理由)\s*[:：]\s*(.*)$",
    re.I,
)
_YES = re.compile(r"(?:yes|是)(?!\w)|是的|存在|有", re.I)
_NO = re.compile(r"(?:no|否|不|没有|无)", re.I)
_PASSAGE = re.compile(r"[“\"「『‘]([^“”\"「」『』‘’]{2,}?)[”\"」』’]")
"""A passage in quotes, in any of the forms Chinese and English reports use."""
_ALTERNATIVES = re.compile(r"\s*(?<!\w)/\s*|\s*/(?!\w)\s*")
_ENUMERATED_QUOTES = re.compile(r"(?:^|(?<=[.!?\"”']))\s*\(?\d{1,2}[.)]\s*")
_NOTHING = re.compile(r"^(?:none|n/?a|no|nil|null|-+|not applicable|<[^<>]*>)\.?$", re.I)
"""A location that names no sentence, a copied placeholder ("<a sentence ...>") included."""
_KEYS = {"error location": "location", "location": "location", "quote": "location", "error type": "type",
         "type": "type", "reason": "explanation", "explanation": "explanation", "description": "explanation",
         "deduction": "deduction", "具体原句": "location", "原句": "location", "原文": "location",
         "错误位置": "location", "位置": "location",
         "问题解释": "explanation", "解释问题": "explanation", "解释": "explanation", "原因": "explanation",
         "理由": "explanation"}


def _split_quotes(location: str) -> list[str]:
    """One location may hold several sentences: "A./ B." or "1. A.2. B." (MATEval's annotators did both)."""
    pieces = []
    for part in _ALTERNATIVES.split(location):
        if len(passages := _PASSAGE.findall(part)) > 1:  # 原句：“A”，“B” (or “A”和“B”: 单项问题得分 says how many)
            pieces += passages
        elif re.match(r"\s*[\"“']?\(?1[.)]\s", part):  # also a quoted list: "1. A. 2. B."
            pieces += _ENUMERATED_QUOTES.split(part)
        else:
            pieces.append(part)
    return [p for p in (_WRAPPING.sub("", p) for p in pieces) if p and not _NOTHING.match(p)]


def _resolve(quote: str, text: str) -> list[tuple[str, tuple[int, int] | None]]:
    """The quote's span; failing that, one span per sentence when each is found in order ("A. A." repeated)."""
    where = locate(quote, text)
    parts = sentences(quote)
    if where or len(parts) < 2:
        return [(quote, where)]
    found: list[tuple[str, tuple[int, int] | None]] = []
    start = 0
    for sentence in parts:
        where = locate(sentence, text, start)
        if where is None:
            return [(quote, None)]
        found.append((sentence, where))
        start = where[1]
    return found


def _spans(draft: dict[str, str], default_type: str | None, unplaced: bool, text: str) -> list[ErrorSpan]:
    """The errors of one draft; `unplaced` says whether an error without a location still counts."""
    label = draft.get("type", "")
    kind = normalize_error_type(label) or _WRAPPING.sub("", label).rstrip(".") or default_type or "unknown"
    deduction = re.search(r"\d+(?:\.\d+)?", draft.get("deduction", ""))
    points = float(deduction.group()) if deduction else 1.0
    explanation = draft.get("explanation", "").strip()
    quotes = _split_quotes(draft.get("location", ""))
    if not quotes:  # an error stated without a location: kept, with nothing to point at
        return [ErrorSpan(type=kind, quote="", explanation=explanation, deduction=points)] if unplaced else []
    reasons = _ALTERNATIVES.split(explanation)
    if len(reasons) != len(quotes):
        reasons = [explanation] * len(quotes)
    return [
        ErrorSpan(type=kind, quote=part, start=where[0] if where else None, end=where[1] if where else None,
                  explanation=reason, deduction=points)
        for quote, reason in zip(quotes, reasons, strict=True)  # as many reasons as quotes, made so above
        for part, where in _resolve(quote, text)
    ]


_ASKED_AS_ANSWER = re.compile(r"^(\s*(?:\d+[.)、]\s*)?)[问答](\s*[:：]\s*(?:上述故事中)?(?:是否包含)?\s*"
                              r"['‘\"“][^'’\"”\n]{2,8}['’\"”]\s*[？?])\s*(?:答\s*[:：]\s*)?", re.M)

_UNLABELLED_ANSWER = re.compile(r"^(\s*问[^\n]*[？?])[ \t]*\n(?=[ \t]*(?:是|否|不存在|没有)[，,。.！!\s])", re.M)


def normalize_qa(report: str) -> str:
    """The report with one question or answer per line and its slips put right, as a reader takes them:
    "问：…？答：是" on one line, a question written "答：'重复问题'？", an answer without its "答：", bold markers."""
    report = report.replace("**", "").replace("__", "")
    report = _ASKED_AS_ANSWER.sub(lambda m: f"{m.group(1)}问{m.group(2)}\n" + ("答：" if m.group(0).rstrip().endswith(
        ("：", ":")) else ""), report)
    return _UNLABELLED_ANSWER.sub(r"\1\n答：", report)


def answer_says(value: str) -> bool | None:
    """A report's answer to a yes/no question: True for yes (Yes, 是, 存在), False for no (No, 否, 不存在,
    没有), None when it says neither."""
    value = value.strip().lstrip("*").strip()
    if _NO.match(value):
        return False
    return True if _YES.match(value) else None


def _prose_errors(line: str, kind: str | None, text: str) -> list[ErrorSpan]:
    """Errors stated in prose under a yes, as MATEval's Chinese reports write them: a line's first quoted
    passage is the error's location and the rest of the line its reason (later quotes there are words of
    that passage or the fix); a line without quotes names the sentences of it that are in the text."""
    first = _PASSAGE.search(line)
    if first:
        quotes, explanation = [first.group(1)], line[first.end():].lstrip(" ，,。.：:").strip()
    else:
        quotes, explanation = [s for s in sentences(line) if locate(s, text)], ""
    return [ErrorSpan(type=kind or "unknown", quote=part, start=where[0] if where else None,
                      end=where[1] if where else None, explanation=explanation)
            for quote in quotes for part, where in _resolve(quote, text)]


_ASKS = re.compile(r"是否|吗|[？?]\s*$")


def _score_as_stated(errors: list[ErrorSpan], start: int, points: float, kind: str | None) -> None:
    """A question's own score line (单项问题得分：-N) says what the errors read since `start` cost: 0 takes
    back a yes ("答：是。…所以，这并不构成…"); N is shared among them (two sentences quoted for one error
    share its point, a line that costs 3 costs 3); a yes with no quote read costs N all the same."""
    found = errors[start:]
    if not points:
        del errors[start:]
    elif found:
        for error in found:
            error.deduction = points / len(found)
    elif kind:
        errors.append(ErrorSpan(type=kind, quote="", deduction=points))


def parse_error_report(report_text: str, text: str) -> list[ErrorSpan]:
    """Errors listed in a MATEval-style report, each quote resolved to offsets in `text` when possible.

    Reads MATEval's "Error location：... Error type：... Reason：..." blocks and
    our ERROR_REPORT_FORMAT; a field that is already filled starts a new error,
    so either field order works. Unlocatable quotes are kept, unlocated.
    """
    errors: list[ErrorSpan] = []
    draft: dict[str, str] = {}
    question_type: str | None = None
    answered_yes, found_for_question, field, chinese, question_start, scored_from = False, 0, "", False, 0, 0

    def flush() -> None:
        nonlocal draft, found_for_question
        unplaced = answered_yes or ("type" in draft and "location" not in draft)
        spans = _spans(draft, question_type, unplaced, text) if draft else []
        errors.extend(spans)
        found_for_question += len(spans)
        draft = {}

    def close_question() -> None:
        flush()
        if answered_yes and not found_for_question and question_type:
            errors.append(ErrorSpan(type=question_type, quote=""))

    for line in normalize_qa(report_text).splitlines():
        m = _FIELD.match(line)
        if m is None:
            if field == "explanation" and line.strip():
                draft["explanation"] += " " + line.strip()
            elif chinese and answered_yes and line.strip():  # 答：是, then each error in a sentence of prose
                found = _prose_errors(line, question_type, text)
                errors.extend(found)
                found_for_question += len(found)
            continue
        label, value = re.sub(r"\s+", " ", m.group(1).lower()), m.group(2).strip()
        label = re.sub(r"(?<=[原位])(句|文|置)\d+$", r"\1", label)  # 原句1：, 原句2：: one location each
        if label == "问题" and not _ASKS.search(value):
            label = "解释"  # "问题：<what is wrong>" under a location explains it; only "问题：…是否…？" asks
        if label in ("question", "问", "问题") or re.fullmatch(r"q\d*", label):
            close_question()
            question_type, answered_yes, found_for_question = normalize_error_type(value), False, 0
            chinese, question_start = label.startswith("问"), len(errors)
            scored_from = question_start
        elif label.startswith("单项") and (stated := re.match(r"[-—]?\s*(\d+(?:\.\d+)?)", value)):
            flush()
            points = float(stated.group(1))
            _score_as_stated(errors, scored_from, points, question_type if answered_yes else None)
            scored_from, found_for_question = len(errors), len(errors) - question_start
            answered_yes = answered_yes and points > 0
        elif label in ("answer", "答", "答案", "回答") or re.fullmatch(r"a\d*", label):
            answered_yes = answer_says(value) is True
            if chinese and answered_yes and (rest := re.sub(r"^\s*(?:是的?|存在|有)[，,。.：:]?", "", value)):
                found = _prose_errors(rest, question_type, text)  # "答：是，“...”重复了两次。"
                errors.extend(found)
                found_for_question += len(found)
        field = _KEYS.get(label, "")
        if field and field in draft:
            flush()
        if field:
            draft[field] = value
    close_question()
    return errors
