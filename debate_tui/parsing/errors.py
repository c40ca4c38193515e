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
    r"|description|deduction|q\d*|question|a\d*|answer|story|text|total\s+score|score"
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
    deduction = re.search(r"\d+(?:\.\d+)?", draft.get("deduction", ""))
    points = float(deduction.group()) if deduction else 1.0
    explanation = draft.get("explanation", "").strip()
    quotes = _split_quotes(draft.get("location", ""))
    if not quotes:  # an error stated without a location: kept, with nothing to point at (not the form's echo)
        placeholder = explanation.startswith("<") and _NOTHING.match(explanation) is not None
        return [ErrorSpan(type=kind, quote="", explanation=explanation, deduction=points)] if unplaced and not \
            placeholder else []
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

_ANSWERED_ON_ITS_LINE = re.compile(r"^([ \t]*Q\d*[ \t]*[:：][^\n]*\?)[ \t]+(?=A\d*[ \t]*[:：])", re.M)
"""An English question and its answer on one line: "Q: Does the text contain Repetition (REP) errors? A: Yes"."""

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

    def close_question(self) -> None:
        """A yes without an error read still counts one error of the asked type, with nothing to point at."""
        self.flush()
        if self.said is True and not self.found_for_question and self.question_type:
            self.errors.append(ErrorSpan(type=self.question_type, quote=""))

    def ask(self, value: str, chinese: bool) -> None:
        self.close_question()
        self.question_type, self.said, self.found_for_question = normalize_error_type(value), None, 0
        self.chinese, self.question_start = chinese, len(self.errors)
        self.scored_from = self.question_start

    def score_line(self, points: float) -> None:
        self.flush()
        _score_as_stated(self.errors, self.scored_from, points, self.question_type if self.said is True else None)
        self.scored_from, self.found_for_question = len(self.errors), len(self.errors) - self.question_start
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
        if self.chinese and self.said is True and (rest := re.sub(r"^\s*(?:是的?|存在|有)[，,。.：:]?", "", value)):
            self.found(_prose_errors(rest, self.question_type, self.text))  # "答：是，“...”重复了两次。"

    def unlabelled(self, line: str) -> None:
        if self.field == "explanation" and line.strip():
            self.draft["explanation"] += " " + line.strip()
        elif self.chinese and self.said is True and line.strip():  # 答：是, then each error in a sentence of prose
            self.found(_prose_errors(line, self.question_type, self.text))

    def labelled(self, label: str, value: str) -> None:
        label = re.sub(r"(?<=[原位])(句|文|置)\d+$", r"\1", label)  # 原句1：, 原句2：: one location each
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
