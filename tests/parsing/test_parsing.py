"""Unit tests for debate_tui.parsing: every form a judge writes, and the ones that must stay unread."""

from __future__ import annotations

import pytest

from debate_tui.parsing import (
    ERROR_REPORT_FORMAT,
    ERROR_TYPES,
    answered_types,
    find_passages,
    is_no_issue,
    is_refusal,
    locate,
    normalize_error_type,
    parse_error_report,
    parse_pair_scores,
    parse_score,
    parse_verdict,
    passage_words,
    read_answer,
    readable_types,
)


@pytest.mark.parametrize(
    ("text", "low", "high", "expected"),
    [
        ("1. Groundedness: 0", 0, 1, 0),
        ("- Coherence: 3", 1, 3, 3),
        ("The reply is fine, scoring a 2 out of 5.", 1, 5, 2),
        ("Rating: 1\nRationale: dull, I would give 2 to a livelier one.", 1, 3, 1),
        ("Keep it under 150 words, as asked.\n\n2", 1, 3, 2),
        ("Engagingness:\n2", 1, 3, 2),
        ("The response ignores the fact (1)", 1, 3, 1),
        ("3/5", 1, 5, 3),
        ("Score: 4.5", 1, 5, 4.5),
        ("**Score:** 4", 1, 5, 4),
        ("I would rate it 3.", 1, 5, 3),
        ("2 out of 3", 1, 3, 2),
        ("Score: 2.5", 1, 3, 2.5),
        ("Groundedness: 0", 0, 1, 0),
        ("1. 2", 1, 3, 2),
        ("2.", 1, 3, 2),
        ("Good (3)", 1, 3, 3),
        ("1 (dull)", 1, 3, 1),
        ("2. somewhat interesting", 1, 3, 2),
        ("fact: 1\nresponse: 1", 0, 1, 1),
        ("Response: \n\n3", 1, 3, 3),
        ("The score for Naturalness for this response is 2.", 1, 3, 2),
        ("In 2019 the answer was short. Score: 3", 1, 5, 3),
        ("Score: 3 points", 1, 5, 3),
        ("Coherence: 8/10", 1, 10, 8),
        ("On a scale of 1-3, I'd give it 2.", 1, 3, 2),
        ("Score: -1", -5, 0, -1),
        ("Fact: judge judy makes $ 123,000 per episode.\n- Groundedness: 1", 0, 1, 1),
        ("Rating: [[4]]", 1, 5, 4),
        ("I revise my score from 4 to 3.", 1, 5, 3),
        ("Coherence: 4/5\n\nThe summary has 3 sentences, 2 of them long.", 1, 5, 4),
        ("Score: 4 (out of 5)", 1, 5, 4),
        ("My score remains 3 (it was 3 before).", 1, 5, 3),
        ("5. Score: N = 3", 1, 5, 3),  # the placeholder filled in on the score's own line
        ("Previous score: 4\nNew score: 3", 1, 5, 3),  # another's answer reported, then its own
    ],
)
def test_parse_score_reads_the_score_given(text: str, low: float, high: float, expected: float) -> None:
    assert parse_score(text, low, high) == expected


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("", 1, 3),
        ("N/A", 0, 1),
        ("The response is natural.", 1, 3),
        ("1. Natural", 1, 3),  # a list number and a cut-off word
        ("2. The article focuses on the team's decision to replace Maria.", 1, 5),  # an item of a list begun elsewhere
        ("3", 0, 1),  # outside the scale
        ("Score: 7", 1, 5),
        ("scoring a 2 out of 5", 1, 3),  # another scale's score
        ("Keep it under 150 words.", 1, 200),
        ("It has 3 points about jazz.", 1, 5),
        ("It mentions 3 pop albums.", 1, 5),
        ("In 2019 it was released.", 1, 5),
        ("Assign a rating score of 1, 2, or 3 based on the evaluation.", 1, 3),
        ("A score of 1 (bad) means that the response is unnatural.", 1, 3),
        ("I'd rate it 2-3.", 1, 3),
        ("Naturalness: 2\nCoherence: 3", 1, 3),  # two labelled scores that disagree
        ("I like 2 of them and 3 of the others", 1, 5),
        ("at the 9:30 club", 0, 10),
        ("- Ground", 0, 1),
        (
            "Evaluation Steps:\n\n1. Read the conversation.\n2. Read the response.\n"
            "3. Evaluate its naturalness.\n4. Assign a rating score of 1, 2, or 3.",
            1,
            3,
        ),
    ],
)
def test_parse_score_returns_none_rather_than_guessing(text: str, low: float, high: float) -> None:
    assert parse_score(text, low, high) is None


