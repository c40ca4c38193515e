"""The single judge (G-Eval style baseline) against the fake server, and on the demo model through the CLI."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from debate_tui.catalog import find_persona
from debate_tui.cli import main
from debate_tui.domain import Session
from debate_tui.llm.base import ChatRequest, TokenLogprobs
from debate_tui.llm.cache import cacheable
from debate_tui.parsing import weighted_score
from debate_tui.protocols import single
from debate_tui.protocols.common import ModelChoice
from debate_tui.report.markdown import render
from tests.helpers import STORY
from tests.helpers.scripts import REMINDER
from tests.helpers.sessions import make_session, run


async def test_one_call_per_criterion_with_steps_and_form(llm_server):
    llm_server.add_rule("Fine apart from a repeat.\nScore: 3")
    session = await run(make_session("single", llm_server, criteria=("coherence", "fluency")))
    assert llm_server.calls == 2 == session.usage.calls
    assert session.outcome.scores == {"coherence": 3, "fluency": 3}
    first = "\n".join(m["content"] for m in llm_server.requests[0].messages)
    assert "Evaluation steps:" in first and "Score: N" in first and STORY in first
    assert "temperature" not in llm_server.requests[0].body


async def test_samples_are_averaged_and_unscored_ones_counted(llm_server):
    llm_server.add_rule("Still hard to tell.", match=REMINDER)
    replies = iter(["Score: 4", "Score: 2", "Hard to tell.", "Score: 3"])
    llm_server.add_rule(lambda request: next(replies))
    session = await run(make_session("single", llm_server, samples=4))
    assert llm_server.calls == 4 + 1  # the unreadable sample was re-asked once, then left unscored
    assert session.outcome.scores == {"coherence": 3.0}  # (4 + 2 + 3) / 3, not (4 + 2 + 0 + 3) / 4
    assert session.outcome.per_agent == {"Judge": {"coherence": 3.0}}
    assert session.outcome.notes[0] == "coherence: mean of 4 samples (1 unscored, not counted)"
    assert sum(t.unscored for t in session.turns) == 1
    assert {r.body.get("temperature") for r in llm_server.requests} == {1.0}  # G-Eval samples at temperature 1


async def test_all_samples_unscored_gives_no_score(llm_server):
    llm_server.add_rule("No idea.")
    session = await run(make_session("single", llm_server, samples=2))
    assert session.outcome.scores == {"coherence": None}
    assert session.status == "completed"


async def test_pairwise_judge_prefers_the_higher_scored_text(llm_server):
    pairs = itertools.cycle(["Scores: 2 4", "Scores: 3 4"])
    llm_server.add_rule(lambda request: next(pairs))
    session = await run(make_session("single", llm_server, text_b="Another answer entirely.", samples=2))
    outcome = session.outcome
    assert outcome.scores == {"coherence_1": 2.5, "coherence_2": 4.0}
    assert outcome.verdict == "2" and outcome.agent_verdicts == {"Judge": "2"}


async def test_pairwise_swap_doubles_the_calls(llm_server):
    llm_server.add_rule("Scores: 4 3")
    session = await run(make_session("single", llm_server, text_b="Another answer entirely.", swap=True))
    assert llm_server.calls == 2
    assert session.state["swap"]["consistent"] is False and session.outcome.verdict == "0"


def test_persona_becomes_the_system_prompt():
    spec = single.build_agents(single.Options(), ModelChoice(default="m"), [find_persona("scientist")])[0]
    assert spec.role == "judge" and spec.persona.name == "scientist"


def test_cli_demo_samples(capsys, story_file):
    rc = main(["run", "--protocol", "single", "--demo", "--text", str(story_file), "--samples", "3"])
    out, err = capsys.readouterr()
    summary = json.loads(out.strip().splitlines()[-1])
    assert rc == 0 and summary["protocol"] == "single" and summary["calls"] == 3
    assert summary["scores"] == {"coherence": 4.0}  # five, less one for the repeated sentence
    assert "(demo)" in err


# ----- G-Eval's probability-weighted score (--logprobs) ------------------------------------

SCRIPTED = {"3": math.log(0.7), "4": math.log(0.2), "2": math.log(0.1)}
"""p(3)=0.7, p(4)=0.2, p(2)=0.1: the weighted score is 0.7*3 + 0.2*4 + 0.1*2 = 3.1."""


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "plain"])
async def test_weighted_score_from_the_score_tokens_log_probabilities(llm_server, stream):
    llm_server.add_rule("Fine apart from a repeat.\nScore: 3", logprobs=SCRIPTED)
    session = await run(make_session("single", llm_server, logprobs=True), stream=stream)
    body = llm_server.requests[0].body
    assert body["logprobs"] is True and body["top_logprobs"] == 5 and bool(body.get("stream")) is stream
    turn = session.turns[0]
    assert turn.logprobs and turn.weighted_score == pytest.approx(3.1)
    outcome = session.outcome
    assert outcome.scores == {"coherence": 3}  # the parsed score stays the contract
    assert "coherence: probability-weighted score: 3.10" in outcome.notes
    assert session.state["weighted_scores"] == {"coherence": pytest.approx(3.1)}
    assert "- coherence: probability-weighted score: 3.10" in render(session)


async def test_weighted_scores_of_samples_are_averaged(llm_server):
    llm_server.add_rule("Score: 3", logprobs=SCRIPTED, times=1)
    llm_server.add_rule("Score: 4", logprobs={"4": 0.0})
    session = await run(make_session("single", llm_server, samples=2, logprobs=True))
    assert sorted(t.weighted_score for t in session.turns) == [pytest.approx(3.1), 4.0]
    assert session.outcome.scores == {"coherence": 3.5}
    assert "coherence: probability-weighted score: 3.55 (mean of 2 of 2 samples)" in session.outcome.notes


async def test_without_the_option_no_log_probabilities_are_asked_for(llm_server):
    llm_server.add_rule("Score: 3", logprobs=SCRIPTED)
    session = await run(make_session("single", llm_server))
    assert "logprobs" not in llm_server.requests[0].body and "top_logprobs" not in llm_server.requests[0].body
    assert session.turns[0].weighted_score is None and not session.turns[0].logprobs
    assert not any("probability-weighted" in note for note in session.outcome.notes)
    assert "weighted_scores" not in session.state


async def test_a_provider_without_log_probabilities_still_completes_with_a_note(llm_server):
    llm_server.logprobs = False
    llm_server.add_rule("Score: 3", logprobs=SCRIPTED)
    session = await run(make_session("single", llm_server, logprobs=True))
    assert llm_server.requests[0].body["logprobs"] is True
    assert session.status == "completed" and session.outcome.scores == {"coherence": 3}
    assert "coherence: no log-probabilities returned, so no probability-weighted score" in session.outcome.notes
    assert session.state["weighted_scores"] == {"coherence": None}


async def test_a_resumed_run_replays_the_weighted_score(llm_server):
    llm_server.add_rule("Score: 3", logprobs=SCRIPTED)
    first = await run(make_session("single", llm_server, logprobs=True))
    again = await run(Session.model_validate_json(first.model_dump_json()))
    assert llm_server.calls == 1  # replayed, not asked again: the weighted score was saved with the turn
    assert again.outcome.notes == first.outcome.notes
    assert again.state["weighted_scores"] == {"coherence": pytest.approx(3.1)}


async def test_a_pair_gets_no_weighted_score(llm_server):
    llm_server.add_rule("Scores: 2 4")
    session = await run(make_session("single", llm_server, text_b="Another answer entirely.", logprobs=True))
    assert session.outcome.verdict == "2"
    assert not any("probability-weighted" in note for note in session.outcome.notes)
    assert all(t.weighted_score is None for t in session.turns)


def test_the_cli_flag_asks_for_log_probabilities(capsys, story_file, llm_server):
    llm_server.add_rule("Score: 3", logprobs=SCRIPTED)
    rc = main(["run", "--protocol", "single", "--model", "openai/fake-judge", "--api-base", llm_server.base_url,
               "--text", str(story_file), "--logprobs"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0 and summary["scores"] == {"coherence": 3}
    assert llm_server.requests[0].body["top_logprobs"] == 5
    report = Path(summary["session_path"]).with_suffix(".md").read_text()
    assert "probability-weighted score: 3.10" in report


def test_a_request_for_log_probabilities_is_never_served_from_the_cache():
    params = {"temperature": 0, "logprobs": True, "top_logprobs": 5}
    assert not cacheable(ChatRequest(model="m", messages=[], params=params))


def tokens(*spelled: str, top: dict[str, float] | None = None, at: int = -1) -> list[TokenLogprobs]:
    """Hand-made tokens, each certain, except the one at `at`, whose alternatives are `top`."""
    made = [TokenLogprobs(token, {token: 0.0}) for token in spelled]
    if top is not None:
        made[at] = TokenLogprobs(spelled[at], top)
    return made


def test_the_score_token_is_the_one_after_the_last_score_label():
    echo_then_answer = tokens("A", " score", " of", " 1", " means", ".", "\n", "**", "Score", ":**", " 3",
                              top={" 3": math.log(0.5), " 4": math.log(0.5)}, at=10)
    assert weighted_score(echo_then_answer, 1, 5) == pytest.approx(3.5)
    last_label = tokens("Score", ":", " 2", "\n", "Score", ":", " 3", top={" 3": math.log(0.6), "5": math.log(0.4)})
    assert weighted_score(last_label, 1, 5) == pytest.approx(3.8)


def test_out_of_scale_and_non_number_candidates_are_ignored():
    top = {"3": math.log(0.3), " 4": math.log(0.3), "9": math.log(0.2), "0": math.log(0.1), "**": math.log(0.1)}
    assert weighted_score(tokens("Score", ":", " ", "3", top=top, at=3), 1, 5) == pytest.approx(3.5)


def test_spellings_of_one_value_add_up():
    top = {" 3": math.log(0.4), "3": math.log(0.4), " 5": math.log(0.2)}
    assert weighted_score(tokens("Score", ":", " 3", top=top), 1, 5) == pytest.approx(3.4)


def test_without_a_label_the_token_of_the_parsed_score_is_weighed():
    said = tokens("I", " would", " give", " it", " 4", ".", top={" 4": math.log(0.5), " 2": math.log(0.5)}, at=4)
    assert weighted_score(said, 1, 5, score=4) == pytest.approx(3.0)
    assert weighted_score(said, 1, 5) is None  # no label and no parsed score: nothing says which number


def test_no_in_scale_candidate_or_no_whole_number_gives_none():
    assert weighted_score(tokens("Score", ":", " 3", top={" 7": 0.0, "x": -1.0}), 1, 5) is None
    assert weighted_score(tokens("Score", ":", " 1", "0"), 1, 10, score=10) is None  # "1" is part of "10"
    assert weighted_score(tokens("Score", ":", " 3", ".", "5"), 1, 5, score=3.5) is None  # part of "3.5"
    assert weighted_score(tokens("No", " idea"), 1, 5) is None
    assert weighted_score([], 1, 5) is None


def test_the_confidence_mass_weighs_the_token_the_weighted_score_weighs():
    """One weighting: a score in brackets ("[3]") is a score token for both, and its mass is the share of the
    same normalised candidates within AGREE_TOLERANCE of the score."""
    from debate_tui.engine.mass import score_mass

    bracketed = tokens("Score", ":", " [3]", top={" [3]": math.log(0.6), " [4]": math.log(0.3), "x": math.log(0.1)})
    assert weighted_score(bracketed, 1, 5, score=3) == pytest.approx(0.6 / 0.9 * 3 + 0.3 / 0.9 * 4)
    assert score_mass(bracketed, 1, 5, 3) == pytest.approx(0.6 / 0.9)
    echoed = tokens("Score", ":", " 3", " (", "not", " 3", ")", top={" 3": math.log(0.8), "2": math.log(0.2)}, at=2)
    assert score_mass(echoed, 1, 5, 3) == pytest.approx(0.8)  # the labelled token, not the last "3"
    assert score_mass(echoed, 1, 5, 3.5) is None
