"""MATEval's Chinese Q&A reports read into errors: the released LOT reports, and the forms they take."""

from __future__ import annotations

import json
import lzma
import re
from collections import Counter
from pathlib import Path

from debate_tui.parsing import answer_says, parse_error_report
from debate_tui.protocols.mateval import answered_types

RELEASED = Path(__file__).parent / "fixtures" / "mateval_lot_reports.jsonl.xz"
"""MATEval's 300 released summary reports for the first 60 LOT stories (5 strategies; ../shared/data/mateval/LOT)."""
NAMES = {"REP": "重复", "LINC": "逻辑", "DCONT": "连贯", "ILC": "用词", "FER": "事实"}
STORY = "国王病了，他很痛苦。他昭告天下如果谁能把他的病治好，就把王国的一半分给那人。于是，皇帝派人去寻找幸福的人。"


def stated(report: str) -> dict[str, int]:
    """The points each question's own line (单项问题得分) deducts: how the report scores itself."""
    points, kind = {}, None
    for line in report.replace("**", "").splitlines():
        if question := re.match(r"^\s*(?:\d+[.、)]\s*)?问题?\s*[:：](.*)$", line):
            kind = next((t for t, name in NAMES.items() if name in question.group(1)), None)
        elif (score := re.match(r"^\s*单项(?:问题)?得分\s*[:：]\s*(-?\d+)", line)) and kind:
            points[kind] = abs(int(score.group(1)))
    return points


def test_the_released_chinese_reports_are_read_as_they_score_themselves():
    with lzma.open(RELEASED, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    agree, total = Counter(), Counter()
    for row in rows:
        found = Counter(e.type for e in parse_error_report(row["report"], row["story"]))
        for kind, points in stated(row["report"]).items():
            total[kind] += 1
            agree[kind] += found[kind] == points
    assert sum(total.values()) == 1430
    assert sum(agree.values()) / sum(total.values()) >= 0.94  # 94.5% when measured; 46.9% before
    assert all(agree[kind] / total[kind] >= 0.89 for kind in NAMES), {k: agree[k] / total[k] for k in NAMES}


def test_each_chinese_form_of_an_error_is_read():
    report = """问：上述故事中是否包含'重复问题'？
答：是
"于是，皇帝派人去寻找幸福的人。"这句话重复了，“幸福的人”出现了两次。
单项问题得分：-1

问：上述故事中是否包含'逻辑问题'？
答：是。评审员们讨论后认为，这并不构成逻辑问题。
单项问题得分：0

问：上述故事中是否包含'用词不当'？
答：是
原句：“他昭告天下如果谁能把他的病治好，就把王国的一半分给那人。”
问题解释：“昭告天下”用得不太恰当。
单项问题得分：-1

问：上述故事中是否包含'事实性错误'？
答：否
单项问题得分：0

最终得分：-2 分
计算过程：基础分0 - 重复问题1 - 用词不当1 = -2分"""
    errors = parse_error_report(report, STORY)
    assert [(e.type, e.quote, e.located) for e in errors] == [
        ("REP", "于是，皇帝派人去寻找幸福的人。", True),  # the line's first quote; later ones are its words
        ("ILC", "他昭告天下如果谁能把他的病治好，就把王国的一半分给那人。", True),
    ], "a yes its own score takes back (单项问题得分：0) counts nothing"
    assert errors[1].explanation == "“昭告天下”用得不太恰当。"
    assert answered_types(report) == {"REP", "LINC", "ILC", "FER"}
    assert [answer_says(a) for a in ("是", "是的", "存在", "否", "不存在", "没有", "Yes.", "no", "也许")] == \
        [True, True, True, False, False, False, True, False, None]


def test_a_sample_read_by_hand_agrees_with_the_reader():
    labels = json.loads((RELEASED.parent / "lot_hand_labels.json").read_text(encoding="utf-8"))["labels"]
    with lzma.open(RELEASED, "rt", encoding="utf-8") as lines:
        reports = {f"{row['strategy']}/{row['id']}": row for row in map(json.loads, lines)}
    agreed = 0
    for key, counts in labels.items():
        row = reports[key]
        found = Counter(e.type for e in parse_error_report(row["report"], row["story"]))
        agreed += sum(found[kind] == n for kind, n in counts.items())
    assert agreed >= 47, f"{agreed} of 50"  # 47 when measured: three lines state two or three errors each
