"""`report.compare`: two sessions side by side, the typed comparison a side-by-side view draws."""

from __future__ import annotations

from debate_tui.domain import ErrorSpan, Session
from debate_tui.locations import examples_dir
from debate_tui.report.compare import compare_sessions, format_sessions
from debate_tui.store import read_session


def example(protocol: str = "mateval") -> Session:
    return read_session(examples_dir() / f"{protocol}-example.json")


def test_a_fork_shares_its_leading_turns_and_parts_at_the_first_changed_one():
    a, b = example("debate"), example("debate")
    b.turns[2] = b.turns[2].model_copy(update={"content": b.turns[2].content + " (and more)"})
    comparison = compare_sessions(a, b)
    assert comparison.shared_turns == 2 and comparison.parts_at == 2
    c = example("debate")
    c.turns[2] = c.turns[2].model_copy(update={"agent": "someone else"})
    assert compare_sessions(a, c).shared_turns == 2
    same = compare_sessions(a, example("debate"))
    assert same.shared_turns == len(a.turns) and same.parts_at is None


def test_rounds_align_both_sides_turns_even_when_one_debate_went_on_longer():
    a, b = example("debate"), example("debate")
    b.turns = b.turns[:3]
    rounds = compare_sessions(a, b).rounds()
    assert [r.round for r in rounds] == sorted({t.round for t in a.turns})
    assert sum(len(r.a) for r in rounds) == len(a.turns) and sum(len(r.b) for r in rounds) == 3


def test_errors_match_by_type_and_quote_not_by_place_and_repeats_count():
    a, b = example(), example()
    assert a.outcome is not None and b.outcome is not None
    [rep] = a.outcome.errors
    b.task = b.task.model_copy(update={"text": "A new first line.\n" + b.task.text})
    moved = rep.model_copy(update={"start": rep.start + 18, "quote": "He went to the pool\n every morning."})
    a.outcome.errors = [rep, rep, ErrorSpan(type="LINC", quote="Tom wanted to learn to swim.", start=0)]
    b.outcome.errors = [moved, ErrorSpan(type="REP", quote="At first he was afraid of the water.")]
    comparison = compare_sessions(a, b)
    assert [(e.a.type, e.a.line, e.b.line) for e in comparison.both] == [("REP", 1, 2)]
    assert comparison.both[0].data() == {"type": "REP", "line": 1, "column": 65, "quote": rep.quote,
                                         "line_b": 2, "column_b": 65}
    assert [(e.type, e.line) for e in comparison.only_a] == [("REP", 1), ("LINC", 1)]
    assert [(e.type, e.line, e.column) for e in comparison.only_b] == [("REP", None, None)]
    assert comparison.same_text is False


def test_criteria_rows_carry_both_scores_and_the_delta_and_mateval_total():
    a, b = example(), example()
    assert b.outcome is not None
    b.outcome.scores = {**b.outcome.scores, "REP": 0.0, "total": 0.0}
    rows = {row.criterion: row.data() for row in compare_sessions(a, b).criteria}
    assert rows["REP"] == {"criterion": "REP", "a": -1.0, "b": 0.0, "delta": 1.0}
    assert rows["total"]["delta"] == 1.0 and rows["LINC"]["delta"] == 0.0


def test_pairwise_sessions_carry_both_verdicts_and_others_none():
    pair = example("scaleeval")
    assert compare_sessions(pair, pair).data()["verdict"] == {"a": pair.outcome.verdict, "b": pair.outcome.verdict}
    assert compare_sessions(example(), example()).data()["verdict"] is None


def test_text_from_the_files_is_inert_on_its_own_line():
    a, b = example(), example()
    assert b.outcome is not None
    b.outcome.errors = [ErrorSpan(type="REP", quote="evil\n\x1b[31mforged line")]
    text = format_sessions(compare_sessions(a, b))
    assert "\x1b" not in text and "forged line" in text
    assert not any(line.startswith("\x1b") or line.startswith("forged") for line in text.splitlines())


def test_segments_cut_the_round_where_the_debates_part_at_that_turn_and_mark_it_once():
    a, b = example("debate"), example("debate")
    part = 2  # round 1 holds turns 1 and 2: cut in two
    b.turns[part] = b.turns[part].model_copy(update={"content": "a different reply"})
    comparison = compare_sessions(a, b)
    segments = comparison.segments()
    marked = [s for s in segments if s.parts_here]
    assert len(marked) == 1
    assert marked[0].a[0] is a.turns[part] and marked[0].b[0] is b.turns[part]
    above = segments[:segments.index(marked[0])]
    assert [t for s in above for t in s.a] == a.turns[:part] and [t for s in above for t in s.b] == b.turns[:part]
    assert [t for s in segments for t in s.b] == b.turns
    same = compare_sessions(a, example("debate"))
    assert same.segments() == same.rounds() and not any(s.parts_here for s in same.segments())


def test_each_error_keeps_its_span_for_a_view_that_marks_it():
    a = example()
    [error] = compare_sessions(a, a).both
    assert a.task.text[error.a.start:error.a.end] == error.a.quote == error.b.quote
