"""The vote before discussion: each multi-agent protocol's first answers, scripted on the fake server so that
the vote and the final differ, in the outcome, the report, the result lines and meta; then the demo model over
shipped data through the CLI."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from debate_tui.batch.rows import refresh
from debate_tui.choices import Choices
from debate_tui.cli import main
from debate_tui.domain import HumanAction, Session, Task, Turn
from debate_tui.factory import build_session, runner_for
from debate_tui.llm.router import ModelRouter
from debate_tui.protocols import mateval, scaleeval
from debate_tui.report.markdown import render
from debate_tui.testing.fake_server import prompt_text
from tests.helpers import STORY

REPEATED = "He went to the pool every morning."


def session_for(server, protocol: str, *, text_b: str | None = None, source: str | None = None,
                criteria: list[str] | None = None, agent_models: dict[str, str] | None = None, **options) -> Session:
    choices = Choices(protocol=protocol, model="openai/fake-model", api_base=server.base_url, criteria=criteria,
                      options=options, agent_models=agent_models or {})
    return build_session(Task(text=STORY, text_b=text_b, source=source), choices).session


async def run(session: Session) -> Session:
    return await runner_for(session, ModelRouter()).run()


def row_of(session: Session, criterion: str) -> dict:
    return refresh([{"id": "x", "criterion": criterion, "predicted": None, "human": 3}], session)[0]


def debate_script(server) -> None:
    """The Scorer says 2, the Critic objects, the Scorer says 4, the Critic agrees."""
    server.add_rule("Reconsidered: the story is clear.\nScore: 4", match="The Critic replies")
    server.add_rule(lambda r: "NO ISSUE" if "Reconsidered" in prompt_text(r) else "Too harsh: it reads well.",
                    match="Criticise the score")
    server.add_rule("First look: a repeated sentence.\nScore: 2")


async def test_debate_s_vote_is_the_scorer_s_first_score(llm_server):
    debate_script(llm_server)
    session = await run(session_for(llm_server, "debate", criteria=["coherence"]))
    outcome = session.outcome
    assert llm_server.calls == 4 and outcome.scores == {"coherence": 4.0}
    assert outcome.vote.scores == {"coherence": 2.0} and outcome.vote.per_agent == {"Scorer": {"coherence": 2.0}}
    assert outcome.vote.slots == [0] and "one scorer in the first round" in outcome.vote.method
    row = row_of(session, "coherence")
    assert (row["predicted"], row["predicted_vote"], row["calls"], row["calls_vote"]) == (4.0, 2.0, 4, 1)
    assert (row["protocol"], row["model"]) == ("debate", "openai/fake-model")
    assert "**Vote before discussion:** coherence 2 (final 4): the Scorer's first score" in render(session)
    assert "1 call of 4" in render(session)
    assert "1 call of 4." in render(session), "no price known: no $0.0000 budget (issue 46)"


async def test_a_resumed_session_keeps_its_vote_from_the_replayed_turns(llm_server):
    llm_server.add_rule("Still too harsh.", match="Criticise the score")
    llm_server.add_rule(lambda r: "Reconsidered.\nScore: 3" if "The Critic replies" in prompt_text(r)
                        else "First look.\nScore: 2")
    session = await run(session_for(llm_server, "debate", criteria=["coherence"], rounds=1, tie_breaker="human"))
    assert session.status == "needs_human" and llm_server.calls == 3
    session.actions.append(HumanAction(kind="decide", value="5", after_turn=len(session.turns)))
    resumed = await run(session)
    assert resumed.status == "completed" and llm_server.calls == 3, "replayed, not asked again"
    assert resumed.outcome.scores == {"coherence": 5.0}
    assert resumed.outcome.vote.scores == {"coherence": 2.0} and resumed.outcome.vote.slots == [0]


def chateval_scores(request: dict) -> str:
    """First turn: General Public 2, Critic 4; afterwards both 5."""
    text = prompt_text(request)
    if "(Nobody has spoken yet.)" in text:
        return "Score: 2" if "General Public!" in text else "Score: 4"
    return "Agreed after hearing the others.\nScore: 5"


async def test_chateval_s_vote_is_the_mean_of_independent_first_turn_scores(llm_server):
    llm_server.add_rule(chateval_scores)
    session = await run(session_for(llm_server, "chateval", criteria=["coherence"], agents=2, turns=2,
                                    strategy="simultaneous-talk"))
    vote = session.outcome.vote
    assert session.outcome.scores == {"coherence": 5.0}
    assert vote.scores == {"coherence": 3.0}
    assert vote.per_agent == {"General Public": {"coherence": 2.0}, "Critic": {"coherence": 4.0}}
    assert vote.slots == [0, 1] and "(independent)" in vote.method
    row = row_of(session, "coherence")
    assert (row["predicted"], row["predicted_vote"], row["calls"], row["calls_vote"]) == (5.0, 3.0, 4, 2)


async def test_chateval_pair_vote_is_the_majority_of_first_turn_preferences_calibrated_over_the_swap(llm_server):
    # one by one, 3 referees, 2 turns, then the same with the texts exchanged: the first turn prefers the
    # original text 1 in both orders, the second turn text 2
    replies = ["Scores: 4 2"] * 3 + ["Scores: 2 5"] * 3 + ["Scores: 2 4"] * 3 + ["Scores: 5 2"] * 3
    llm_server.replies_in_order(None, replies)
    session = await run(session_for(llm_server, "chateval", text_b="Tom swam.", criteria=["coherence"], agents=3,
                                    turns=2, swap=True))
    outcome, vote = session.outcome, session.outcome.vote
    assert llm_server.calls == 12
    assert outcome.verdict == "2" and vote.verdict == "1"
    assert vote.scores == {"coherence_1": 4.0, "coherence_2": 2.0}
    assert vote.slots == [0, 1, 2, 6, 7, 8]
    assert "one-by-one: each referee after the first had heard those before it" in vote.method
    row = row_of(session, "coherence")
    assert (row["predicted_verdict"], row["verdict_vote"], row["calls_vote"]) == ("2", "1", 6)
    assert "verdict 1 (final 2)" in render(session)


async def test_scaleeval_s_vote_is_the_majority_of_the_initial_verdicts(llm_server):
    llm_server.add_rule("I prefer the second.\n2", match="Compare the two submissions", model="fake-contrarian")
    llm_server.add_rule("The first is better.\n1", match="Compare the two submissions")
    llm_server.add_rule("Convinced: the second.\n2")
    names = ["Speaker 1", "Speaker 2", "Speaker 3"]
    seed = next(s for s in range(100) if not scaleeval.Order.draw(random.Random(s), names).swapped)
    session = await run(session_for(llm_server, "scaleeval", text_b="Tom swam.", source="Who swam?", seed=seed,
                                    agent_models={"Speaker 3": "openai/fake-contrarian"}))
    outcome, vote = session.outcome, session.outcome.vote
    assert llm_server.calls == 6
    assert outcome.verdict == "2" and outcome.method == "consensus in discussion round 1"
    assert vote.verdict == "1" and vote.agent_verdicts == {"Speaker 1": "1", "Speaker 2": "1", "Speaker 3": "2"}
    assert "majority of 2x 1, 1x 2" in vote.method
    assert [t.round for t in session.turns if t.slot in vote.slots] == [0, 0, 0]
    assert row_of(session, "helpfulness")["verdict_vote"] == "1"


async def test_scaleeval_s_vote_on_a_split_is_a_tie_and_unanimity_costs_nothing_more(llm_server):
    llm_server.add_rule("The first.\n1")
    session = await run(session_for(llm_server, "scaleeval", text_b="Tom swam.", source="Who swam?", seed=3))
    assert session.outcome.vote.verdict == session.outcome.verdict
    assert len(session.outcome.vote.slots) == session.usage.calls == 3


def mateval_script(server) -> None:
    """Both evaluators quote the repeated sentence; the summarizer's report finds no error."""
    server.add_rule("Q: Does the text contain Repetition (REP) errors?\nA: No\nScores: REP 0. Total: 0",
                    match="You are the Summarizer")
    server.add_rule("Feedback: the evaluators agree.", match="You are the Feedback agent")
    server.add_rule(f'Repetition: yes. "{REPEATED}" comes twice.')