@pytest.mark.parametrize(
    "text",
    [
        "NO ISSUE",
        "NO ISSUES",
        "NO_ISSUES",
        "no issue.",
        "No issues!",
        "**NO ISSUE**",
        "The score of 4 is well justified.\nNO ISSUE",
        "I checked grammar and coherence again.\n\nConclusion: no issue.",
        "Both points were addressed, so there is NO ISSUE left.",
    ],
)
def test_is_no_issue_accepts(text: str) -> None:
    assert is_no_issue(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "there is no issue with grammar, however the score is too high",
        "No issue with grammar, but coherence deserves 2, not 4.",
        "The score should be 2, not 4.",
        "I have issues with this score.",
        "The score ignores the repeated sentence. If it is justified, reply NO ISSUE.",
        'I cannot say "NO ISSUE" here: the score is too high.',
        "There is NO ISSUE with the grammar, but the score of 4 is too high.",
    ],
)
def test_is_no_issue_rejects(text: str) -> None:
    assert not is_no_issue(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Final answer: 1", "1"),
        ("[[2]]", "2"),
        ("Submission 2 is better.", "2"),
        ("Answer: 0", "0"),
        ("tie", "0"),
        ("Both are equally good.", "0"),
        ("Submission 1 is clear.\nSubmission 2 rambles.\n\n1", "1"),
        ("Final verdict: tie", "0"),
        ("Final answer: Submission 2", "2"),
        ("I prefer Submission 1.", "1"),
        ("Submission 1 is less accurate than Submission 2.", "2"),
        ("It is not a tie: Submission 1 is better.", "1"),
        ("Submission 2 is better overall. Final answer: 1", "1"),  # the final answer wins
        ("Both answers are correct, but one is clearer.\n**Submission 2**", "2"),
        ("They are close.\nTie.", "0"),
        ("The two submissions are tied.", "0"),
        ("Speaker 1's answer: 1 overlooked the bug. Keep it under 150 words. I change my answer.\n\n2\n2", "2"),
        ("Neither is better.\n\n0", "0"),
        ("After weighing both, the second submission is better.", "2"),
        ("It's close, but Submission 2's answer is the one I'd pick.\nVerdict: 2", "2"),  # apostrophes, no quote
        ('1\nThank you for your patience.\nChoose one of the following options:\nSubmission 1 is better: "1"\n'
         'Submission 2 is better: "2"', "1"),  # the options copied back are not a second answer
        ("The first response is less accurate than the other.", "2"),
        ("Submission 2 is clearer and covers the edge case.\n\n2\n2", "2"),  # the answer written twice
        ("1\nWhy:\n1. It answers the question.\n2. It is shorter.", "1"),  # its reasons listed after the answer
        ("0\n1. Both are right.\n2. Both are short.", "0"),
    ],
)
def test_parse_verdict(text: str, expected: str) -> None:
    assert parse_verdict(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Both have merits and flaws; it is hard to decide.",
        "Submission 1 is better in style but Submission 2 is better in content.",
        "Submission 1 is clearer, while Submission 2 is more detailed.",
        "Final answer: 1\nFinal answer: 2",
        '1\nSubmission 2 is better: "2"',  # the answer line, then the other submission named better
        'I am not sure. Please provide a response that ends with the phrase "Verdict: 1".',  # a quoted format
        "Submission 1 is not better than Submission 2 in every respect.",
        "The answer has 150 words.",
        '3. The second submission is better: "1"',  # a quoted choice its own sentence contradicts
        "I'm sorry, it's not possible.\nYour reply ended with a line 'Verdict: 1', which is incorrect.",  # another's
        "End with a line 'Verdict: 1', 'Verdict: 2' or 'Verdict: 0' (tie).",  # the instruction, its option glossed
        'Third, choose one of the following options:\nSubmission 1 is better: "1"\nSubmission 2 is better: "2"',
        "1\nThe answer was cut short.\n2. You are Speaker 1. Review your evaluation.",  # a list's first number
        '1. "Not Helpful - the response is unrelated."\n2. 2: "Moderately Helpful - it is on point."',  # quoted labels
        "1. The answer is helpful\n2. The second answer is more helpful (1)\n3. Both are good options.",  # options
        "Submission 1 is better: 3\nTrue",  # an option's form copied back with another number
        "It is hard to tie these two answers together.",  # "tie" the verb
        "Keep it short, not tied up in lists.",
        "Here's my original verdict: 1. Now I am not sure.",  # an earlier answer, not this one
        "The answer is 2, so the question is solved.",  # "answer" may be the task's own
        "1. Answer: $23\n* Answer: 2",  # the reply labels its solution an answer too
        'Another possibility could be "1" if you like.',  # a choice imagined
        'Your reply had no verdict, "1" or "2", was a tie.',  # a sentence about another's answer
        "The other speaker's evaluation showed a tie.",
        "The previous evaluation said Submission 2 is better.",
        "Here is a sample of your type:\n1\nSlightly better: the original response was clear.",  # the form shown
        "Here is my reading:\n1.1\n2.3\n0",  # a column of numbers: none of them stands alone
        "1. 1\n2.",
        'Submission 1 is better: "1"',  # one of the options copied back, on its own
        'I am not sure.\nSubmission 3 is better: "0"',
    ],
)
def test_parse_verdict_unclear_is_none(text: str) -> None:
    assert parse_verdict(text) is None


