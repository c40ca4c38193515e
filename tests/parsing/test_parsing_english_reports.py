"""MATEval's English Q&A reports (its authors' released GPT reports for ROC and WP): each form they take, and the
240 released reports read within their own arithmetic, every quote that is in the story placed there."""

from __future__ import annotations

import json
import lzma
from collections import Counter

import pytest

from debate_tui.parsing import parse_error_report
from tests.helpers import FIXTURES
from tools import mateval_english_figures as figures

STORY = ("Tom went to the lake to fish. He caught a big whale in the lake. Tom went to the lake to fish. "
         "He cooked the fish for dinner. The moon was shining at noon.")
WHALE, COOKED, MOON = (STORY.index(s) for s in ("He caught", "He cooked", "The moon"))


def read(report: str) -> list[tuple[str, str, float]]:
    return [(e.type, e.quote, e.deduction) for e in parse_error_report(report, STORY)]


def located(report: str) -> list[tuple[str, int | None, float]]:
    return [(e.type, e.start, e.deduction) for e in parse_error_report(report, STORY)]


@pytest.mark.parametrize("points", ["-2", "-0.5", "-2 points (1 point for each issue)", "2"])
def test_the_score_for_individual_questions_prices_the_yes(points: str) -> None:
    report = f"""Question: Does the above story contain 'Factual Error'?
Answer: Yes
The text says "He caught a big whale in the lake." and "The moon was shining at noon."
Score for individual questions: {points}"""
    worth = float(points.split()[0].lstrip("-"))
    assert located(report) == [("FER", WHALE, worth / 2), ("FER", MOON, worth / 2)]


@pytest.mark.parametrize("taken_back", [
    "Score for individual questions: 0",
    "Score: 0",
    "However, on reflection this is a stylistic choice, so no points were deducted for it.",
])
def test_a_zero_score_or_no_points_deducted_withdraws_the_yes(taken_back: str) -> None:
    report = f"""Question: Does the above story contain 'Repetition'?
Answer: Yes
The sentence "Tom went to the lake to fish." is repeated.
{taken_back}

Question: Does the above story contain 'Factual Error'?
Answer: Yes
"The moon was shining at noon." The moon is not seen shining at noon.
Score for individual questions: -1"""
    assert read(report) == [("FER", "The moon was shining at noon.", 1.0)]


@pytest.mark.parametrize("deduction,worth", [
    ("Deductions: 2 (1 for each inconsistency)", 2.0),
    ("Deduction for Logical Inconsistency: -2", 2.0),
    ("Deduction: 1 for each issue = 2", 2.0),
    ("Deduction: -1", 2.0),  # one deduction per quoted sentence, as MATEval's annotations price them
])
def test_the_deduction_forms_are_read_when_no_score_line_follows(deduction: str, worth: float) -> None:
    report = f"""Question: Does the above story contain 'Logical Inconsistency'?
Answer: Yes
Specific original sentences: "He caught a big whale in the lake." and "He cooked the fish for dinner."
Explanation: No whale lives in a lake, and he caught no fish.
{deduction}

Final Score: -{worth:g}
Calculation process: 0 - {worth:g} (Logical Inconsistency) = -{worth:g}. Deduction for Repetition: 0."""
    errors = parse_error_report(report, STORY)
    assert [(e.type, e.start) for e in errors] == [("LINC", WHALE), ("LINC", COOKED)]
    assert sum(e.deduction for e in errors) == worth


def test_an_answer_glued_to_its_question_is_read() -> None:
    report = """Question: Does the above story contain 'Repetition'?Answer: Yes.
"Tom went to the lake to fish." appears twice.
Score for individual questions: -1
Question: Does the above story contain 'Discontinuity'?Answer: No.
Score for individual questions: 0"""
    assert located(report) == [("REP", 0, 1.0)]


@pytest.mark.parametrize("label", ["Specific original sentence(s):", "Specific original sentences:",
                                   "Original sentences:", "Original sentence:", "Sentences:"])
def test_the_quotes_after_each_location_label_are_placed(label: str) -> None:
    report = f"""Question: Does the above story contain 'Factual Error'?
Answer: Yes
{label} "He caught a big whale in the lake.", "The moon was shining at noon."
Explanation: Whales live in the sea; the moon does not shine at noon.
Score for individual questions: -2"""
    assert located(report) == [("FER", WHALE, 1.0), ("FER", MOON, 1.0)]


