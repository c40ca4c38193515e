"""Reading a score, or a pair of scores, that a judge gave on a criterion's scale."""

from __future__ import annotations

import re

from debate_tui.parsing.own_words import QUOTED, line_start, without_echo
from debate_tui.parsing.refusals import is_refusal

_N = r"-?\d+(?:\.\d+)?"
_NUMBER_WORDS = {w: float(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten".split())}
_NUMBER = re.compile(r"(?<![\w.])(?:" + _N + r"(?!\w|\.\d)|(?:" + "|".join(_NUMBER_WORDS) + r")\b)", re.I)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"


class _Caseless:
    """A case-insensitive pattern that, on ASCII text, is searched as its lowercase self on the lowercased text.

    The same answer (in ASCII, case is A-Z alone and lowering keeps every offset), two to three times faster:
    Python's engine skips an alternative at its first letter only when that letter must match exactly, and
    the window before each number is searched with these long lists of words at every offset.
    """

    def __init__(self, pattern: str):
        if re.search(r"\\[A-Z]", pattern):
            raise ValueError("an upper-case escape (\\S, \\W, ...) would change its meaning once lowered")
        self.pattern = re.compile(pattern, re.I)
        self.lowered = re.compile(pattern.lower())

    def search(self, text: str, lowered: str | None) -> re.Match[str] | None:
        """`lowered` is `text.lower()` when `text` is ASCII, else None (then the case-insensitive pattern)."""
        return self.pattern.search(text) if lowered is None else self.lowered.search(lowered)


# Context around a number, read on a short window before (`pre`) and after (`post`).
_NOT_A_SCORE_PRE = _Caseless(
    r"(?:[$£€#]\s*|\d\s*[:,]|\w[-–]|/\s*|\bout\s+of\s*|\bscale\s+(?:of|from)\s*"  # money, 9:30, 10,000, COVID-19
    r"|\d\s*(?:\([^)\n]{0,30}\)\s*)?(?:,|[-–~]|\bto|\bor|\band|,\s*(?:or|and))\s*"  # second of "1, 2, or 3", "1-3"
    r"|\b(?:step|item|point|question|turn|speaker|round|part|line|example|assistant|submission|response|answer"
    r"|sentence|paragraph|version|number|no\.|section|page|option|criterion|criteria|aspect|metric|dimension"
    r"|category|rule|task|text|summary|document|story|chapter|figure|table|iteration|agent|evaluator|reviewer"
    r"|judge|critic|referee|candidate|case|claim|issue|error|reason|argument|factor|note|top|day|week|year"
    r"|" + _MONTH + r")\s*[#(]?"
    r"|\b(?:steps?|issues?|errors?|mistakes?|problems?|reasons?|points?|examples?|words?|length|count|number|date"
    r"|time|years?|criteri(?:on|a)|questions?|scale|range|notes?|page|lines?|paragraphs?|sentences?|iterations?"
    r"|rounds?|turns?|version)\s*[:：=]\s*[\[(]*)$"  # "Errors: 2" counts, it does not score
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
_SCORE_LABEL_PRE = _Caseless(
    r"\b(?:scores?|rating|grade|mark|verdict|result|overall|final)\b[^\n:：=]{0,30}[:：=]\s*[\[(]*$")
_REVISED_PRE = _Caseless(r"\bfrom\s+(" + _N + r")\s+to\s+$")  # "from 4 to 3": the new score
_CHANGED_TO_PRE = _Caseless(
    r"\b(?:chang|lower|rais|revis|adjust|increas|decreas|updat|reduc|bump)(?:e|es|ed|ing)?\b"
    r"[^\n.;]{0,40}\bto\s+$")
_SOMEONE_ELSES_PRE = _Caseless(  # "the Scorer gave 4", "your score of 4", "a new response with a score of 1"
    r"\b(?:scorer|critic|commander|tie-?breaker|evaluator|speaker|referee|judge|you|your|previous(?:ly)?|earlier"
    r"|initial(?:ly)?|original(?:ly)?|old|other|(?:new|another|sample|example|revised)\s+(?:response|reply|version"
    r"|text|summary|story|piece|draft))\b[^\d\n.:;]{0,40}$")
_SOMEONE_ELSES_LABEL = _Caseless(
    r"(?:^|\n)[ \t>•-]*(?:your|speaker\s*\d(?:['’]s)?|(?:the\s+)?(?:other|previous|earlier|initial|original|old)\b)"
    r"[^\n:：=]{0,30}[:：=]\s*[\[(]*$")
"""A label that names another's answer at its line's start: the number after it is reported, not given."""
_RANGE_WORDS = re.compile(r"\b(?:scale|range|between|ranging)\b", re.I)
_PHRASE_PRE = _Caseless(
    r"(?:\b(?:scor(?:e|es|ed|ing)|rat(?:e|es|ed|ing)|grade[sd]?|give[sn]?|gave|giving|assign(?:s|ed)?"
    r"|award(?:s|ed)?|deserves?|merits?)\b[^\d\n.:;]{0,50}"
    r"|\b(?:it|this|that|text|summary|response|reply|answer|story|translation)\s+(?:is|was|gets|earns|receives)"
    r"\s+(?:an?\s+)?(?:solid\s+|clear\s+|strong\s+|weak\s+|low\s+|high\s+)?"
    r"|\b(?:answer|grade|mark|verdict)\s+(?:is|would\s+be|remains|stays)\s+(?:an?\s+)?"  # "my answer is 4"
    r"|\b(?:I'd|I\s+would|I)\s+(?:say|go\s+with|settle\s+on|stick\s+with|maintain|keep\s+it\s+at|put\s+it\s+at)"
    r"\s+(?:an?\s+)?)$"
)
_RANGE_AFTER = re.compile(r"^\s*\([^)\n]{1,30}\)[^.\n]{0,40}\bto\s+-?\d")
"""After a number: its rubric words in brackets, then "to N" in the same sentence (a range, not a score)."""
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
_ITEM_SENTENCE_POST = re.compile(r"^[.)][ \t]+[A-Z][a-z]*(?:[ \t]+[\w'’,]+){3}")
"""A sentence after "2.": an item's text (the rest of a list the reply began elsewhere), where "2. somewhat
interesting" names a level of the scale."""
_ENUMERATED_LINE = re.compile(r"(?m)^[ \t>•-]*\(?\d+[.)][ \t]+\S")
_ENUMERATOR = re.compile(r"(?<![\w.])\(?(\d{1,2})([.)])(?=[ \t]+\S)")
_COUNTED_WORD = re.compile(r"^[ \t]+([A-Za-z]+)")
_PAREN_NUMBER = re.compile(r"\((\d+(?:\.\d+)?)\)")
"""A number in brackets: several on one line ("coherence (1), clarity (3), style (5)") are a series, not a score."""
_RUBRIC_ENTRY = re.compile(  # a scale level at a line's start or after a comma, then its description
    r"(?:^|\n|[,;]|\bto\b)[ \t>•-]*\(?(\d+(?:\.\d+)?)\)?[ \t]*(?:[-–—:=]|\(|means\b)[ \t]*[A-Za-z\"']")
_STARS = re.compile(r"[★⭐]+(?:[ \t]*[☆✩]+)?|(?<=[:：] )\*{3,10}(?=[ \t]*(?:\n|$|[☆✩(]))")
"""Stars given as a score: "★★★★☆", "Rating: ****" (three or more asterisks after a label, not bold markup)."""
_STARS_LABEL = re.compile(r"\b(?:ratings?|scores?|stars?|grade|mark|overall|final)\b[^\n:：]{0,30}[:：] $", re.I)
"""What asterisks must follow to be stars: a score's label ("a markdown divider: ***" is markup)."""
_SCORE_NOUNS = frozenset("out stars star points point rating score grade mark".split())
_CONNECTORS = frozenset(
    "is as because since for out on and but so given overall here with which that would"
    " somewhat very quite fairly rather moderately".split()
)

_PLACEHOLDER = re.compile(r"(?<![\w/'’])N(?![\w/'’])")
"""The prompt's "N" (as in "a score of N") written back where a score should be."""


_SCORE_LINE = re.compile(r"[ \t>•*-]*(?:\(?\d+[.)][ \t]*)?(?:final[ \t]+)?(?:score|rating)[ \t]*:", re.I)
"""A line that is the score's own ("5. Score: N = 3"): the placeholder filled in."""


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
        self.quoted = [m.span() for m in QUOTED.finditer(text) if len(m.group().split()) >= 3 or ":" in m.group()]

    def in_quote(self, at: int) -> bool:
        return any(start < at < end for start, end in self.quoted)


def _classify(reading: _Reading, m: re.Match[str], low: float, high: float, criterion: str | None) -> int:
    """How explicitly the number at `m` is given as a score: 4 labelled with the criterion's name or a score word,
    3 labelled, 2 phrased, 1 alone at the start of a line, 0 not a score."""
    text, value, word = reading.text, _value(m.group()), m.group()[0].isalpha()
    if not low <= value <= high or reading.in_quote(m.start()):
        return 0
    pre, post = text[max(0, m.start() - 80) : m.start()], text[m.end() : m.end() + 40]
    folded = pre.lower() if pre.isascii() else None
    revised = _REVISED_PRE.search(pre, folded)
    if revised and not _RANGE_WORDS.search(pre) and (float(revised.group(1)), value) != (low, high):
        return 2
    if _CHANGED_TO_PRE.search(pre, folded):
        return 2
    line_before = text[line_start(text, m.start()) : m.start()]
    if _PLACEHOLDER.search(line_before) and not _SCORE_LINE.match(line_before):
        return 0  # "Your final answer: N (Score 3)", "Ascending: N = 3": the prompt's placeholder, then a number
    counted = _COUNTED_WORD.match(post)  # from here to the labels every check rules the number out: the
    noun = counted.group(1).lower() if counted else ""  # cheapest first
    if word and counted and noun not in _SCORE_NOUNS:
        return 0  # "one more read", "two of them"
    if m.start() in reading.rubric or m.start() in reading.paren_series:
        return 0  # an echoed rubric: "1 - Poor", "5 (excellent)"; a series "(1), (3) and (5)"
    if _NOT_A_SCORE_POST.match(post) or _NOT_A_SCORE_PRE.search(pre, folded):  # the anchored, cheap one first
        return 0
    opening = _opens_with_score(reading, m, value, low, high) if m.start() == len(text) - len(text.lstrip()) \
        else None
    if opening is not None:
        return int(opening)  # "2. The response somewhat refers to ...", "1. Unnatural"; "3. Unnatural" is none
    if _LINE_START.match(line_before) and _ENUMERATOR_POST.match(post) and (
            value == 1 or reading.numbered_list or _ITEM_SENTENCE_POST.match(post)):
        return 0  # "1. Groundedness: 0", "2. The article focuses on ...": a list number, not the score
    score_label = _SCORE_LABEL_PRE.search(pre, folded) or (criterion and re.search(
        r"\b" + re.escape(criterion) + r"\b[^\n:：=]{0,20}[:：=]\s*[\[(]*$", pre, re.I))
    if m.start() in reading.list_numbers and not score_label:
        return 0  # "1) coherence, 2) fluency": an inline list's numbering
    fraction = _FRACTION_POST.match(post)
    if fraction and _value(fraction.group(1)) != high:
        return 0  # "2 out of 5" on a 1-3 scale is another scale's score
    labelled, phrased = _LABEL_PRE.search(pre), _PHRASE_PRE.search(pre, folded) or _PHRASE_POST.match(post)
    if phrased and not labelled and _SOMEONE_ELSES_PRE.search(pre, folded):
        return 0
    if labelled and _SOMEONE_ELSES_LABEL.search(pre, folded):
        return 0  # "Your answer: 3", "Previous score: 4": another's answer, labelled
    if _POINTS_POST.match(post) and not (labelled or phrased):
        return 0  # "has 3 points" counts; "Score: 3 points" scores
    if phrased and not labelled and counted and noun not in _SCORE_NOUNS | _CONNECTORS:
        return 0  # "I would say 2 things"
    if score_label:
        return 4
    if labelled:
        return 3
    if _INSTRUCTION_ITEM.match(line_before):
        return 0  # "3. Assign a coherence score of 1 based on ...": an evaluation step echoed back, even alone
    in_list = reading.list_span[0] <= m.start() < reading.list_span[1]
    bracketed = pre.endswith("(") and post.startswith(")") and not (
        word or in_list or (reading.numbered_list and _ITEM_START.match(line_before))
        or _CRITERION_LINE.match(line_before))  # "Evaluation criterion: coherence (1)" echoes the prompt
    if phrased and not labelled and _RANGE_AFTER.match(post):
        return 0  # "I would go with 1 (not at all) and ... to 3": a scale's ends, the rubric's words between
    if phrased or fraction or _STARS_POST.match(post) or bracketed:
        return 2  # "somewhat coherent (2)", "The response ignores the fact (1)"
    last = _SENTENCE_BEFORE.search(pre) and not post.strip(" \t\n.!")
    if word or in_list or reading.rubric or not (last or _ALONE_PRE.match(line_before) and _ALONE_POST.match(post)):
        return 0  # a number inside a sentence or a numbered list is not a score unless something says so
    if counted and counted.group(1).lower() not in _CONNECTORS:
        return 0  # "3 pop albums"
    return 1


_OPENING_REASON = re.compile(r"\.[ \t]+(?:(?:the|this)[ \t]+(?:response|reply|answer|summary)\b|it[ \t]+(?:is|does)\b)"
                             r"[^\n:]*$|\.[ \t]+([A-Za-z][a-z]*(?:[ \t]+[a-z]+){0,2})[ \t]*\.?[ \t]*$", re.I)
"""After a reply's opening "N": a full stop, then one line that is its reason about the judged text ("The response
..."), or the scale level's name in three words or fewer ("Unnatural", "somewhat interesting")."""
_NEGATIVE_LEVEL = re.compile(r"\b(?:un\w+|in(?:coherent|appropriate)|not|dull|bad|poor|boring|irrelevant)\b", re.I)
_MIDDLE_LEVEL = re.compile(r"\b(?:somewhat|fairly|moderately|partly|partially|slightly|a[ \t]+bit)\b", re.I)


def _opens_with_score(reading: _Reading, m: re.Match[str], value: float, low: float, high: float) -> bool | None:
    """Whether a reply that opens with "N." gives N as its score: True when nothing else in the reply is
    numbered and its one line goes on with its reason or the level's name agreeing with N (the low end a
    negative word, the high end none, a middle one a hedge); False when the level contradicts N ("1. Natural");
    None when the reply is not of this form (the other rules decide)."""
    if reading.numbered_list or m.start() in reading.list_numbers:
        return None
    rest = _OPENING_REASON.match(reading.text, m.end())
    if rest is None or rest.end() < len(reading.text.rstrip()):
        return None
    level = rest.group(1)
    if level is None:
        return True
    if value == low:
        return bool(_NEGATIVE_LEVEL.search(level))
    if value == high:
        return not _NEGATIVE_LEVEL.search(level)
    return bool(_MIDDLE_LEVEL.search(level))


def _stars(m: re.Match[str]) -> str:
    """Stars as their count; asterisks only after a score's label (else left as they are: markup)."""
    star = m.group()
    if star.startswith("*") and not _STARS_LABEL.search(m.string[max(0, m.start() - 50) : m.start()]):
        return star
    return str(sum(star.count(glyph) for glyph in "★⭐*"))


def parse_score(text: str, low: float, high: float, *, criterion: str | None = None) -> float | None:
    """The score the judge gave on the [low, high] scale, or None when absent, ambiguous or refused.

    Candidates are ranked: labelled with a score word or the criterion's name ("Score: 3",
    "Coherence: 3") > other labels ("Response: 3") > phrased ("rate it 3", "3/5", "four out of five",
    "(3)", stars) > alone at the start of a line ("3", "2. somewhat coherent"); the best rank must agree on
    a single value. List numbers, ranges and scale ends, rubric lines, dates, times, counts and
    quoted passages never count.
    """
    if is_refusal(text):
        return None
    text = without_echo(text)
    text = _STARS.sub(_stars, text).replace("*", "").replace("`", "")
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


_PAIR_LABELLED = re.compile(
    r"\b(?:assistant|submission|response|answer|model|output|candidate)\s*#?\s*([12AB])\b[^:：\n]{0,20}?[:：]\s*"
    r"(" + _N + r")(?:\s*(?:/|out\s+of)\s*(" + _N + r"))?(?=\s*(?:$|[\n,.;)(-]|points?\b))",
    re.I,
)
_PAIR_LETTER_LINE = re.compile(r"(?m)^[ \t]*([AB])[ \t]*[.:：][ \t]*(" + _N + r")[ \t.]*$")
"""A line of its own per text, "A: 8" then "B: 6" (A is the first text, B the second)."""
_PAIR_AFTER_LABEL = re.compile(
    r"\bscores?\s*[:：]\s*(" + _N + r")\s*(?:,|;|\band\b|\bvs\.?|\s)\s*(" + _N + r")\b"
    r"(?!\s*(?:,|;|\band\b|\s)\s*-?\d)", re.I)  # not the first two of a series ("Scores: 3, 4, 5, 6, 7")
_PAIR_LINE = re.compile(r"(?m)^[ \t]*(" + _N + r")[ \t]*(?:,|;|\band\b|\bvs\.?|[ \t])[ \t]*(" + _N + r")[ \t.]*$")


def parse_pair_scores(text: str, *, low: float = 1, high: float = 10) -> tuple[float, float] | None:
    """Two scores for a pairwise comparison (ChatEval/FairEval "8 6"), or None.

    A judge that states its own scale ("4/5") is read on it when both scores
    share it and it fits inside [low, high].
    """
    if is_refusal(text):
        return None
    text = without_echo(text).replace("*", "")
    per_side: dict[str, set[float]] = {"1": set(), "2": set()}
    denominators: set[float] = set()
    for m in _PAIR_LABELLED.finditer(text):
        per_side[{"A": "1", "B": "2"}.get(m.group(1).upper(), m.group(1))].add(float(m.group(2)))
        if m.group(3):
            denominators.add(float(m.group(3)))
    for m in _PAIR_LETTER_LINE.finditer(text):
        per_side[{"A": "1", "B": "2"}[m.group(1)]].add(float(m.group(2)))
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