@pytest.mark.parametrize(
    ("text", "kwargs", "expected"),
    [
        ("8 6\nAssistant 1 gave a detailed answer, Assistant 2 missed a step.", {}, (8, 6)),
        ("7.5, 9", {}, (7.5, 9)),
        ("Assistant 1: 8\nAssistant 2: 6", {}, (8, 6)),
        ("Scores: 7, 9", {}, (7, 9)),
        ("Submission 1: 4/5, clear and correct.\nSubmission 2: 3/5, misses a case.", {}, (4, 3)),
        ("Submission 1: 4/5 ... Submission 2: 3/5", {"high": 5}, (4, 3)),
        ("**Assistant A:** 9\n**Assistant B:** 7", {}, (9, 7)),
        ("A: 3\nB: 2", {}, (3, 2)),  # a line per text, A the first
    ],
)
def test_parse_pair_scores(text: str, kwargs: dict[str, float], expected: tuple[float, float]) -> None:
    assert parse_pair_scores(text, **kwargs) == expected


@pytest.mark.parametrize(
    ("text", "kwargs"),
    [
        ("", {}),
        ("Assistant 1 is better than Assistant 2.", {}),
        ("8", {}),
        ("15 20", {}),
        ("Assistant 1: 8\nAssistant 2: 6\nAssistant 1: 7", {}),
        ("Submission 1: 4/5\nSubmission 2: 8/10", {}),
        ("Submission 1: 8/10\nSubmission 2: 6/10", {"high": 5}),
        ("The evaluation form is: Scores: 3, 4, 5, 6, 7.", {}),  # the first two of a series
    ],
)
def test_parse_pair_scores_none(text: str, kwargs: dict[str, float]) -> None:
    assert parse_pair_scores(text, **kwargs) is None


STORY = (
    "Megan decided to make dinner. She cooked \u201cpizzas\u201d for Taco Tuesday.  She invited Raymond "
    "\u2014 her  neighbour. Instead of eating, they decided to go jogging. They ate and watched tv."
)


@pytest.mark.parametrize(
    ("quote", "expected"),
    [
        ("She invited Raymond", "She invited Raymond"),  # exact
        ("she COOKED “pizzas” for   taco tuesday.", "She cooked \u201cpizzas\u201d for Taco Tuesday."),
        ('She cooked "pizzas" for Taco Tuesday.', "She cooked \u201cpizzas\u201d for Taco Tuesday."),
        ("She invited Raymond - her neighbour.", "She invited Raymond \u2014 her  neighbour."),
        ("They ate and watched tv", "They ate and watched tv"),
        ('"Instead of eating, they decided to go jogging."', "Instead of eating, they decided to go jogging."),
        ("Instead of eating they decided to go jogging", "Instead of eating, they decided to go jogging"),
        ("Megan decided ... for Taco Tuesday.",
         "Megan decided to make dinner. She cooked \u201cpizzas\u201d for Taco Tuesday."),
        ("...they decided to go jogging.", "they decided to go jogging."),
    ],
)
def test_locate_finds_the_quoted_span(quote: str, expected: str) -> None:
    span = locate(quote, STORY)
    assert span is not None
    assert STORY[span[0] : span[1]] == expected


@pytest.mark.parametrize("quote", ["", "   ", "She baked a cake.", "ate  x", "he invited Raymond", "Tv."])
def test_locate_none_when_absent_or_too_short(quote: str) -> None:
    assert locate(quote, STORY) is None


