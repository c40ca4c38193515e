"""Reading a pairwise verdict (ScaleEval's "1", "2" or "0") and a DEBATE Critic's acceptance ("NO ISSUE")."""

from __future__ import annotations

import re

from debate_tui.domain import Verdict
from debate_tui.parsing.own_words import line_start, unquoted, without_echo
from debate_tui.parsing.refusals import is_refusal

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
    r"\b(?:verdict|decision|choice|judg(?:e)?ment|winner|preference)\s*(?:[:：=]|\bis\b)\s*"
    r"(?:" + _SUBJECT + r")?" + _VERDICT_WORD,
    re.I,
)
"""A verdict's own label. Not "result" or "output": the task is a question, and "The answer is 2" may be the reply
solving it."""
_ANSWER_LABEL = re.compile(r"\banswer\s*[:：=]\s*((?:" + _SUBJECT + r")?" + _VERDICT_WORD + ")?", re.I)
"""'Answer: 0' is a verdict where the reply labels nothing else an answer ("1. Answer: $23 ... * Answer: 2")."""
_QUALITY = r"(?:helpful|accurate|relevant|appropriate|effective|useful|informative|comprehensive|complete|correct)\b"
_BETTER = re.compile(
    r"\b" + _SUBJECT + r"([12])\s+(?:is|was|seems|appears|remains)\s+(?:still\s+)?(?:\w+ly\s+|much\s+)?(?:the\s+)?"
    r"(better|superior|stronger|preferred|preferable|worse|inferior|weaker|(?:more|less)\s+" + _QUALITY + ")"
    r"|\bprefer\s+" + _SUBJECT + r"([12])\b|\b" + _SUBJECT + r"([12])\s+(?:wins|edges\s+out|comes\s+out\s+ahead"
    r"|has\s+(?:a|the)\s+(?:slight\s+)?edge)\b",
    re.I,
)
_TIE = re.compile(
    r"(?<!not a )(?<!no )(?<!to )\b(?:tie(?!\s+(?:up|in|into|together|back|down)\b)"  # not "to tie" (the verb)
    r"|(?:are|is|were|was|be|remains?)\s+tied|draw"  # "they are tied", not "tied up in enumerations"
    r"|equally\s+(?:good|bad|well|strong|helpful|valid|effective|accurate|poor)"
    r"|of\s+equal\s+quality|neither\s+(?:submission\s+|response\s+)?(?:is\s+(?:clearly\s+|significantly\s+|distinctly\s+)?"
    r"better|stands\s+out)|no\s+clear\s+winner)\b",
    re.I,
)
_VERDICTS: dict[str, Verdict] = {"1": "1", "2": "2", "0": "0", "tie": "0", "draw": "0", "equal": "0",
                                  "both": "0", "neither": "0"}
_LAST_LINE_VERDICT = re.compile(r"(?:" + _SUBJECT + r")?" + _VERDICT_WORD + r"$", re.I)
_CONCLUSION = 300
"""How far before the answer line a verdict in words counts as the reply's conclusion."""
_BARE_VERDICT = re.compile(r"([012]|tie|draw)", re.I)
_QUOTED_CHOICE = re.compile(  # 'I choose: "1"', 'the better submission is: "2"', 'Based on the evaluation, "1"'
    r"(?:\b(?:choose|chose|choice|answer|verdict|option|decision|select(?:ed)?|pick|is|be|evaluation|conclusion)\b"
    r"[ \t,:]{0,3}|:[ \t]*)[\"“']([012])[\"”'](?![ \t]*(?:,|\bor\b|\band\b|/))", re.I)