async def test_mateval_s_vote_counts_the_sentences_each_statement_quotes(llm_server):
    mateval_script(llm_server)
    session = await run(session_for(llm_server, "mateval", criteria=["REP"], strategy="CoT", evaluators=2))
    outcome, vote = session.outcome, session.outcome.vote
    assert outcome.scores == {"REP": 0.0, "total": 0.0}
    assert vote.scores == {"REP": -1.0, "total": -1.0}
    assert vote.per_agent == {"Evaluator 1": {"REP": -1.0}, "Evaluator 2": {"REP": -1.0}}
    assert vote.slots == [0, 1]  # the statements; the feedback and the summary are not the vote's
    row = row_of(session, "REP")
    assert (row["predicted"], row["predicted_vote"], row["calls"], row["calls_vote"]) == (0.0, -1.0, 4, 2)


def test_a_statement_scores_one_point_per_distinct_sentence_found_in_the_text():
    def said(content: str, error: str | None = None) -> Turn:
        return Turn(slot=0, agent="Evaluator 1", role="evaluator", round=1, content=content, error=error)

    assert mateval.statement_score(said(f'"{REPEATED}" and again “{REPEATED}”'), STORY) == -1.0
    assert mateval.statement_score(said('"Tom flew to the moon." is wrong'), STORY) == 0.0
    assert mateval.statement_score(said(f"'{REPEATED}' comes twice, I don't doubt it"), STORY) == -1.0  # single quotes
    assert mateval.statement_score(said("No such error."), STORY) == 0.0
    assert mateval.statement_score(said("", error="timeout"), STORY) is None