def test_locate_matches_short_quotes_only_exactly() -> None:
    assert locate("tv", STORY) == (STORY.index("tv"), STORY.index("tv") + 2)


def test_locate_from_an_offset_finds_the_repeat() -> None:
    text = "I told her. She left. I told her."
    assert locate("i told her", text, start=5) == (22, 32)


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("Repetition", "REP"),
        ("Factual Errors", "FER"),
        ("Factual Error.", "FER"),
        ('"Discontinuity"', "DCONT"),
        ("\u201cLogical Inconsistency\u201d", "LINC"),
        (" Inappropriate Lexical Choice", "ILC"),
        ("**LINC**", "LINC"),
        ("Does the text contain Repetition (REP) errors?", "REP"),
        ("Grammar", None),
        ("", None),
    ],
)
def test_normalize_error_type(label: str, expected: str | None) -> None:
    assert normalize_error_type(label) == expected


def test_error_types_are_the_five_mateval_types() -> None:
    assert ERROR_TYPES == {
        "REP": "Repetition",
        "LINC": "Logical Inconsistency",
        "DCONT": "Discontinuity",
        "ILC": "Inappropriate Lexical Choice",
        "FER": "Factual Error",
    }
    for abbr, name in ERROR_TYPES.items():
        assert f"{name} ({abbr})" in ERROR_REPORT_FORMAT


def _quoted(span_start: int | None, span_end: int | None, text: str) -> str | None:
    return None if span_start is None or span_end is None else text[span_start:span_end]


def test_parse_error_report_reads_mateval_blocks() -> None:
    report = (
        "Story\uff1a" + STORY + "\n"
        "Error location\uff1aShe cooked \u201cpizzas\u201d for Taco Tuesday. "
        "/Instead of eating, they decided to go jogging.\n"
        "Error type\uff1a Logical Inconsistency.\n"
        "Reason\uff1aPizzas on Taco Tuesday./They eat later on.\n"
        "Error location\uff1aThey ate and watched had been watching tv.\n"
        "Error type\uff1aInappropriate Lexical Choice\n"
        "Reason\uff1aThe tense is wrong.\n"
        "Error location\uff1a1. Megan decided to make dinner.2. She invited Raymond\n"
        "Error type\uff1a\"Factual Errors\"\n"
        "Reason\uff1aNothing is wrong, for the test.\n"
        "Score\uff1a-5\n"
    )
    errors = parse_error_report(report, STORY)
    assert [(e.type, _quoted(e.start, e.end, STORY), e.explanation) for e in errors] == [
        ("LINC", "She cooked \u201cpizzas\u201d for Taco Tuesday.", "Pizzas on Taco Tuesday."),
        ("LINC", "Instead of eating, they decided to go jogging.", "They eat later on."),
        ("ILC", None, "The tense is wrong."),
        ("FER", "Megan decided to make dinner.", "Nothing is wrong, for the test."),
        ("FER", "She invited Raymond", "Nothing is wrong, for the test."),
    ]
    assert errors[2].quote == "They ate and watched had been watching tv."  # kept, unlocated
    assert all(e.deduction == 1 for e in errors)


def test_parse_error_report_reads_our_qa_format() -> None:
    report = (
        "Q: Does the text contain Repetition (REP) errors?\n"
        "A: No\n\n"
        "**Q: Does the text contain Logical Inconsistency (LINC) errors?**\n"
        "**A:** Yes\n"
        "- **Location:** \u201cInstead of eating they decided to go jogging\u201d\n"
        "- **Explanation:** They eat later,\n  so they did not skip eating.\n"
        "- **Deduction:** -1\n"
        "- **Location:** \"She flew to Mars.\"\n"
        "- **Explanation:** Invented by the evaluator.\n"
        "- **Deduction:** -2\n\n"
        "Q: Does the text contain Discontinuity (DCONT) errors?\n"
        "A: Yes\n"
        "Explanation: The jump to jogging breaks the flow.\n\n"
        "Q: Does the text contain Inappropriate Lexical Choice (ILC) errors?\n"
        "A: No\n"
        "Location: None\n"
        "Q: Does the text contain Factual Error (FER) errors?\n"
        "A: No\n"
    )
    errors = parse_error_report(report, STORY)
    assert [(e.type, _quoted(e.start, e.end, STORY), e.deduction) for e in errors] == [
        ("LINC", "Instead of eating, they decided to go jogging", 1),
        ("LINC", None, 2),
        ("DCONT", None, 1),
    ]
    assert errors[0].explanation == "They eat later, so they did not skip eating."
    assert errors[1].quote == "She flew to Mars."
    assert errors[2].quote == "" and errors[2].explanation == "The jump to jogging breaks the flow."


