"""Reading a MATEval-style error report: its questions and answers, each error's type, location and deduction."""

from __future__ import annotations

import re

from debate_tui.domain import ERROR_TYPES, ErrorSpan
from debate_tui.parsing.quotes import WRAPPING, find_passages, locate, passage_words
from debate_tui.writing import sentences

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
    r"|description|deductions?(?:\s+for\s+[^:：\n]{2,40})?|q\d*|question|a\d*|answer|story|text|total\s+score"
    r"|score\s+for\s+(?:the\s+)?individual\s+questions?|final\s+score|calculation\s+process|score"
    r"|(?:the\s+)?(?:specific\s+)?(?:original\s+)?sentences?(?:\s*\(s\))?(?:\s+include)?"
    r"|issues?(?:\s+explanation)?|details"
    r"|问题?|答案?|回答|单项问题得分|单项得分|最终得分|总分|计算过程"
    r"|具体原句|(?:原句|原文|错误位置|位置)\d*|问题解释|解释问题|解释|原因|理由)\s*[:：]\s*(.*)$",
    re.I,
)
_YES = re.compile(r"(?:yes|是)(?!\w)|是的|存在|有", re.I)
_NO = re.compile(r"(?:no|否|不|没有|无)", re.I)
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


_ENGLISH_KEYS = (
    (re.compile(r"(?:the )?(?:specific )?(?:original )?sentences?(?: ?\(s\))?(?: include)?"), "location"),
    (re.compile(r"issues?(?: explanation)?|details"), "explanation"),
    (re.compile(r"deductions?(?: for .+)?"), "deduction"),
)
"""MATEval's English labels ("Specific original sentence(s):", "Issue:", "Deductions:", "Deduction for X:") and
the field each fills."""
_OWN_SCORE = re.compile(r"score for (?:the )?individual questions?")
_ENDS = re.compile(r"final score|calculation process|最终得分|计算过程")
"""The report's closing lines: after them no question is open (their words restate the errors, they add none)."""
_NOTHING_DEDUCTED = re.compile(r"\bno\s+(?:points?\s+(?:(?:is|are|was|were|will\s+be)\s+)?deducted"
                               r"|deductions?\s+(?:is|was)\s+(?:made|warranted|needed))\b", re.I)
"""A Yes its own words take back: "..., so no points were deducted for it."."""
_FIRST_NUMBER = re.compile(r"[-—]?\s*(\d+(?:\.\d+)?)")


def _english_key(label: str) -> str:
    return next((key for pattern, key in _ENGLISH_KEYS if pattern.fullmatch(label)), "")


def _points(value: str) -> float | None:
    """The points a deduction states: the first number, or the result of a sum ("1 for each issue = 2")."""
    stated = _FIRST_NUMBER.search(value.rsplit("=", 1)[-1])
    return float(stated.group(1)) if stated else None


def _split_quotes(location: str) -> list[str]:
    """One location may hold several sentences: "A./ B." or "1. A.2. B." (MATEval's annotators did both)."""
    pieces = []
    for part in _ALTERNATIVES.split(location):
        if len(quoted := find_passages(part)) > 1:  # 原句：“A”，“B” (or “A”和“B”: 单项问题得分 says how many)
            pieces += [passage_words(m) for m in quoted]
        elif re.match(r"\s*[\"“']?\(?1[.)]\s", part):  # also a quoted list: "1. A. 2. B."
            pieces += _ENUMERATED_QUOTES.split(part)
        else:
            pieces.append(part)
    return [p for p in (WRAPPING.sub("", p) for p in pieces) if p and not _NOTHING.match(p)]


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
    kind = normalize_error_type(label) or WRAPPING.sub("", label).rstrip(".") or default_type or "unknown"
    stated = _points(draft.get("deduction", ""))
    points = 1.0 if stated is None else stated
    explanation = draft.get("explanation", "").strip()
    quotes = _split_quotes(draft.get("location", ""))
    if not quotes:  # an error stated without a location: kept, with nothing to point at (not the form's echo)
        placeholder = explanation.startswith("<") and _NOTHING.match(explanation) is not None
        return [ErrorSpan(type=kind, quote="", explanation=explanation, deduction=points)] if unplaced and not \
            placeholder else []
    reasons = _ALTERNATIVES.split(explanation)
    if len(reasons) != len(quotes):
        reasons = [explanation] * len(quotes)
    parts = [(part, where, reason) for quote, reason in zip(quotes, reasons, strict=True)  # as many, made so above
             for part, where in _resolve(quote, text)]
    return [ErrorSpan(type=kind, quote=part, start=where[0] if where else None, end=where[1] if where else None,
                      explanation=reason, deduction=points / len(parts) if "shared" in draft else points)
            for part, where, reason in parts]


