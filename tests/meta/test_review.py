"""The review queue: undecided batch items decided by a person, written back with provenance, resumable."""

from __future__ import annotations

import json

import pytest

from debate_tui.batch.results import ResultsFile
from debate_tui.cli import main
from debate_tui.config import load_config
from debate_tui.factory import runner_for
from debate_tui.llm.router import ModelRouter
from debate_tui.meta.review import ReviewQueue
from tests.helpers.batch import queue_for, read_rows


async def test_the_queue_holds_the_undecided_items_with_the_protocols_own_question(llm_server, pairs):
    queue = queue_for(pairs)
    assert [i.id for i in queue.items] == ["p0", "p1", "p2"] and queue.left == 3 == queue.total
    calls = llm_server.calls
    item = await queue.open(queue.current)
    assert item.question.options == ("1", "2", "0")
    question = item.question.text
    assert "did not agree after 2 discussion rounds" in question and "Which text is better?" in question
    assert llm_server.calls == calls  # the question comes from a replay, not a call


async def test_a_decision_is_recorded_with_provenance_and_written_back_atomically(llm_server, pairs):
    out = pairs
    before = read_rows(out)
    queue = queue_for(out)
    item = queue.current
    calls = llm_server.calls
    session = await queue.decide(item, "2")
    assert llm_server.calls == calls
    assert session.status == "completed" and session.outcome.verdict == "2"
    (action,) = [a for a in session.actions if a.kind == "decide"]
    assert action.who == "ana" and action.value == "2" and action.after_turn == 9
    assert action.text.startswith("review queue: The speakers did not agree")
    saved = load_config().session_store().load(item.session_id)  # the session file holds it too
    assert saved.status == "completed" and saved.actions[-1].at == action.at
    rows = read_rows(out)
    assert len(rows) == len(before) and [r["id"] for r in rows] == [r["id"] for r in before]
    (decided,) = [r for r in rows if r["id"] == "p0"]
    assert decided["status"] == "completed" and decided["predicted_verdict"] == "2" and decided["human_verdict"] == "1"
    assert decided["decided_by"] == "ana" and decided["decided_at"] == action.at.isoformat()
    assert rows[1:] == before[1:]
    assert not list(out.parent.glob(".out.jsonl.*.tmp"))  # no temporary file left behind
    assert queue.left == 2 and queue.current.id == "p1"


async def test_the_queue_resumes_where_it_was_left(pairs):
    out = pairs
    queue = queue_for(out)
    await queue.decide(queue.current, "1")
    again = queue_for(out, who="ben")
    assert [i.id for i in again.items] == ["p1", "p2"] and again.left == 2
    await again.decide(again.current, "0")
    assert [r["decided_by"] for r in read_rows(out) if "decided_by" in r] == ["ana", "ben"]


async def test_skip_wraps_round_and_back_allows_changing_a_decision(pairs):
    out = pairs
    queue = queue_for(out)
    queue.skip()
    assert queue.current.id == "p1"
    await queue.decide(queue.current, "1")
    assert queue.current.id == "p2"
    queue.skip()
    assert queue.current.id == "p0"  # round again to the skipped one
    queue.index = 2
    queue.back()
    changed = await queue.decide(queue.current, "0")
    assert queue.current.id == "p2"
    decisions = [a for a in changed.actions if a.kind == "decide"]
    assert len(decisions) == 1 and decisions[0].value == "0" and "(replaces 1 by ana at" in decisions[0].text
    assert changed.outcome.verdict == "0" and len([t for t in changed.turns if t.error is None]) == 9
    assert {r["id"]: r["predicted_verdict"] for r in read_rows(out)}["p1"] == "0"


async def test_an_answer_outside_the_options_is_refused(one_pair):
    out = one_pair
    queue = queue_for(out)
    with pytest.raises(ValueError, match="expected 1, 2, 0"):
        await queue.decide(queue.current, "7")
    assert read_rows(out)[0]["status"] == "needs_human"


async def test_debate_tie_breaks_use_the_same_queue_with_the_scale_as_options(llm_server, tie_breaks):
    out = tie_breaks
    queue = queue_for(out)
    item = await queue.open(queue.current)
    assert item.question.options == ("1", "2", "3", "4", "5") and "on coherence" in item.question.text
    calls = llm_server.calls
    session = await queue.decide(item, "2")
    # the person settled coherence; relevance was then debated (3 calls) and waits for its own decision
    assert llm_server.calls == calls + 3
    assert session.status == "needs_human" and "on relevance" in session.pending_question
    assert queue.current is item and queue.left == 2
    session = await queue.decide(item, "5")
    assert session.status == "completed" and session.outcome.scores == {"coherence": 2.0, "relevance": 5.0}
    rows = {r["criterion"]: r for r in read_rows(out) if r["id"] == "i0"}
    assert rows["coherence"]["predicted"] == 2 and rows["relevance"]["predicted"] == 5
    assert rows["relevance"]["status"] == "completed" and rows["relevance"]["calls"] == 3