def test_a_question_and_its_answer_on_one_line_answer_that_question_only() -> None:
    report = 'Q: Does the text contain Repetition (REP) errors? A: Yes\nLocation: "Tom went home."\nDeduction: -1'
    assert answered_types(report) == readable_types(report, "", ["REP", "LINC"]) == {"REP"}
    assert [(e.type, e.quote) for e in parse_error_report(report, "Tom went home. Tom went home.")] == [
        ("REP", "Tom went home.")]


def test_a_stated_answer_may_go_on_after_its_full_stop() -> None:
    report = ("The text contains Repetition (REP) errors. This type of error is common.\n"
              "Q: Does the text contain Logical Inconsistency (LINC) errors?\nA: No")
    assert answered_types(report) == {"REP", "LINC"}


def test_parse_error_report_accepts_type_before_location() -> None:
    report = ("Error type: Repetition\nLocation: They ate and watched tv\n"
              "Error type: FER\nQuote: Megan decided to make dinner")
    errors = parse_error_report(report, STORY)
    assert [(e.type, _quoted(e.start, e.end, STORY)) for e in errors] == [
        ("REP", "They ate and watched tv"),
        ("FER", "Megan decided to make dinner"),
    ]


def test_parse_error_report_splits_a_repeated_sentence() -> None:
    text = "I told her. She left. I told her."
    errors = parse_error_report("Error location: I told her. I told her.\nError type: Repetition", text)
    assert [(e.start, e.end) for e in errors] == [(0, 11), (22, 33)]


def test_a_question_answered_in_a_sentence_of_its_own() -> None:
    report = ("The text contains Repetition (REP) errors.\n"
              "Q: Does the text contain Logical Inconsistency (LINC) errors?\nA: No\n"
              "The story does not contain Factual Error (FER) errors.\n"
              'Location: "The text contains Discontinuity (DCONT) errors"')  # quoted in a field: no answer
    assert answered_types(report) == {"REP", "LINC", "FER"}
    assert [e.type for e in parse_error_report(report, STORY)] == ["REP"]
    run_on = "The text contains Repetition (REP), and as for the type of error, it is Logical Inconsistency."
    assert answered_types(run_on) == {"REP"}


def test_an_error_of_no_type_answers_no_type() -> None:
    """"A: Yes" under no question, then a location: MATEval's error-list form only when an error names its type."""
    untyped = 'A: Yes\nLocation: "They ate and watched tv"\nExplanation: It repeats.'
    assert readable_types(untyped, STORY, ["REP", "FER"]) == set()
    typed = "Error type: Repetition\nLocation: They ate and watched tv"
    assert readable_types(typed, STORY, ["REP", "FER"]) == {"REP", "FER"}


def test_parse_error_report_of_nothing_is_empty() -> None:
    assert parse_error_report("", STORY) == []
    assert parse_error_report("The story has no errors.", STORY) == []


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n",
        "I cannot evaluate this.",
        "I'm sorry, but I can't help with that.",
        "I\u2019m sorry, but I cannot rate this response.",
        "As an AI language model, I cannot provide personal opinions.",
        "Unfortunately, I am unable to evaluate the text because it is missing.",
    ],
)
def test_is_refusal(text: str) -> None:
    assert is_refusal(text)