@pytest.mark.parametrize("marker", ["1.", "-", "*", "2)"])
def test_numbered_or_bulleted_quotes_are_placed(marker: str) -> None:
    report = f"""Question: Does the above story contain 'Factual Error'?
Answer: Yes
Specific original sentences:
{marker} "He caught a big whale in the lake." Whales live in the sea.
{marker} "The moon was shining at noon." The moon is not seen at noon.
Score for individual questions: -2"""
    assert located(report) == [("FER", WHALE, 1.0), ("FER", MOON, 1.0)]


def test_a_score_line_before_the_errors_prices_the_errors_after_it() -> None:
    report = """Question: Does the above story contain 'Repetition'?
Answer: Yes.
Score for individual questions: -1
The sentence "Tom went to the lake to fish." is repeated, adding nothing.

Question: Does the above story contain 'Factual Error'?
Answer: Yes. The sentence "The moon was shining at noon." is wrong.
Score for individual questions: -1"""
    assert located(report) == [("REP", 0, 1.0), ("FER", MOON, 1.0)]


def test_quotes_of_the_fix_and_the_closing_lines_add_no_error() -> None:
    report = """Question: Does the above story contain 'Inappropriate Lexical Choice'?
Answer: Yes
The word "whale" in "He caught a big whale in the lake." should be "trout" ("He caught a big trout").
Score for individual questions: -1

Final Score: -1 points
Calculation process: "He cooked the fish for dinner." is fine; 1 point deducted for 'Inappropriate Lexical Choice'."""
    assert located(report) == [("ILC", STORY.index("whale"), 1.0)]  # the first passage in the story; the fix is not


def test_a_yes_with_nothing_quoted_costs_its_score_unplaced() -> None:
    report = """Question: Does the above story contain 'Discontinuity'?
Answer: Yes
Explanation: The story jumps from the lake to dinner with no transition.
Score for individual questions: -1"""
    assert read(report) == [("DCONT", "", 1.0)]


def _released() -> dict[tuple[str, str, int], dict[str, object]]:
    with lzma.open(FIXTURES / "mateval_english_reports.jsonl.xz", "rt", encoding="utf-8") as lines:
        return {(row["dataset"], row["strategy"], row["id"]): row for row in map(json.loads, lines)}


def test_a_few_released_reports_read_as_a_careful_reader_reads_them() -> None:
    """Read by hand: the quotes each report names at fault and what each question deducts."""
    rows = _released()

    def reading(key: tuple[str, str, int]) -> list[tuple[str, str, float]]:
        row = rows[key]
        return [(e.type, e.quote, round(e.deduction, 3)) for e in parse_error_report(str(row["report"]),
                                                                                    str(row["story"]))]
    assert reading(("ROC", "SA", 0)) == [  # a phrase quoted in prose; a LINC quoting the two sentences that clash
        ("REP", "The girls", 1.0),
        ("LINC", "Every single one of the girls didn't go to sleep all night", 0.5),
        ("LINC", "none of the girls were very awake when their parents picked them up.", 0.5)]
    assert reading(("ROC", "O_b_O", 26))[1] == (  # a Yes priced -0.5, four sentences quoted after the label
        "DCONT", str(rows[("ROC", "O_b_O", 26)]["story"]).rstrip(), 0.5)
    four = reading(("WP", "SA", 4))
    assert [t for t, _, _ in four].count("LINC") == 5 and sum(d for t, _, d in four if t == "LINC") == 5
    assert reading(("WP", "O_b_O", 16))[:2] == [  # the score line before the quote it prices
        ("REP", "she doesn't say why", 1.0),
        ("LINC", "the people always look down like they are nervous and like me very much", 1.0)]


def test_the_released_english_reports_are_read_within_their_own_arithmetic() -> None:
    rows = list(_released().values())
    count: Counter[str] = figures.measure(rows)
    assert count["cells"] == 1181 and count["finals"] == 240
    assert count["cells wrong"] == 0  # 89 of 1,181 before (ROC 28, WP 61)
    assert count["closes"] >= 238  # 238 measured: WP O_b_O 14 and 17 state a final score their own lines do not sum to
    assert count["placed"] == count["quotes"] == 730  # 0 of 730 placed before


def test_the_chinese_reports_keep_their_placed_share() -> None:
    count = figures.measure(figures.read_rows(FIXTURES / "mateval_lot_reports.jsonl.xz"))
    assert count["placed"] / count["quotes"] >= 0.895  # 1,010 of 1,128 (89.5%), as before the English forms
