"""How `parse_error_report` reads MATEval's released English reports (ROC and WP), and LOT's placed share.

    python tools/mateval_english_figures.py

It reads the released reports the tests hold (tests/fixtures/mateval_english_reports.jsonl.xz: ROC and WP,
stories 0-39, copied from ../shared/data/mateval/{ROC,WP}; mateval_lot_reports.jsonl.xz: LOT's 300).

The reference is each report's own arithmetic, read here by a rule of its own (not by the reader): per
question, the points its "Score for individual questions: N" line deducts; per report, its "Final Score".
Figures, per data set and split (stories 0-29 were used to develop the reader, 30-39 were held out):
- cells wrong: (report, error type) cells whose deductions read differ from the question's own score;
- Yes answers wrong: the same, among the cells the report prices above 0;
- arithmetic closes: reports whose final score equals minus the sum of the deductions read;
- quotes placed: the quoted passages of three words or more found in the story (any quote form) that
  some error read covers, over all such passages of the reports' Yes questions.
"""

from __future__ import annotations

import json
import lzma
import re
from collections import Counter
from pathlib import Path

from debate_tui.domain import ErrorSpan
from debate_tui.parsing import find_passages, locate, parse_error_report, passage_words

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
NAMES = {"REP": "repetition", "LINC": "logical", "DCONT": "discontinu", "ILC": "lexical", "FER": "factual",
         "重复": "REP", "逻辑": "LINC", "连贯": "DCONT", "用词": "ILC", "事实": "FER"}
_QUESTION = re.compile(r"^\W*(?:question|问题?)\s*[:：](.*)$", re.I | re.M)
_OWN_SCORE = re.compile(r"score\s+for\s+individual\s+questions?\s*[:：]?\s*[-—]?\s*(\d+(?:\.\d+)?)"
                        r"|单项(?:问题)?得分\s*[:：]\s*[-—]?\s*(\d+(?:\.\d+)?)", re.I)
_FINAL = re.compile(r"final\s+score\s*[:：]?\s*\**\s*[-—]?\s*(\d+(?:\.\d+)?)"
                    r"|最终得分\s*[:：]\s*[-—]?\s*(\d+(?:\.\d+)?)", re.I)


def _kind(question: str) -> str | None:
    low = question.lower()
    hits = {kind for kind, clue in NAMES.items() if kind.isascii() and clue in low}
    hits |= {NAMES[clue] for clue in NAMES if not clue.isascii() and clue in question}
    return hits.pop() if len(hits) == 1 else None


def questions(report: str) -> list[tuple[str, str]]:
    """(type, the question's block of text) for each question the report asks, in order."""
    marks = list(_QUESTION.finditer(report.replace("**", "")))
    blocks = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(report.replace("**", ""))
        if kind := _kind(mark.group(1)):
            blocks.append((kind, report.replace("**", "")[mark.start():end]))
    return blocks


def own_scores(report: str) -> dict[str, float]:
    """The points each question's own score line deducts (the block's last such line)."""
    scores: dict[str, float] = {}
    for kind, block in questions(report):
        found = [float(m.group(1) or m.group(2)) for m in _OWN_SCORE.finditer(block)]
        if found and kind not in scores:
            scores[kind] = found[-1]
    return scores


def final_score(report: str) -> float | None:
    found = [float(m.group(1) or m.group(2)) for m in _FINAL.finditer(report.replace("**", ""))]
    return found[-1] if found else None


def quoted_in_story(block: str, story: str) -> list[tuple[int, int]]:
    """Spans of the story that the block quotes (three words or more, any quote form)."""
    spans = []
    for m in find_passages(block):
        words = passage_words(m)
        long_enough = len(re.findall(r"\w+", words)) >= 3 or any(ord(c) > 0x2e80 for c in words)
        if long_enough and (where := locate(words, story)) is not None:
            spans.append(where)
    return spans


def covered(span: tuple[int, int], errors: list[ErrorSpan]) -> bool:
    return any(e.start is not None and e.end is not None and e.start < span[1] and span[0] < e.end for e in errors)


def measure(rows: list[dict[str, object]]) -> dict[str, float]:
    count: Counter[str] = Counter()
    for row in rows:
        report, story = str(row["report"]), str(row["story"])
        errors = parse_error_report(report, story)
        read: Counter[str] = Counter()
        for error in errors:
            read[error.type] += error.deduction
        for kind, points in own_scores(report).items():
            count["cells"] += 1
            count["cells wrong"] += abs(read[kind] - points) > 1e-9
            if points:
                count["yes"] += 1
                count["yes wrong"] += abs(read[kind] - points) > 1e-9
        final = final_score(report)
        if final is not None:
            count["finals"] += 1
            count["closes"] += abs(final - sum(e.deduction for e in errors)) < 1e-9
        scores = own_scores(report)
        for kind, block in questions(report):
            if scores.get(kind):
                for span in quoted_in_story(block, story):
                    count["quotes"] += 1
                    count["placed"] += covered(span, [e for e in errors if e.type == kind])
    return count


def line(name: str, count: Counter[str]) -> str:
    def share(part: str, whole: str) -> str:
        return f"{count[part]}/{count[whole]} ({100 * count[part] / max(count[whole], 1):.1f}%)"
    return (f"{name:<16} reports {count['finals']:>3}  cells wrong {share('cells wrong', 'cells')}"
            f"  Yes wrong {share('yes wrong', 'yes')}  arithmetic closes {share('closes', 'finals')}"
            f"  quotes placed {share('placed', 'quotes')}")


def main() -> None:
    english = read_rows(FIXTURES / "mateval_english_reports.jsonl.xz")
    for name in ("ROC", "WP"):
        rows = [r for r in english if r["dataset"] == name]
        print(line(f"{name} 0-29 (dev)", measure([r for r in rows if int(r["id"]) < 30])))
        print(line(f"{name} 30-39 (held)", measure([r for r in rows if int(r["id"]) >= 30])))
    print(line("LOT all", measure(read_rows(FIXTURES / "mateval_lot_reports.jsonl.xz"))))


def read_rows(path: Path) -> list[dict[str, object]]:
    with lzma.open(path, "rt", encoding="utf-8") as lines:
        return [json.loads(text) for text in lines if text.strip()]


if __name__ == "__main__":
    main()