_ANOTHERS = r"\b(?:you|your|speaker\s*\d|other|previous(?:ly)?|original(?:ly)?|initial(?:ly)?|earlier)\b"
_SOMEONE_ELSES = re.compile(_ANOTHERS + r"[^\n.]{0,30}$", re.I)
"""'Your response was: "1"', 'Speaker 2 chose "2"': another's answer, quoted."""
_HYPOTHETICAL = re.compile(r"\b(?:could|might|may|possib\w*|perhaps|if)\b[^\n.]{0,30}$", re.I)
"""'Another possibility could be "1"': a choice imagined, not made."""
_ANOTHERS_SENTENCE = re.compile(_ANOTHERS + r"[^\n.!?]*$", re.I)
"""A sentence about another's answer up to the verdict word ('The other speaker's evaluation ... showed a tie',
'Your reply had no verdict, "1" or "2", was a tie.'): what it reports is not the judge's verdict."""


_ORDINAL_SUBJECT = re.compile(r"\b(?:the\s+)?(first|second)\s+(submission|response|answer|output)\b", re.I)
""""The second submission": Submission 2, as the verdict sentences name it."""


_OPTION_LINE = re.compile(r'(?m)^[ \t]*(?:Submission [12] is better|Neither is better)[ \t]*:[ \t]*"[012]"[ \t]*$')
"""ScaleEval's options as its prompt lists them; two or more such lines are the prompt copied back, not a choice."""


def _without_options(text: str) -> str:
    return _OPTION_LINE.sub("", text) if len(_OPTION_LINE.findall(text)) >= 2 else text


def _single(values: list[str]) -> Verdict | None:
    distinct = {_VERDICTS[v.lower()] for v in values}
    return distinct.pop() if len(distinct) == 1 else None


_LIST_ITEM = re.compile(r"(\d+)[.)]")
_AROUND_A_VERDICT = " \t#.[]()\"'“”"
"""What may wrap a verdict standing alone on its line: "2.", "[1]", "(0)", '"1"', "## 2"."""
_NUMBERS_ONLY = re.compile(r"[\d.,:;()\s\"'“”]+")
_SAMPLE_INTRO = re.compile(r"\b(?:sample|example|format|template|like this|for instance)\b[^\n]*:$", re.I)
"""A line that introduces what follows as a sample ("Here is a sample of your type:"): the "1" under it shows
the form, it does not choose."""
_OPTION_FORM = re.compile(r"[ \t>*-]*(?:Submission \d+|Neither) is better[ \t]*:")
"""A line in the form of ScaleEval's options ('Submission 2 is better: "2"'): the prompt's words copied back."""
_COPIED_LINE = re.compile(r"[ \t>*-]*\d+[.)][ \t]|" + _OPTION_FORM.pattern)


def _opens_a_list(raw: list[str], n: int) -> bool:
    """Whether line `n`'s number is an item number: "1." before more lines ("1. \nThe answer you provided ..."),
    or a "1" whose list goes on with "2." ("1\n...\n2. You are Speaker 1 ..."); a "1" whose reasons are listed
    after it ("1\nWhy:\n1. ...\n2. ...") is the answer."""
    if n == len(raw) - 1:
        return False
    item = _LIST_ITEM.match(raw[n])
    if item and not raw[n][item.end() :].strip(" \t\"'“”"):
        return True
    number = raw[n].strip(_AROUND_A_VERDICT)
    following = [m.group(1) for line in raw[n + 1 :] if (m := _LIST_ITEM.match(line))]
    return number in ("1", "2") and bool(following) and following[0] == str(int(number) + 1)


def _answer_lines(text: str) -> list[str]:
    """Verdicts standing alone on their lines ("2", "Tie."), and "Submission 2" only as the last line:
    ScaleEval asks to repeat the number alone on the last line, and judges often write it twice."""
    raw = [line.strip() for line in text.splitlines() if line.strip(_AROUND_A_VERDICT)]
    lines = [line.strip(_AROUND_A_VERDICT) for line in raw]
    if len({line for line in raw if _NUMBERS_ONLY.fullmatch(line)}) > 1:
        return []  # "1.1 / 2.3 / 0", "1. 1 / 2.": a column of numbers, not an answer standing alone
    found = [m.group(1) for n, line in enumerate(lines) if (m := _BARE_VERDICT.fullmatch(line))
             and not _opens_a_list(raw, n) and not (n and _SAMPLE_INTRO.search(raw[n - 1]))]
    last = _LAST_LINE_VERDICT.fullmatch(lines[-1]) if lines else None
    return found or ([last.group(1)] if last else [])