@pytest.mark.parametrize(
    "text",
    [
        "Score: 3",
        "As an AI language model, I cannot have opinions, but I would rate it 3.",
        "I cannot stress enough how natural this is. 3",
        "The critic says I cannot evaluate this, which is wrong. Coherence: 2",
    ],
)
def test_is_not_refusal(text: str) -> None:
    assert not is_refusal(text)


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("Criterion 1: Coherence. The summary is coherent and well organised.", 1, 5),
        ("Evaluation of criterion 2 (fluency): the text reads well.", 1, 5),
        ("On a scale from 1 to 5, the summary is good.", 1, 5),
        ("Rate the text from 1 (poor) to 5 (excellent).", 1, 5),
        ("The score should be between 1 and 5.", 1, 5),
        ("Score: 1-5", 1, 5),
        ("1 = poor, 2 = fair, 3 = good, 4 = very good, 5 = excellent", 1, 5),
        ("Scoring rubric:\n1 - Poor\n2 - Fair\n3 - Good\n4 - Very good\n5 - Excellent", 1, 5),
        ("The article was published on March 3, 2021.", 1, 5),
        ("Dated 12 May 2020, the report is short.", 1, 31),
        ("The meeting is at 3 pm.", 1, 5),
        ("About 40% of it is relevant.", 1, 100),
        ("The summary has 150 words and covers 3 points.", 1, 5),
        ("The text makes three points: (1) the economy, (2) the war, (3) the election.", 1, 5),
        ("The summary covers 1) the cause, 2) the effect and 3) the outcome.", 1, 5),
        ("Feedback: 1. The text is long. 2. It repeats itself.", 1, 5),
        ('The text says "he scored 4 goals in 2 games".', 1, 5),
        ("I'm sorry, but I cannot evaluate this text on a scale of 1 to 5. Score: 3", 1, 5),
        ("The text is coherent. It is one of the best summaries.", 1, 5),
        ("In paragraph 2, the author repeats the claim.", 1, 5),
        ("The Scorer gave 4, but the text has 2 factual errors.", 1, 5),
        ("The summary includes 4 main ideas.", 1, 5),
        ("Score: 3\n\nAfter reconsidering, Score: 4", 1, 5),  # two final answers
        ("Score: 6/10", 1, 5),
        ("[Text to evaluate]\nHe scored 3 goals in 2 games.\n3\n[End of text]", 1, 5),  # the prompt echoed back
        ("including coherence (1), coherence score (3) and the ability to present points (5).", 1, 5),
        ("The criterion coherence (1-5) translates to 3 out of 8 possible outcomes.", 1, 5),
        ("2. 1\n3. 0", 1, 5),  # a numbered list of numbers
        ("Ascending: N = 3", 1, 5),  # the prompt's placeholder, then a number
        ("The score is 10/2 = 5.\nYour answer: 3", 1, 3),  # another's answer, labelled
        ("Your final answer: N (Score 3)", 1, 5),
        ("I'll write a new response with a score of 1 and the same criteria.", 1, 5),  # another text's score
        ("1. Read the conversation, then rate your chosen metric too; 3 stars.", 1, 5),  # a step, even alone
        ("I will improve it for the evaluation criterion (3) and rewrite it.", 1, 5),
        ("1. Read the article.\n2. Check the facts (4)\n* 5\n3. Compare.", 1, 5),  # inside a numbered list
        ("The criteria are: 1. It needs a summary; 2. It needs steps.\n\n3. It needs several steps (three).", 1, 5),
        ("Steps:\n1. Read it.\n2. Assign a score from 1-5, 5 being highest, per the criterion of relevance (1).\n"
         "3. Compare.", 1, 5),
    ],
)
def test_numbers_that_are_not_scores(text: str, low: float, high: float) -> None:
    assert parse_score(text, low, high) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Criterion 1: Coherence\nScore: 4", 4),
        ("On a scale from 1 to 5, I would give it a 4.", 4),
        ("Scoring rubric:\n1: Poor\n2: Fair\n3: Good\n4: Very good\n5: Excellent\n\nScore: 3", 3),
        ("I would give it four out of five.", 4),
        ("Rating: four", 4),
        ("Rating: ★★★★☆", 4),
        ("Rating: ****", 4),
        ("**Rating:**\n4", 4),
        ("I give it 3 stars.", 3),
        ("Step 1: Read the text. Step 2: Compare. The score is 4.", 4),
        ("The summary is fine.\n4", 4),
        ("Score: 4. Reasons: 1. clear 2. short", 4),
        ("Coherence - 4", 4),
        ("My previous score was 4. I now lower it to 3.", 3),
        ("The summary gets a 4.", 4),
        ("Score (1-5): 4", 4),
        ("Score: 4\nExplanation: It has 1 minor error on line 3.", 4),
        ("2\nRationale: the reply shifts the topic.", 2),
        ("Overall I would say 4.", 4),
        ("My answer is 4.", 4),
        ("It deserves a 3 rating.", 3),
        ("I would say 2 things: it is short and clear.", None),
        ("The response is somewhat coherent (2). It mentions the game.", 2),
        ("The response does not use the fact. 1", 1),
        ("2, somewhat interesting", 2),
        ("It connects the fact with the mention of Halo 3. It adds a playful element.", None),
        ("Rating: 2\nRationale: a bit strange.\n- Use of Fact:\nRating: 1\nRationale: not used.", 2),
        ("Score: 3\n\nAlternative view:\nScore: 4", None),  # a second opinion, not another aspect
        ("Rating: 2\nStrengths:\nclear\nScore: 4", None),
        ("Evaluation criterion: coherence (1)\nThe article is coherent.", None),  # the prompt's line echoed
        ("2. Read the summary.\n3. Assign a coherence score from 1 to 5 (coherence = 4 or higher)",  # a threshold
         None),
        ("2. I read the reply:\n- 1 (dull) to 3 (very engaging)\n- 4 (interesting)\n- 5 (important)", None),
        ("The article concludes with a score of 5 from 1 (many unsupported facts).", None),  # a garbled range
        ("1. Read it.\n2. Assign a coherence score of 1 based on its quality: 5 (highest)", None),
        ("Coherence: 3\nFluency: 4", None),  # which one? unless the criterion is named
    ],
)
def test_scores_in_prose(text: str, expected: float | None) -> None:
    assert parse_score(text, 1, 5) == expected