def test_the_command_lists_and_decides_without_the_screen(capsys, pairs):
    out = pairs
    assert main(["review", str(out), "--list"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [x["id"] for x in listed] == ["p0", "p1", "p2"] and listed[0]["options"] == "1/2/0"
    assert main(["review", str(out), "--decide", "p1=2", "--who", "cli-test"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert json.loads(lines[0]) == {"id": "p1", "criterion": None, "decided": "2", "status": "completed",
                                    "session": listed[1]["session"]}
    summary = json.loads(lines[-1])
    assert (summary["reviewed"], summary["queue"], summary["left"]) == (1, 3, 2)  # one decision made, not the queue
    assert {r["id"]: r.get("decided_by") for r in read_rows(out)} == {"p0": None, "p1": "cli-test", "p2": None}


@pytest.mark.parametrize(("argv", "message"), [
    (["--decide", "nope=1"], "no item 'nope' waits"),
    (["--decide", "p0=9"], "is not an answer"),
    (["--decide", "p0"], "expected ID=VALUE"),
])
def test_bad_decisions_exit_2(capsys, one_pair, argv, message):
    assert main(["review", str(one_pair), *argv]) == 2
    assert message in capsys.readouterr().err


def test_review_refuses_a_missing_file_or_one_a_batch_is_writing(capsys, tmp_path):
    assert main(["review", str(tmp_path / "none.jsonl")]) == 2
    assert "no such results file" in capsys.readouterr().err
    out = tmp_path / "out.jsonl"
    out.write_text("")
    with ResultsFile(out).locked("a batch"):
        assert main(["review", str(out), "--list"]) == 2
    assert "in use (a batch" in capsys.readouterr().err


async def test_overrides_use_the_same_queue_one_score_line_at_a_time(llm_server, scored):
    queue = ReviewQueue(ResultsFile(scored), load_config().session_store(), ModelRouter(), who="ana", mode="override")
    queue.load()
    assert [(i.id, i.criterion) for i in queue.items] == [
        ("i0", "coherence"), ("i0", "relevance"), ("i1", "coherence"), ("i1", "relevance")]
    item = await queue.open(queue.current)
    assert item.question.options == ("1", "2", "3", "4", "5")
    assert "It is 4 (coherence: NO ISSUE after 1 iteration)" in item.question.text
    calls = llm_server.calls
    session = await queue.decide(item, "2")
    assert llm_server.calls == calls and queue.current.criterion == "relevance" and queue.left == 3
    assert session.outcome.scores == {"coherence": 2.0, "relevance": 4.0}
    assert "coherence: score overridden by ana from 4.0 to 2.0" in session.outcome.notes[-1]
    (action,) = session.actions
    assert action.kind == "override" and action.criterion == "coherence" and action.after_turn == 4
    rows = {(r["id"], r["criterion"]): r for r in read_rows(scored)}
    assert rows["i0", "coherence"]["predicted"] == 2 and rows["i0", "coherence"]["decided_by"] == "ana"
    assert rows["i0", "relevance"]["predicted"] == 4 and "decided_by" not in rows["i0", "relevance"]
    replayed = await runner_for(load_config().session_store().load(item.session_id), ModelRouter(), stream=False).run()
    assert replayed.outcome.scores["coherence"] == 2.0 and llm_server.calls == calls  # kept on replay, no call


def test_the_command_overrides_without_the_screen(capsys, scored):
    assert main(["review", str(scored), "--override", "--decide", "i1:relevance=1", "--who", "cli-test"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["criterion"] == "relevance"
    rows = {(r["id"], r["criterion"]): r for r in read_rows(scored)}
    assert rows["i1", "relevance"]["predicted"] == 1 and rows["i1", "relevance"]["decided_by"] == "cli-test"


def test_the_list_names_the_criterion_a_tie_break_is_about(capsys, tie_breaks):
    """Issue 33 #20: `review --list` showed "criterion": null for a DEBATE tie-break about coherence."""
    assert main(["review", str(tie_breaks), "--list"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(x["id"], x["criterion"]) for x in listed] == [("i0", "coherence"), ("i1", "coherence")]


def test_the_list_names_the_criterion_of_a_pairs_verdict(capsys, pairs):
    assert main(["review", str(pairs), "--list"]) == 0
    assert {json.loads(line)["criterion"] for line in capsys.readouterr().out.splitlines()} == {"helpfulness"}