_ASKED_AS_ANSWER = re.compile(r"^(\s*(?:\d+[.)、]\s*)?)[问答](\s*[:：]\s*(?:上述故事中)?(?:是否包含)?\s*"
                              r"['‘\"“][^'’\"”\n]{2,8}['’\"”]\s*[？?])\s*(?:答\s*[:：]\s*)?", re.M)

_ANSWERED_ON_ITS_LINE = re.compile(r"^([ \t]*(?:Q\d*|Question)[ \t]*[:：][^\n]*\?)[ \t]*(?=(?:A\d*|Answer)[ \t]*[:：])",
                                   re.M | re.I)
"""An English question and its answer on one line: "Q: Does the text contain Repetition (REP) errors? A: Yes",
or glued to it: "Question: Does the above story contain 'Repetition'?Answer: Yes."."""

_GLUED_SCORE = re.compile(r"(?<=\S)[ \t]*(?=score\s+for\s+(?:the\s+)?individual\s+questions?\s*[:：])", re.I)
"""An English score line glued to the line before it: "Deduction: -1 point.Score for individual questions: -1"."""

_UNLABELLED_ANSWER = re.compile(r"^(\s*问[^\n]*[？?])[ \t]*\n(?=[ \t]*(?:是|否|不存在|没有)[，,。.！!\s])", re.M)


_STATED = re.compile(
    r"^[ \t>*-]*the\s+(?:text|story)\s+(does\s+not\s+|doesn't\s+)?contains?\s+(no\s+)?"
    r"(?:([^\n?\"“”:]{2,60}?)\s+errors?(?:[ \t]*$|\.(?=[ \t]|$))"  # "... contains Repetition (REP) errors. This"
    r"|([A-Za-z][A-Za-z ]{2,40}\((?:REP|LINC|DCONT|ILC|FER)\))(?=[ \t]*[,.;]|[ \t]+and\b))",  # "... (REP), and"
    re.I | re.M)
"""A question answered in a sentence of the reply's own: "The text contains Repetition (REP) errors."."""


def normalize_qa(report: str) -> str:
    """The report with one question or answer per line and its slips put right, as a reader takes them:
    "问：…？答：是" on one line, a question written "答：'重复问题'？", an answer without its "答：", bold markers,
    "Q: …? A: Yes" on one line, "The text contains Repetition (REP) errors." (a question and its answer)."""
    report = _ANSWERED_ON_ITS_LINE.sub(r"\1\n", report.replace("**", "").replace("__", ""))
    report = _GLUED_SCORE.sub("\n", report)
    report = _STATED.sub(lambda m: f"Q: Does the text contain {m.group(3) or m.group(4)} errors?\nA: "
                         + ("No" if m.group(1) or m.group(2) else "Yes") + "\n", report)
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
    quoted = find_passages(line)
    if quoted:
        quotes, explanation = [passage_words(quoted[0])], line[quoted[0].end():].lstrip(" ，,。.：:").strip()
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