async def test_mateval_on_the_whole_question_records_no_vote(llm_server):
    mateval_script(llm_server)
    session = await run(session_for(llm_server, "mateval", criteria=["REP"], strategy="O_b_O", evaluators=2))
    assert session.status == "completed" and session.outcome.vote is None
    assert "predicted_vote" not in row_of(session, "REP")


async def test_the_single_judge_has_no_vote(llm_server):
    llm_server.add_rule("Score: 3")
    session = await run(session_for(llm_server, "single", criteria=["coherence"]))
    assert session.outcome.vote is None and "Vote before discussion" not in render(session)
    assert not {"predicted_vote", "calls_vote", "predicted_judges"} & set(row_of(session, "coherence"))


def test_batch_and_meta_on_the_fake_server(llm_server, tmp_path, capsys):
    debate_script(llm_server)
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{i}", "group": "g", "text": f"{STORY} Number {i}.",
                                         "human": {"coherence": 1 + i}}) + "\n" for i in range(3)))
    out = tmp_path / "results.jsonl"
    assert main(["batch", str(items), "--out", str(out), "--protocol", "debate", "--criteria", "coherence",
                 "--model", "openai/fake-model", "--api-base", llm_server.base_url]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["predicted"], r["predicted_vote"], r["calls_vote"]) for r in rows] == [(4.0, 2.0, 1)] * 3
    capsys.readouterr()
    assert main(["meta", str(out), "--level", "turn", "--json"]) == 0
    vote = json.loads(capsys.readouterr().out)["vote"]
    assert (vote["calls"], vote["final_calls"], vote["items"]) == (3, 12, 3)
    assert vote["criteria"]["coherence"]["n"] == 3
    assert main(["meta", str(out), "--level", "turn"]) == 0
    table = capsys.readouterr().out
    assert "vote before discussion (debate / openai/fake-model)" in table
    assert "cost: final 12 calls" in table and "vote 3 calls" in table


DEMO_RUNS = [
    ("debate", "summeval", ["--criteria", "coherence"], "predicted_vote"),
    ("chateval", "summeval", ["--criteria", "coherence"], "predicted_vote"),
    ("chateval", "faireval", [], "verdict_vote"),
    ("mateval", "mateval-roc", [], "predicted_vote"),
    ("scaleeval", "faireval", ["--on-no-consensus", "majority"], "verdict_vote"),
]


@pytest.mark.parametrize("protocol,dataset,flags,field", DEMO_RUNS, ids=[f"{p}-{d}" for p, d, _, _ in DEMO_RUNS])
def test_demo_model_over_shipped_data_records_the_vote(protocol, dataset, flags, field, tmp_path: Path, capsys):
    assert main(["dataset", dataset, "--limit", "2"]) == 0
    items = tmp_path / "items.jsonl"
    items.write_text(capsys.readouterr().out)
    out = tmp_path / "results.jsonl"
    assert main(["batch", str(items), "--out", str(out), "--protocol", protocol, "--demo", "--no-cache", *flags]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(field in r and 0 < r["calls_vote"] <= r["calls"] for r in rows)
    capsys.readouterr()
    assert main(["meta", str(out), "--level", "turn", "--json", "--bootstrap", "50"]) == 0
    vote = json.loads(capsys.readouterr().out)["vote"]
    assert 0 < vote["calls"] <= vote["final_calls"]
