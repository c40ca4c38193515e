"""MATEval's Chinese Q&A reports read into errors: the released LOT reports, and the forms they take."""

from __future__ import annotations

import json
import lzma
import re
from collections import Counter, defaultdict

from debate_tui.parsing import answer_says, answered_types, parse_error_report
from tests.helpers import FIXTURES

RELEASED = FIXTURES / "mateval_lot_reports.jsonl.xz"
"""MATEval's 300 released summary reports for the first 60 LOT stories (5 strategies; ../shared/data/mateval/LOT)."""
NAMES = {"REP": "重复", "LINC": "逻辑", "DCONT": "连贯", "ILC": "用词", "FER": "事实"}
STORY = "国王病了，他很痛苦。他昭告天下如果谁能把他的病治好，就把王国的一半分给那人。于是，皇帝派人去寻找幸福的人。"


def stated(report: str) -> dict[str, float]:
    """The points each question's own line (单项问题得分) deducts: how the report scores itself."""
    points: dict[str, float] = {}
    kind = None
    for line in report.replace("**", "").splitlines():
        if question := re.match(r"^\s*(?:\d+[.、)]\s*)?问题?\s*[:：](.*)$", line):
            kind = next((t for t, name in NAMES.items() if name in question.group(1)), None)
        elif (score := re.match(r"^\s*单项(?:问题)?得分\s*[:：]\s*(-?\d+(?:\.\d+)?)", line)) and kind:
            points[kind] = abs(float(score.group(1)))
    return points