class _Report:
    """One pass over a report's lines: the error being drafted, the question being answered, and the errors read."""

    def __init__(self, text: str):
        self.text = text
        self.errors: list[ErrorSpan] = []
        self.draft: dict[str, str] = {}
        self.field = ""
        """The field the last labelled line filled: an unlabelled line goes on with an explanation."""
        self.question_type: str | None = None
        self.said: bool | None = None
        """The open question's answer: yes, no (what is drafted under it is the form copied back), or none."""
        self.found_for_question = 0
        self.chinese = False
        self.question_start = 0
        self.scored_from = 0
        """Where the errors that the question's next score line (单项问题得分) prices begin."""
        self.said_since_score: list[str] = []
        """The lines read since the question or its last score line: where an English report quotes its errors."""
        self.ended = False
        """The report's closing lines (Final Score, Calculation process) began: they restate, they add no error."""
        self.priced_first: float | None = None
        """An English score line written before the errors it prices ("Answer: Yes", "Score for individual
        questions: -1", then the quote): the points that the errors read after it share."""

    def found(self, spans: list[ErrorSpan]) -> None:
        self.errors.extend(spans)
        self.found_for_question += len(spans)

    def flush(self) -> None:
        """The drafted error, if any, read; a new draft begins. Under a question answered no, the form's
        fields copied back (Location, Explanation, Deduction) are no error."""
        unplaced = self.said is True or ("type" in self.draft and "location" not in self.draft)
        if self.draft and not (self.said is False and self.question_type):
            self.found(_spans(self.draft, self.question_type, unplaced, self.text))
        self.draft = {}

    def place_quoted(self) -> None:
        """An English yes whose errors are not located names them by quoting the story in its own words ("The
        phrase "X" is repeated", a numbered list of quotes, "Specific original sentences:" then a list): each
        passage of those lines that is in the story is one error, the points read so far shared among them."""
        if self.chinese or self.said is not True or not self.question_type:
            return
        if any(error.located for error in self.errors[self.scored_from:]):
            return
        places: list[tuple[str, tuple[int, int]]] = []
        for line in self.said_since_score:
            for passage in find_passages(line):
                for part, where in _resolve(passage_words(passage), self.text):
                    if where and not any(where[0] < end and start < where[1] for _, (start, end) in places):
                        places.append((part, where))
        if not places:
            return
        unplaced = self.errors[self.scored_from:]
        points = sum(error.deduction for error in unplaced) if unplaced else 1.0
        explanation = next((error.explanation for error in unplaced if error.explanation), "")
        del self.errors[self.scored_from:]
        self.found([ErrorSpan(type=self.question_type, quote=self.text[start:end], start=start, end=end,
                              explanation=explanation, deduction=points / len(places))
                    for _, (start, end) in places])
        self.found_for_question = len(self.errors) - self.question_start

    def close_question(self) -> None:
        """A yes without an error read still counts one error of the asked type, with nothing to point at."""
        self.flush()
        self.place_quoted()
        if self.priced_first is not None:
            points, self.priced_first = self.priced_first, None
            self.score_line(points)
        if self.said is True and not self.found_for_question and self.question_type:
            self.errors.append(ErrorSpan(type=self.question_type, quote=""))

    def ask(self, value: str, chinese: bool) -> None:
        self.close_question()
        self.question_type, self.said, self.found_for_question = normalize_error_type(value), None, 0
        self.chinese, self.question_start = chinese, len(self.errors)
        self.scored_from, self.said_since_score, self.ended = self.question_start, [], False

    def end(self) -> None:
        self.close_question()
        self.question_type, self.said, self.ended = None, None, True

    def score_line(self, points: float) -> None:
        if not self.chinese and self.said is True and points and not self.draft and \
                self.scored_from == len(self.errors) and not "".join(self.said_since_score).strip():
            self.priced_first = points
            return
        self.flush()
        self.place_quoted()
        _score_as_stated(self.errors, self.scored_from, points, self.question_type if self.said is True else None)
        self.scored_from, self.found_for_question = len(self.errors), len(self.errors) - self.question_start
        self.said_since_score = []
        if self.said is True and not points:
            self.said = None  # the score line took the yes back

    def answer(self, value: str) -> None:
        said = answer_says(value)
        if self.question_type and None not in (said, self.said) and said != self.said:  # "A: No", later "A: Yes"
            self.flush()
            del self.errors[self.question_start:]  # two answers to one question: neither is taken
            self.said, self.found_for_question = False, 0
            return
        self.said = said
        if not self.chinese and (rest := re.sub(r"^[\s*]*(?:yes|no)\b[\s.,;:!-]*", "", value, flags=re.I)):
            self.said_since_score.append(rest)  # "Answer: Yes. The sentence “...” ...": the answer quotes its error
        if self.chinese and self.said is True and (rest := re.sub(r"^\s*(?:是的?|存在|有)[，,。.：:]?", "", value)):
            self.found(_prose_errors(rest, self.question_type, self.text))  # "答：是，“...”重复了两次。"

    def unlabelled(self, line: str) -> None:
        if self.ended:
            return
        self.said_since_score.append(line)
        if not self.chinese and self.said is True and _NOTHING_DEDUCTED.search(line):
            self.score_line(0)  # "However, ... no points were deducted": the yes taken back
            return
        if self.field == "explanation" and line.strip():
            self.draft["explanation"] += " " + line.strip()
        elif self.chinese and self.said is True and line.strip():  # 答：是, then each error in a sentence of prose
            self.found(_prose_errors(line, self.question_type, self.text))

    def labelled(self, label: str, value: str) -> None:
        label = re.sub(r"(?<=[原位])(句|文|置)\d+$", r"\1", label)  # 原句1：, 原句2：: one location each
        if _ENDS.fullmatch(label):
            self.end()
            return
        if self.ended and label not in ("question", "问", "问题") and not re.fullmatch(r"q\d*", label):
            return
        if not self.chinese and self.question_type and (
                _OWN_SCORE.fullmatch(label) or (label == "score" and self.said is True and _FIRST_NUMBER.match(value))):
            own = _points(value)  # "Score for individual questions: -2 points (1 point for each issue)"
            if own is not None:
                self.score_line(own)
            return
        if not re.fullmatch(r"a\d*|answer", label):
            self.said_since_score.append(value)
        if not self.chinese and self.said is True and _NOTHING_DEDUCTED.search(value):
            self.score_line(0)
            return
        shared = _english_key(label) == "deduction" and (label != "deduction" or re.search(r"\beach\b|=", value))
        label = _english_key(label) or label
        if label == "问题" and not _ASKS.search(value):
            label = "解释"  # "问题：<what is wrong>" under a location explains it; only "问题：…是否…？" asks
        if label in ("question", "问", "问题") or re.fullmatch(r"q\d*", label):
            self.ask(value, label.startswith("问"))
        elif label.startswith("单项") and (stated := re.match(r"[-—]?\s*(\d+(?:\.\d+)?)", value)):
            self.score_line(float(stated.group(1)))
        elif label in ("answer", "答", "答案", "回答") or re.fullmatch(r"a\d*", label):
            self.answer(value)
        self.field = _KEYS.get(label, "")
        if self.field and self.field in self.draft:
            self.flush()
        if self.field:
            self.draft[self.field] = value
        if shared:
            self.draft["shared"] = "yes"  # "Deductions: 2 (1 for each)", "Deduction for X: -2": the type's total