def test_the_asked_criterion_settles_several_labels() -> None:
    assert parse_score("Coherence: 3\nFluency: 4", 1, 5, criterion="Fluency") == 4
    assert parse_score("Coherence:\nRating: 3\n\nFluency:\nRating: 4", 1, 5, criterion="fluency") == 4
    assert parse_score("Coherence: 3\nFluency: 4", 1, 5, criterion="Relevance") is None


@pytest.mark.parametrize(
    ("text", "expect", "expected"),
    [
        ("Score: 4", "score", 4),
        ("I'm sorry, I can't rate this. 3", "score", None),
        ("Scores: 7 8", "pair", (7, 8)),
        ("I cannot compare these: 2 answers are missing.", "verdict", None),
        ("Final answer: 2", "verdict", "2"),
        ("NO ISSUE", "no_issue", True),
        ("Anything", "text", None),
    ],
)
def test_read_answer(text: str, expect: str, expected: object) -> None:
    assert read_answer(text, expect, 1, 10) == expected


SINGLE_QUOTED_TEXT = "Tom went home. He did not like the rain. Tom went home."


@pytest.mark.parametrize(
    "report",
    [
        "Q: Does the text contain Logical Inconsistency (LINC) errors?\nA: Yes\n"
        "Location: 'He did not like the rain.' and 'Tom went home.'\nDeduction: -1",
        'Q: Does the text contain Logical Inconsistency (LINC) errors?\nA: Yes\n'
        'Location: "He did not like the rain." and "Tom went home."\nDeduction: -1',
    ],
)
def test_passages_in_single_quotes_are_located_like_double_quoted_ones(report: str) -> None:
    errors = parse_error_report(report, SINGLE_QUOTED_TEXT)
    assert [(e.quote, e.start) for e in errors] == [("He did not like the rain.", 15), ("Tom went home.", 0)]


def test_a_prose_error_in_single_quotes_is_located_without_its_quotes() -> None:
    errors = parse_error_report("问：是否存在重复问题？\n答：是\n'Tom went home.' 重复了两次。", SINGLE_QUOTED_TEXT)
    assert [(e.type, e.quote, e.start) for e in errors] == [("REP", "Tom went home.", 0)]


@pytest.mark.parametrize(
    ("text", "passages"),
    [
        ("I don't think 'He didn't go.' is right", ["He didn't go."]),  # apostrophes inside and outside
        ("The boys' toys weren't there, it's fine.", []),  # apostrophes only
        ("'ok' and 'fine here'", ["fine here"]),  # one word in single quotes is a word named, not a passage
        ('"double" and “curly” and ‘single curly’', ["double", "curly", "single curly"]),
    ],
)
def test_apostrophes_do_not_open_or_close_a_passage(text: str, passages: list[str]) -> None:
    assert [passage_words(m) for m in find_passages(text)] == passages


def test_each_reader_is_a_module_of_its_own_behind_the_same_names() -> None:
    import debate_tui.parsing as parsing
    from debate_tui.parsing import errors, quotes, refusals, scores, verdicts, weighted

    assert (parsing.parse_score, parsing.parse_pair_scores) == (scores.parse_score, scores.parse_pair_scores)
    assert (parsing.parse_verdict, parsing.is_no_issue) == (verdicts.parse_verdict, verdicts.is_no_issue)
    assert (parsing.is_refusal, parsing.locate, parsing.weighted_score) == (
        refusals.is_refusal, quotes.locate, weighted.weighted_score)
    assert (parsing.parse_error_report, parsing.normalize_error_type) == (
        errors.parse_error_report, errors.normalize_error_type)
    assert all(hasattr(parsing, name) for name in parsing.__all__)