def test_the_released_chinese_reports_are_read_as_they_score_themselves() -> None:
    with lzma.open(RELEASED, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    agree, total = Counter(), Counter()
    for row in rows:
        found: defaultdict[str, float] = defaultdict(float)
        for error in parse_error_report(row["report"], row["story"]):
            found[error.type] += error.deduction
        for kind, points in stated(row["report"]).items():
            total[kind] += 1
            agree[kind] += found[kind] == points
    assert sum(total.values()) == 1430
    assert sum(agree.values()) / sum(total.values()) >= 0.99  # 99.3% when measured; 94.5% counting errors; 46.9%
    assert all(agree[kind] / total[kind] >= 0.98 for kind in NAMES), {k: agree[k] / total[k] for k in NAMES}


def test_each_chinese_form_of_an_error_is_read() -> None:
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


def test_a_sample_read_by_hand_agrees_with_the_reader() -> None:
    labels = json.loads((RELEASED.parent / "lot_hand_labels.json").read_text(encoding="utf-8"))["labels"]
    with lzma.open(RELEASED, "rt", encoding="utf-8") as lines:
        reports = {f"{row['strategy']}/{row['id']}": row for row in map(json.loads, lines)}
    agreed = 0
    for key, counts in labels.items():
        row = reports[key]
        found: defaultdict[str, float] = defaultdict(float)
        for error in parse_error_report(row["report"], row["story"]):
            found[error.type] += error.deduction
        agreed += sum(found[kind] == n for kind, n in counts.items())
    # 49 measured (47 before the question's own score set what its errors cost); the one left: O_b_O 43's ILC,
    # one 原句 with two problems named (语序不通顺和不明确的主语), -2 as the report and its 计算过程 say; labelled 1
    assert agreed >= 49, f"{agreed} of 50"


def test_a_larger_sample_read_by_hand_agrees_with_the_reader() -> None:
    """25 more reports, 5 per strategy (seed 2026), labelled per type with the deduction a careful reader
    makes and the quoted location (tests/fixtures/lot_hand_labels_seed2026.README.md)."""
    with lzma.open(RELEASED, "rt", encoding="utf-8") as lines:
        reports = {f"{row['strategy']}/{row['id']}": row for row in map(json.loads, lines)}
    fixture = RELEASED.parent / "lot_hand_labels_seed2026.jsonl"
    labelled = [json.loads(line) for line in fixture.read_text(encoding="utf-8").splitlines()]
    assert len(labelled) == 25 and Counter(item["strategy"] for item in labelled) == dict.fromkeys(
        ("SA", "O_b_O", "SR", "CoT", "SR+CoT"), 5)
    agreed = located = quoted = 0
    for item in labelled:
        row = reports[f"{item['strategy']}/{item['id']}"]
        errors = parse_error_report(row["report"], row["story"])
        for kind, label in item["types"].items():
            agreed += sum(e.deduction for e in errors if e.type == kind) == label["deduction"]
            if label["location"]:
                quoted += 1
                located += any(label["location"].strip("。") in e.quote or (e.quote and e.quote in label["location"])
                               for e in errors if e.type == kind)
    assert agreed >= 123, f"{agreed} of 125"  # 123 measured (117 on main before; 61 before Chinese was read)
    assert located >= 49, f"{located} of {quoted}"  # 49 of 50 measured


def test_several_quotes_on_one_line_are_several_errors_only_when_the_score_counts_them() -> None:
    story = "小猫在河边钓鱼。它钓到了一只老虎。老虎说谢谢。小猫回家了。"
    template = """问：上述故事中是否包含'事实性错误'？
答：是
原句：“它钓到了一只老虎。”和“老虎说谢谢。”
问题：老虎不会被钓到，也不会说话。
单项问题得分：-{n}"""
    two = parse_error_report(template.format(n=2), story)
    reason = "老虎不会被钓到，也不会说话。"
    assert [(e.quote, e.located, e.explanation) for e in two] == [
        ("它钓到了一只老虎。", True, reason), ("老虎说谢谢。", True, reason)]
    one = parse_error_report(template.format(n=1), story)
    assert [(e.quote, e.deduction) for e in one] == [("它钓到了一只老虎。", 0.5), ("老虎说谢谢。", 0.5)], \
        "one problem quoting two places: one deduction, shared by the places"


def test_numbered_locations_each_start_an_error() -> None:
    story = "将军走了下来。将军气得将一等兵全部枪毙了。"
    report = """问：上述故事中是否包含'逻辑问题'？
答：是
原句1：“将军走了下来。”
问题：没有说明原因。
原句2：“将军气得将一等兵全部枪毙了。”
问题：这个行为不合逻辑。
单项问题得分：-2"""
    assert [(e.type, e.quote, e.explanation) for e in parse_error_report(report, story)] == [
        ("LINC", "将军走了下来。", "没有说明原因。"), ("LINC", "将军气得将一等兵全部枪毙了。", "这个行为不合逻辑。")]



def test_the_released_variants_are_read() -> None:
    """Slips the released reports make: a question written 答：, 问 and 答 on one line, an answer without 答：,
    具体原句：, two errors in one 原句 line, a half point, two score lines for one question."""
    report = """答：上述故事中是否包含'重复问题'？
是。“于是，皇帝派人去寻找幸福的人。”重复了。
单项问题得分：-0.5分
问：上述故事中是否包含'逻辑问题'？答：是
具体原句：国王病了，他很痛苦。
单项问题得分：-1
问：上述故事中是否包含'用词不当'？
答：是
原句：“昭告天下”，“王国的一半”
单项问题得分：-2
问：上述故事中是否包含'事实性错误'？
答：是
原句：“国王病了，他很痛苦。”和“于是，皇帝派人去寻找幸福的人。”
单项问题得分：-1
问：上述故事中是否包含'连贯性问题'？
答：是
原句：“国王病了，他很痛苦。”
单项问题得分：-1
原句：“于是，皇帝派人去寻找幸福的人。”
单项问题得分：-1"""
    errors = parse_error_report(report, STORY)
    assert [(e.type, e.quote, e.deduction) for e in errors] == [
        ("REP", "于是，皇帝派人去寻找幸福的人。", 0.5),
        ("LINC", "国王病了，他很痛苦。", 1.0),
        ("ILC", "昭告天下", 1.0), ("ILC", "王国的一半", 1.0),
        ("FER", "国王病了，他很痛苦。", 0.5), ("FER", "于是，皇帝派人去寻找幸福的人。", 0.5),  # one error, 2 quotes
        ("DCONT", "国王病了，他很痛苦。", 1.0), ("DCONT", "于是，皇帝派人去寻找幸福的人。", 1.0),
    ]
    assert all(e.located for e in errors)
    assert answered_types(report) == {"REP", "LINC", "ILC", "FER", "DCONT"}