def parse_error_report(report_text: str, text: str) -> list[ErrorSpan]:
    """Errors listed in a MATEval-style report, each quote resolved to offsets in `text` when possible.

    Reads MATEval's "Error location：... Error type：... Reason：..." blocks and
    our ERROR_REPORT_FORMAT; a field that is already filled starts a new error,
    so either field order works. Unlocatable quotes are kept, unlocated.
    """
    report = _Report(text)
    for line in normalize_qa(report_text).splitlines():
        m = _FIELD.match(line)
        if m is None:
            report.unlabelled(line)
        else:
            report.labelled(re.sub(r"\s+", " ", m.group(1).lower()), m.group(2).strip())
    report.close_question()
    return report.errors


_QA_LINE = re.compile(r"^[\s>*#-]*(?:\d+[.)、]\s*)?(q\d*|question|a\d*|answer|问题?|答案?|回答)\s*[:：]\s*(.*)$",
                      re.I)


def answered_types(report: str) -> set[str]:
    """The error types whose question the report answers with a yes or a no."""
    answered: set[str] = set()
    asked: str | None = None
    for line in normalize_qa(report).splitlines():
        m = _QA_LINE.match(line)
        if m is None:
            continue
        if m.group(1)[0].lower() in "q问":
            asked = normalize_error_type(m.group(2))
        elif asked and answer_says(m.group(2)) is not None:
            answered.add(asked)
    return answered


def readable_types(report: str, text: str, types: list[str], errors: list[ErrorSpan] | None = None) -> set[str]:
    """Types the report answers. A report in MATEval's own error-list form, without questions,
    answers every type when it lists at least one error of a named type (absent types have none); an
    error without a type ("A: Yes" under no question, then a location) answers nothing. `errors`: the report's,
    when the caller has read them already."""
    asked = answered_types(report)
    if asked:
        return asked & set(types)
    listed = parse_error_report(report, text) if errors is None else errors
    return set(types) if any(error.type in ERROR_TYPES for error in listed) else set()