@pytest.mark.parametrize(("text", "expect"), [
    # real replies of the local model (development part of its labelled set)
    ("Paragraphs are separated with a markdown divider: ***\n\nAt the end of your response, add a P.S.", "score"),
    ('It\'s a classic example of the "Tie" fallacy, where someone responds with a negative outcome.', "verdict"),
    ('You\'re right, I\'ll make sure to provide a more detailed explanation.\n\nYour response was: "1"', "verdict"),
    ('So, I would go with 1 (not at all) and "No" (True) to 3.', "score"),
])
def test_markup_a_word_named_in_quotes_and_anothers_quoted_answer_are_not_answers(text: str, expect: str) -> None:
    assert read_answer(text, expect, 1, 3) is None


def test_the_forms_fields_copied_under_a_no_or_as_placeholders_are_no_error() -> None:
    """Real replies of the local model: "A: No" followed by the form's Location/Explanation/Deduction lines, and
    an error whose only fields are the form's placeholders."""
    under_no = ('Q: Does the text contain Repetition (REP) errors?\nA: No\nLocation: "This is not a repetition. '
                'Each error was only for the last one."\nExplanation: It seems to be repeated.\nDeduction: -1\n')
    assert parse_error_report(under_no, "") == []
    placeholders = ("Q: Does the text contain Logical Inconsistency (LINC) errors?\nA: Yes\n"
                    'Location: "<a sentence copied exactly from the text>"\nExplanation: <why it is an error>\n'
                    "Deduction: -1\n")
    [error] = parse_error_report(placeholders, "")  # the yes still counts one error, with nothing to point at
    assert (error.type, error.quote, error.explanation) == ("LINC", "", "")


def test_a_question_answered_no_then_yes_is_answered_neither_way() -> None:
    """A real reply of the local model: the LINC question answered "No", later "A: Yes" under it again."""
    report = ("Q: Does the text contain Logical Inconsistency (LINC) errors?\nA: No\nRewrite this sentence.\n"
              "A: Yes\nLocation: \"Tom went home.\"\nExplanation: contradicts.\nDeduction: -1\n")
    assert parse_error_report(report, "Tom went home.") == []
    assert [e.type for e in parse_error_report(report.replace("A: No\n", "A: Yes\n"), "Tom went home.")] == ["LINC"]


def test_a_caseless_pattern_searched_lowered_finds_what_the_case_insensitive_search_finds():
    """The faster search (ASCII text and pattern both lowered) gives the same span as the case-insensitive one;
    text beyond ASCII takes the case-insensitive pattern itself; an upper-case escape is refused."""
    import re

    from debate_tui.parsing.scores import _Caseless

    pattern = r"\b(?:score|I\s+would\s+say)\b[^\n:]{0,10}[:=]?\s*$"
    caseless = _Caseless(pattern)
    for text in ("Final SCORE: ", "so I Would Say ", "no score here.", "\u0130 would say ", "SCORE:  x", "SCORE is: "):
        folded = text.lower() if text.isascii() else None
        found, expected = caseless.search(text, folded), re.search(pattern, text, re.I)
        assert (found and found.span()) == (expected and expected.span()), text
    with pytest.raises(ValueError, match="upper-case escape"):
        _Caseless(r"\S+$")


@pytest.mark.parametrize("reply,score", [
    ("2. The response somewhat refers to the conversation history, but it does not build on it.", 2.0),
    ("1. Unnatural", 1.0),
    ("1. The response is not natural.", 1.0),
    ("3. Natural", 3.0),
    ("2. somewhat interesting", 2.0),
    # a numbered list, a level that contradicts its number, an echoed step or question: no score
    ("1. Natural", None),
    ("3. Unnatural", None),
    ("1. Dull\n2. Somewhat interesting\n3. Interesting", None),
    ("1. The summary is short.\n2. It misses the point.", None),
    ("2. The article focuses on the team's decision.", None),
    ("1. Read the article and note its main facts.", None),
    ("1. Does the response continue the conversation?", None),
    ("1. No", None),
])
def test_a_reply_opening_with_its_score_and_a_full_stop_is_read(reply: str, score: float | None) -> None:
    assert parse_score(reply, 1, 3) == score
