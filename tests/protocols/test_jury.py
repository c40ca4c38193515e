"""A jury for the single judge: one judge per model on the fake server, aggregated by mean, median or majority,
each judge's score kept in the result line, the judges' agreement in the report; and through the CLI."""

from __future__ import annotations

import json

import pytest

from debate_tui.batch.rows import refresh
from debate_tui.choices import Choices
from debate_tui.cli import main
from debate_tui.domain import Task
from debate_tui.factory import build_session
from debate_tui.inputs import InputError
from debate_tui.protocols import single
from debate_tui.report.markdown import render
from tests.helpers import STORY
from tests.helpers.scripts import JUDGES, jury_session, scripted
from tests.helpers.sessions import run

PAIRS = {"judge-a": "Scores: 3 1", "judge-b": "Scores: 1 3", "judge-c": "Scores: 3 2"}


@pytest.mark.parametrize("models,aggregate,expected", [
    (["judge-a", "judge-b"], "mean", 2.0),
    (["judge-a", "judge-b"], "majority", 2.0),  # no majority of two different scores: the median
    (["judge-a", "judge-b", "judge-c"], "mean", 5 / 3),
    (["judge-a", "judge-b", "judge-c"], "median", 1.0),
    (["judge-a", "judge-b", "judge-c"], "majority", 1.0),
])
async def test_each_model_judges_once_and_the_jury_aggregates(llm_server, models, aggregate, expected):
    scripted(llm_server, JUDGES)
    session = await run(jury_session(llm_server, models, jury_aggregate=aggregate))
    assert llm_server.calls == 2 * len(models) == session.usage.calls  # two criteria
    assert sorted({r.model for r in llm_server.requests}) == models
    assert session.outcome.scores == {"coherence": pytest.approx(expected), "fluency": pytest.approx(expected)}
    assert [a.name for a in session.agents] == [f"Judge {n}" for n in range(1, len(models) + 1)]
    assert session.outcome.per_agent["Judge 2"] == {"coherence": 3.0, "fluency": 3.0}
    assert single.calls(single.Options(jury=",".join(models)), 2, False).most == 2 * len(models)


async def test_result_line_keeps_every_judge_s_score_and_the_report_their_agreement(llm_server):
    scripted(llm_server, JUDGES)
    session = await run(jury_session(llm_server, ["judge-a", "judge-b"]))
    row = refresh([{"id": "x", "criterion": "coherence", "predicted": None, "human": 3}], session)[0]
    assert row["predicted"] == 2.0 and row["predicted_judges"] == {"Judge 1": 1.0, "Judge 2": 3.0}
    assert row["jury"] == {"Judge 1": "openai/judge-a", "Judge 2": "openai/judge-b"}
    report = render(session)
    assert ("**Jury:** 2 judges (Judge 1: openai/judge-a, Judge 2: openai/judge-b); inter-judge agreement: "
            "coherence 1, 3 (spread 2); fluency 1, 3 (spread 2).") in report


async def test_a_pair_s_verdict_is_the_majority_of_the_judges_preferences(llm_server):
    scripted(llm_server, PAIRS)
    session = await run(jury_session(llm_server, list(PAIRS), text_b="Tom swam."))
    assert llm_server.calls == 6 and not any(t.unscored for t in session.turns)
    assert session.outcome.verdict == "1"
    row = refresh([{"id": "x", "criterion": "coherence", "predicted": None, "human": None}], session)[0]
    assert row["verdict_judges"] == {"Judge 1": "1", "Judge 2": "2", "Judge 3": "1"}
    assert "preferences" in render(session)


def test_a_jury_of_one_is_refused_with_a_reason():
    with pytest.raises(InputError, match="a jury needs two or more models"):
        build_session(Task(text=STORY), Choices(protocol="single", options={"jury": "openai/a"}))


def test_an_agent_model_names_one_juror_s_model_over_the_jury_list():
    choices = Choices(protocol="single", options={"jury": "openai/a,openai/b"}, agent_models={"judge-2": "openai/c"})
    agents = build_session(Task(text=STORY), choices).session.agents
    assert [(a.name, a.model) for a in agents] == [("Judge 1", "openai/a"), ("Judge 2", "openai/c")]


def test_demo_replaces_every_juror_s_model():
    choices = Choices(protocol="single", demo=True, options={"jury": "openai/a,openai/b"})
    built = build_session(Task(text=STORY), choices)
    assert built.demo and {a.model for a in built.session.agents} == {"demo/offline"}


def test_run_and_batch_take_jury_flags(llm_server, tmp_path, story_file, capsys):
    scripted(llm_server, JUDGES)
    jury = ["--protocol", "single", "--jury", "openai/judge-a,openai/judge-b,openai/judge-c",
            "--jury-aggregate", "median", "--api-base", llm_server.base_url, "--criteria", "coherence"]
    assert main(["run", "--text", str(story_file), *jury]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["scores"] == {"coherence": 1.0}
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{i}", "text": f"{STORY} {i}", "human": {"coherence": 3}}) + "\n"
                             for i in range(2)))
    out = tmp_path / "results.jsonl"
    assert main(["batch", str(items), "--out", str(out), *jury]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["predicted_judges"] for r in rows] == [{"Judge 1": 1.0, "Judge 2": 3.0, "Judge 3": 1.0}] * 2
    capsys.readouterr()
    assert main(["meta", str(out), "--level", "turn", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["jury"]["criteria"]["coherence"]["n"] == 2
