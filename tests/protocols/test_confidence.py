"""Confidence on every scored outcome: each protocol's rule on the fake server, the shared "agree", the result
line's field, and the same numbers recomputed from the saved session file."""

from __future__ import annotations

import math

import pytest

from debate_tui.batch.items import Item
from debate_tui.batch.rows import item_rows
from debate_tui.domain import HumanAction, Outcome, Session, agrees
from debate_tui.engine.runner import apply_overrides
from debate_tui.protocols import all_protocols, get_protocol
from debate_tui.protocols.confidence import of_outcome
from tests.helpers import REPO
from tests.helpers.scripts import (
    CONTRARIAN_SPEAKER,
    JUDGES,
    REMINDER,
    chateval_script,
    debate_script,
    jury_session,
    scaleeval_script,
    scripted,
    seed_where,
)
from tests.helpers.sessions import make_session, run, run_with_events


def recomputed(session: Session) -> dict[str, float | None]:
    """The confidence from the session as saved: JSON out and back, then the protocol's declared rule."""
    loaded = Session.model_validate_json(session.model_dump_json())
    assert loaded.outcome is not None
    return of_outcome(get_protocol(loaded.protocol).confidence, loaded, loaded.outcome)


def test_agree_is_the_same_verdict_or_within_the_tolerance() -> None:
    assert agrees(3.0, 3.5) and not agrees(3.0, 3.51) and agrees(3.0, 3.9, tolerance=1.0)
    assert agrees("1", "1") and not agrees("1", "0") and not agrees(None, 3.0) and not agrees(3.0, None)


def test_every_protocol_declares_its_rule() -> None:
    for spec in all_protocols().values():
        assert len(spec.confidence.rule) > 40 and callable(spec.confidence.of)


async def test_single_samples_share_agreeing_with_the_mean(llm_server) -> None:
    llm_server.add_rule("Still hard to tell.", match=REMINDER)
    replies = iter(["Score: 4", "Score: 2", "Hard to tell.", "Score: 3"])
    llm_server.add_rule(lambda request: next(replies))
    session = await run(make_session("single", llm_server, samples=4))
    assert session.outcome.scores == {"coherence": 3.0}
    # 4, 2, unreadable (re-asked, still unreadable: one sample), 3: only the 3 is within 0.5 of the answer
    assert session.outcome.confidence == {"coherence": 0.25} == recomputed(session)


async def test_single_logprob_mass_on_the_score(llm_server) -> None:
    llm_server.add_rule("Score: 3", logprobs={"3": math.log(0.7), "4": math.log(0.2), "2": math.log(0.1)})
    session = await run(make_session("single", llm_server, samples=2, logprobs=True))
    assert session.outcome.confidence["coherence"] == pytest.approx(0.7)
    assert recomputed(session)["coherence"] == pytest.approx(0.7)


async def test_single_one_sample_without_logprobs_is_sure_of_itself_and_unscored_is_null(llm_server) -> None:
    llm_server.add_rule("Score: 2")
    assert (await run(make_session("single", llm_server))).outcome.confidence == {"coherence": 1.0}
    llm_server.reset()
    llm_server.add_rule("No idea at all.")
    assert (await run(make_session("single", llm_server))).outcome.confidence == {"coherence": None}


async def test_pair_samples_preferences_agreeing_with_the_verdict(llm_server) -> None:
    replies = iter(["Scores: 4 2", "Scores: 5 3", "Scores: 2 3"])
    llm_server.add_rule(lambda request: next(replies))
    session = await run(make_session("single", llm_server, text_b="Another text.", samples=3))
    assert session.outcome.verdict == "1"  # mean scores 3.67 against 2.67
    assert session.outcome.confidence == {"coherence": pytest.approx(2 / 3)}  # preferences 1, 1, 2


async def test_jury_share_of_judges_agreeing(llm_server) -> None:
    scripted(llm_server, JUDGES)  # scores 1, 3, 1
    session = await run(jury_session(llm_server, ["judge-a", "judge-b", "judge-c"],
                                                         jury_aggregate="median"))
    assert session.outcome.scores["coherence"] == 1.0
    assert session.outcome.confidence["coherence"] == pytest.approx(2 / 3) == recomputed(session)["coherence"]


@pytest.mark.parametrize("agree_at,expected", [(1, 1.0), (3, 0.5), (None, 0.0)])
async def test_debate_critic_acceptance_and_whether_the_score_moved(llm_server, agree_at, expected) -> None:
    debate_script(llm_server, agree_at=agree_at)  # scores 5, 4, 3, ...: every rebuttal moves the score
    session, _ = await run_with_events(make_session("debate", llm_server, rounds=4))
    assert session.outcome.confidence == {"coherence": expected} == recomputed(session)


async def test_chateval_end_and_first_vote_agreement(llm_server) -> None:
    rounds = {"General Public": ["Score: 4", "Score: 3"], "Critic": ["Score: 2", "Score: 3"],
              "News Author": ["Score: 3", "Score: 3"]}
    chateval_script(llm_server, rounds)
    session, _ = await run_with_events(make_session("chateval", llm_server, turns=2))
    assert session.outcome.scores["coherence"] == 3.0
    # at the end all three agree with 3; in the first vote only the News Author did: (1 + 1/3) / 2
    assert session.outcome.confidence["coherence"] == pytest.approx(2 / 3) == recomputed(session)["coherence"]


def test_an_override_leaves_no_judge_confidence() -> None:
    outcome = Outcome(scores={"coherence": 2.0}, confidence={"coherence": 0.9})
    apply_overrides(outcome, [HumanAction(kind="override", after_turn=0, criterion="coherence", value=4)])
    assert outcome.confidence == {"coherence": None}


async def test_result_line_carries_the_sessions_confidence(llm_server) -> None:
    llm_server.add_rule("Score: 2")
    session = await run(make_session("single", llm_server, criteria=("coherence", "fluency")))
    item = Item(id="a", task=session.task, line=1, human={"coherence": 2.0})
    rows = item_rows(item, session)
    assert [r["confidence"] for r in rows] == [1.0, 1.0]
    session.actions.append(HumanAction(kind="override", after_turn=1, criterion="fluency", value=3))
    assert [r["confidence"] for r in item_rows(item, session)] == [1.0, None]


def test_trust_doc_states_each_protocols_rule_as_its_spec_does() -> None:

    doc = (REPO / "docs" / "TRUST.md").read_text(encoding="utf-8")
    for spec in all_protocols().values():
        assert spec.confidence.rule in doc, spec.name


async def test_scaleeval_unanimous_at_once_is_sure(llm_server) -> None:

    scaleeval_script(llm_server)
    session = await run(make_session("scaleeval", llm_server, seed=seed_where(False)))
    assert session.outcome.confidence == {"helpfulness": 1.0} == recomputed(session)


async def test_scaleeval_moved_to_consensus_is_less_sure(llm_server) -> None:
    """A contrarian who comes round after the initial round: (3 of 3 at the end + 2 of 3 at first) / 2."""

    scaleeval_script(llm_server, stubborn_rounds=0)
    session = await run(make_session("scaleeval", llm_server, seed=seed_where(False), per_agent=CONTRARIAN_SPEAKER))
    assert session.outcome.verdict == "2"
    assert session.outcome.confidence["helpfulness"] == pytest.approx(5 / 6) == recomputed(session)["helpfulness"]
