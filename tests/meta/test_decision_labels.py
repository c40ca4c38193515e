"""Every decision a label: what a person said is kept with what the judge had answered, where and when, and
`debate-tui labels` exports it in the form `meta --labels` and `calibrate --labels` read."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from debate_tui.domain import Criterion, HumanAction, Session, Task
from debate_tui.factory import runner_for
from debate_tui.llm.demo import DemoClient
from debate_tui.meta.decisions import export
from debate_tui.meta.labels import LabelsError, load_labels
from debate_tui.store import read_session
from tests.helpers.cli import run_cli, write_jsonl


def waiting_tie(capsys, story_file: Path) -> Path:
    """A DEBATE on the demo model whose Scorer and Critic never agree (one round), waiting for a person."""
    code, summary, err = run_cli(capsys, "run", "--demo", "--rounds", "1", "--tie-breaker", "human",
                                 "--text", str(story_file))
    assert code == 5, err
    return Path(summary["session_path"])


def test_resume_decide_keeps_the_scorers_last_score_the_criterion_and_the_command(capsys, story_file) -> None:
    path = waiting_tie(capsys, story_file)
    scorer_said = [t.score for t in read_session(path).turns if t.role == "scorer"][-1]
    code, _, err = run_cli(capsys, "resume", str(path), "--decide", "4")
    assert code == 0, err
    session = read_session(path)
    (action,) = [a for a in session.actions if a.kind == "decide"]
    assert (action.criterion, action.value, action.where, action.source, action.blind) == (
        "coherence", "4", "resume --decide", "decision", False)
    assert action.judge_answer == scorer_said and action.judge_confidence is None
    out = path.parent / "labels.jsonl"
    code, summary, _ = run_cli(capsys, "labels", "--out", str(out))
    assert code == 0 and (summary["labels"], summary["decision"], summary["audit"]) == (1, 1, 0)
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert line == {"id": session.id, "criterion": "coherence", "human": 4.0, "source": "decision",
                    "session": session.id, "decided_at": action.at.isoformat(), "blind": False,
                    "judge": scorer_said, "judge_confidence": None, "who": "cli", "where": "resume --decide"}
    code, _, err = run_cli(capsys, "labels", "--out", str(out))
    assert code == 2 and "--force" in err  # not replaced without --force


def test_an_override_through_the_runner_keeps_the_judges_score_and_confidence(capsys, story_file) -> None:
    code, summary, _ = run_cli(capsys, "run", "--demo", "--protocol", "single", "--samples", "3",
                               "--text", str(story_file))
    assert code == 0
    session = read_session(Path(summary["session_path"]))
    before, confidence = session.outcome.scores["coherence"], session.outcome.confidence["coherence"]
    runner = runner_for(session, DemoClient())
    runner.control.act(HumanAction(kind="override", criterion="coherence", value=before % 5 + 1, after_turn=0,
                                   where="tui override", source="override"))
    action = session.actions[-1]
    assert (action.judge_answer, action.judge_confidence) == (before, confidence) and confidence is not None
    assert session.outcome.scores["coherence"] == before % 5 + 1  # and the override still applies
    runner.control.act(HumanAction(kind="override", criterion="coherence", value=before, after_turn=0))
    again = session.actions[-1]  # a second override: the judge had still answered what it answered
    assert (again.judge_answer, again.judge_confidence) == (before, confidence)


def test_a_session_saved_before_keeps_loading_its_source_read_from_the_kind() -> None:
    old = HumanAction.model_validate({"kind": "override", "after_turn": 2, "value": 3.0, "criterion": "c"})
    assert (old.label_source, old.blind, old.judge_answer, old.where) == ("override", False, None, None)
    assert HumanAction.model_validate({"kind": "decide", "after_turn": 2, "value": "1"}).label_source == "decision"


def session_with(*actions: HumanAction, pairwise: bool = False) -> Session:
    return Session(protocol="single", criteria=[Criterion(name="coherence", description="c"),
                                                Criterion(name="fluency", description="f")],
                   agents=[], task=Task(text="t", text_b="u" if pairwise else None), actions=list(actions))


def test_the_later_answer_on_an_id_and_criterion_wins_and_is_counted() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    first = HumanAction(kind="override", criterion="coherence", value=2.0, after_turn=1, at=start)
    later = HumanAction(kind="audit", criterion="coherence", value=4.0, after_turn=1, at=start + timedelta(hours=1),
                        blind=True, source="audit", judge_answer=3.0, judge_confidence=0.9)
    other = HumanAction(kind="override", criterion="fluency", value=5.0, after_turn=1, at=start)
    remark = HumanAction(kind="inject", text="mind the ending", after_turn=0)
    a, b = session_with(later, other, remark), session_with(first)
    pair = session_with(HumanAction(kind="decide", value="2", criterion="coherence", after_turn=3), pairwise=True)
    labels = export([a, b, pair], {a.id: "item-1", b.id: "item-1"})
    assert [(x["id"], x["criterion"], x.get("human"), x["source"]) for x in labels.lines] == [
        ("item-1", "fluency", 5.0, "override"), ("item-1", "coherence", 4.0, "audit"),
        (pair.id, "coherence", None, "decision")]  # in the order first decided; the later answer on coherence
    assert labels.lines[2]["human_verdict"] == "2" and labels.lines[1]["blind"] is True
    assert labels.summary() == {"labels": 3, "override": 1, "decision": 1, "review": 0, "audit": 1, "blind": 1,
                                "superseded": 1}


def test_label_lines_are_read_back_per_id_as_meta_and_calibrate_join_them(tmp_path) -> None:
    path = write_jsonl(tmp_path / "labels.jsonl", [
        {"id": "x", "criterion": "coherence", "human": 4.0, "source": "audit"},
        {"id": "x", "criterion": "fluency", "human": 2.0, "source": "review"},
        {"id": "p", "criterion": "overall", "human_verdict": "1", "source": "decision"}])
    assert load_labels(path, None) == {"x": {"id": "x", "human": {"coherence": 4.0, "fluency": 2.0}},
                                       "p": {"id": "p", "human_verdict": "1"}}
    twice = write_jsonl(tmp_path / "twice.jsonl", [{"id": "x", "criterion": "c", "human": 1},
                                                   {"id": "x", "criterion": "c", "human": 2}])
    with pytest.raises(LabelsError, match="row 2: a second label for id 'x' on c"):
        load_labels(twice, None)


async def test_the_tuis_tie_break_and_stalemate_keep_the_judges_last_answer_and_the_screen() -> None:
    from tests.helpers.ui import at_decision, scaleeval_app, tie_break_app, wait_until

    app, session = tie_break_app()
    async with app.run_test(size=(80, 24)) as pilot:
        debate = await at_decision(pilot)
        scorer_said = [t.score for t in session.turns if t.role == "scorer"][-1]
        await pilot.press("4")
        await wait_until(pilot, lambda: debate.finished, what="the end")
    (action,) = [a for a in session.actions if a.kind == "decide"]
    assert (action.criterion, action.where, action.source, action.judge_answer) == (
        "coherence", "tui decision", "decision", scorer_said)
    app, session = scaleeval_app()  # a stalemate: the last speaker's verdict, in the original numbering
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await at_decision(pilot)
        last = next(t for t in reversed(session.turns) if t.verdict is not None)
        await pilot.press("0")
        await wait_until(pilot, lambda: debate.finished, what="the end")
    (action,) = [a for a in session.actions if a.kind == "decide"]
    assert session.swapped and action.judge_answer == session.original_verdict(last.verdict) is not None
    assert (action.criterion, action.where) == ("helpfulness", "tui decision")


async def test_a_review_decision_is_a_review_label_under_the_items_id(pairs, capsys) -> None:
    from tests.helpers.batch import queue_for

    queue = queue_for(pairs)
    session = await queue.decide(queue.current, "2")
    (action,) = [a for a in session.actions if a.kind == "decide"]
    last = next(t for t in reversed(session.turns) if t.verdict is not None)
    assert (action.where, action.source, action.criterion) == ("review", "review", "helpfulness")
    assert action.judge_answer == session.original_verdict(last.verdict)
    out = pairs.parent / "labels.jsonl"
    code, summary, err = run_cli(capsys, "labels", "--out", str(out))
    assert code == 0 and summary["labels"] == 0  # without the results, a batch item's session has no id...
    assert "3 batch session(s)" in err and "give their RESULTS.jsonl" in err  # ...and the note says so
    code, summary, err = run_cli(capsys, "labels", str(pairs), "--out", str(out), "--json", "--force")
    assert code == 0 and (summary["labels"], summary["review"]) == (1, 1) and "note" not in err
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert (line["id"], line["criterion"], line["human_verdict"], line["session"]) == (
        "p0", "helpfulness", "2", session.id)


def test_a_replayed_session_describes_its_audit_answers() -> None:
    from debate_tui.ui.replay import describe_action

    action = HumanAction(kind="audit", value=3.0, after_turn=1, who="ann", blind=True, source="audit")
    assert describe_action(action) == "ann answered 3 in a blind audit (a label only: the result is left as it is)"
    assert describe_action(HumanAction(kind="inject", text="mind it", after_turn=0, who="ann")) == (
        "ann injected a remark: mind it")  # an action without a value is described as before