def parse_verdict(text: str) -> Verdict | None:
    """ScaleEval's verdict: "1" or "2" for the better submission, "0" for a tie; None when unclear,
    refused, or when the reply gives two different answers. Quoted passages (a submission's words,
    the options echoed back) are not the judge's verdict."""
    if is_refusal(text):
        return None
    text = unquoted(_without_options(without_echo(text)).replace("*", "").replace("`", ""))
    text = _ORDINAL_SUBJECT.sub(lambda m: f"{m.group(2)} {1 if m.group(1).lower() == 'first' else 2}", text)
    values = [next(g for g in m.groups() if g) for m in _FINAL_VERDICT.finditer(text)]
    if values:
        return _single(values)
    values = _answer_lines(text)
    if values:  # the conclusion written just before the answer must not say otherwise
        lines = list(re.finditer(r"(?m)^\W*(?:" + "|".join(map(re.escape, set(values))) + r")\W*$", text))
        concluded = _stated(text[max(0, lines[0].start() - _CONCLUSION) : lines[0].start()] + "\n"
                            + text[lines[-1].end() :]) if lines else []
        return _single(values + concluded)
    values = [m.group(1) for m in _QUOTED_CHOICE.finditer(text)
              if not _SOMEONE_ELSES.search(before := text[max(0, m.start() - 40) : m.start()])
              and not _HYPOTHETICAL.search(before) and not _OPTION_FORM.match(text, line_start(text, m.start()))]
    if values:  # and the reply's verdict sentences agree ('Submission 2 is better: "1"' says neither)
        return _single(values + _stated(text))
    answers = list(_ANSWER_LABEL.finditer(text))
    labelled = list(_LABEL_VERDICT.finditer(text)) + (answers if all(m.group(1) for m in answers) else [])
    values = [m.groups()[-1] for m in labelled
              if not _SOMEONE_ELSES.search(text[max(0, m.start() - 40) : m.start()])]  # "my original answer: 1"
    if values:
        return _single(values)
    values = _stated(text, own_prose=True)
    return _single(values) if values else None


def _stated(text: str, own_prose: bool = False) -> list[str]:
    """Verdicts said in words: "Submission 2 is better", "Submission 1 is less accurate", "a tie". With
    `own_prose`, only in the reply's own sentences: not on a list item's line ("2. The second answer is more
    helpful (1)": an option enumerated) nor in an option's form copied back ("Submission 1 is better: 3"),
    which say enough to contradict an answer found elsewhere but are no answer by themselves."""
    values = []
    for m in _BETTER.finditer(text):
        if _reported(text, m) or own_prose and _COPIED_LINE.match(text, line_start(text, m.start())):
            continue
        which, quality = m.group(1) or m.group(3) or m.group(4), (m.group(2) or "").lower()
        worse = quality.startswith(("worse", "inferior", "weaker", "less"))
        values.append({"1": "2", "2": "1"}[which] if worse else which)
    return values + ["0" for m in _TIE.finditer(text) if not (_in_quotes(text, m) or _reported(text, m))]


def _reported(text: str, m: re.Match[str]) -> bool:
    """A verdict in a sentence about another's answer, up to it: reported, not given."""
    return bool(_ANOTHERS_SENTENCE.search(text, line_start(text, m.start()), m.start()))


_GLOSS_BEFORE = re.compile(r"[\"”'’][ \t]*\($")


def _in_quotes(text: str, m: re.Match[str]) -> bool:
    """A word named in quotes (the "Tie" fallacy), or glossing a quoted option ("'Verdict: 0' (tie)"): mentioned,
    not said."""
    named = text[m.start() - 1 : m.start()] in "\"“'‘" and text[m.end() : m.end() + 1] in "\"”'’" and m.start() > 0
    return named or bool(_GLOSS_BEFORE.search(text, 0, m.start()) and text[m.end() : m.end() + 1] == ")")
