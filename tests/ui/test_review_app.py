"""The review screen driven with Pilot: keys decide, skip, go back, show the debate; decisions land on disk."""

from __future__ import annotations

from debate_tui.config import load_config
from debate_tui.ui.review import view
from debate_tui.ui.review.app import ReviewApp
from tests.helpers.batch import queue_for, read_rows
from tests.helpers.ui import text_of, wait_until


async def test_keys_decide_skip_go_back_and_show_the_debate(pairs):  # noqa: F811
    queue = queue_for(pairs, who="pilot")
    app = ReviewApp(queue)
    async with app.run_test(size=(140, 48)) as pilot:
        await wait_until(pilot, lambda: "3 of 3 left" in text_of(app, "#heading"))
        assert "item p0" in text_of(app, "#heading") and "group qa" in text_of(app, "#heading")
        assert "Which text is better?" in text_of(app, "#question")
        assert "1: Submission 1 is better" in text_of(app, "#choices")
        assert text_of(app, "#text-1") == "Answer A0: Paris is the capital."
        assert text_of(app, "#text-2") == "Answer B0: it is Lyon."
        assert "Question 0: what is the capital" in text_of(app, "#source-text")
        positions = text_of(app, "#positions-text")
        assert all(f"Speaker {n} (speaker, round 2): verdict" in positions for n in (1, 2, 3))

        await pilot.press("7")  # not an answer to this question: nothing happens
        await pilot.pause(0.1)
        assert read_rows(pairs)[0]["status"] == "needs_human"

        assert not app.query_one("#debate").has_class("shown")
        await pilot.press("d")
        assert app.query_one("#debate").has_class("shown")
        assert "--- Speaker" in text_of(app, "#debate-text")

        await pilot.press("2")
        await wait_until(pilot, lambda: "2 of 3 left" in text_of(app, "#heading"))
        assert "item p1" in text_of(app, "#heading")
        row = read_rows(pairs)[0]
        assert row["status"] == "completed" and row["predicted_verdict"] == "2" and row["decided_by"] == "pilot"

        await pilot.press("s")
        await wait_until(pilot, lambda: "item p2" in text_of(app, "#heading"))
        await pilot.press("b")
        await wait_until(pilot, lambda: "item p1" in text_of(app, "#heading"))
        await pilot.press("b")
        await wait_until(pilot, lambda: "item p0" in text_of(app, "#heading"))
        assert text_of(app, "#question").startswith("Decided 2 by pilot")
        await pilot.press("0")  # change it
        await wait_until(pilot, lambda: read_rows(pairs)[0]["predicted_verdict"] == "0")
        await pilot.press("q")
    assert queue.left == 2


async def test_the_last_decision_ends_the_queue_and_nothing_is_lost_on_quit(one_pair):  # noqa: F811
    queue = queue_for(one_pair)
    app = ReviewApp(queue)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: "1 of 1 left" in text_of(app, "#heading"))
        await pilot.press("1")
        await wait_until(pilot, lambda: "All 1 item(s) decided" in text_of(app, "#question"))
        assert text_of(app, "#heading") == "Review queue · 0 of 1 left"
        await pilot.press("q")
    assert queue_for(one_pair).total == 0  # reopened: nothing waits any more


async def test_a_score_question_offers_the_scale_and_keeps_the_item_for_its_next_question(tie_breaks):  # noqa: F811
    queue = queue_for(tie_breaks)
    app = ReviewApp(queue)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: "on coherence" in text_of(app, "#question"))
        assert "Decide: 1   2   3   4   5" in text_of(app, "#choices")
        assert app.query_one("#pane-2").display is False and app.query_one("#pane-1").border_title == "Text"
        await pilot.press("3")
        await wait_until(pilot, lambda: "on relevance" in text_of(app, "#question"))
        assert "item i0" in text_of(app, "#heading")
        await pilot.press("q")


def test_scaleeval_turn_verdicts_are_shown_in_the_original_numbering(pairs):  # noqa: F811

    session = load_config().session_store().load(read_rows(pairs)[0]["session"])
    turn = next(t for t in session.turns if t.verdict == "1")
    session.state["order"] = {"swapped": True}
    assert view.answer(session, turn) == "verdict 2"
    session.state["order"] = {"swapped": False}
    assert view.answer(session, turn) == "verdict 1"


async def test_the_override_queue_sets_a_score_with_a_key(scored):  # noqa: F811
    from debate_tui.batch.results import ResultsFile
    from debate_tui.llm.router import ModelRouter
    from debate_tui.meta.review import ReviewQueue

    queue = ReviewQueue(ResultsFile(scored), load_config().session_store(), ModelRouter(), who="pilot",
                        mode="override")
    queue.load()
    app = ReviewApp(queue)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: "Override queue · 4 of 4 left" in text_of(app, "#heading"))
        assert "Override the coherence score? It is 4" in text_of(app, "#question")
        await pilot.press("5")
        await wait_until(pilot, lambda: "3 of 4 left" in text_of(app, "#heading"))
        assert "relevance" in text_of(app, "#heading")
        await pilot.press("q")
    first = read_rows(scored)[0]
    assert first["criterion"] == "coherence" and first["predicted"] == 5 and first["decided_by"] == "pilot"
