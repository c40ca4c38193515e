"""DEBATE against the fake server through the real litellm path: call counts, final scores, stops."""

from __future__ import annotations

import pytest

from debate_tui.catalog import find_criterion
from debate_tui.engine.events import TurnCompleted
from tests.helpers.scripts import CRITIC, debate_script
from tests.helpers.sessions import make_session, run_with_events


@pytest.mark.parametrize("k", [1, 2, 3, 4])
async def test_no_issue_at_iteration_k_makes_2k_calls_and_keeps_the_last_score(llm_server, k):
    debate_script(llm_server, agree_at=k)
    session, _ = await run_with_events(make_session("debate", llm_server, rounds=4))
    assert session.status == "completed"
    assert llm_server.calls == 2 * k == session.usage.calls
    roles = [t.role for t in session.turns]
    assert roles.count("scorer") == k and roles.count("critic") == k
    expected_last = [5, 4, 3, 2][k - 1]
    assert session.outcome.scores == {"coherence": expected_last}
    assert session.turns[-1].no_issue is True
    assert f"NO ISSUE after {k} iteration" in session.outcome.method


@pytest.mark.parametrize("n", [1, 2, 4])
async def test_critic_never_agreeing_makes_2n_plus_1_calls(llm_server, n):
    debate_script(llm_server, agree_at=None)
    session, _ = await run_with_events(make_session("debate", llm_server, rounds=n))
    assert llm_server.calls == 2 * n + 1 == session.usage.calls
    assert session.outcome.scores["coherence"] == [5, 4, 3, 2, 1][n]
    assert "no agreement" in session.outcome.method


async def test_tie_breaker_decides_with_one_more_call(llm_server):
    debate_script(llm_server, agree_at=None, tie_breaker_score=2)
    session, _ = await run_with_events(make_session("debate", llm_server, rounds=2, tie_breaker="agent"))
    assert llm_server.calls == 2 * 2 + 1 + 1
    assert session.turns[-1].role == "tie_breaker"
    assert session.outcome.scores["coherence"] == 2
    assert "tie-breaker" in session.outcome.method


async def test_streams_deltas_and_records_usage(llm_server):
    debate_script(llm_server, agree_at=1)
    session, events = await run_with_events(make_session("debate", llm_server))
    completed = [e.turn for e in events if isinstance(e, TurnCompleted)]
    assert [t.slot for t in completed] == [0, 1]
    assert all(t.usage.prompt_tokens > 0 and t.usage.completion_tokens > 0 for t in session.turns)
    assert session.usage.prompt_tokens == sum(t.usage.prompt_tokens for t in session.turns)
    assert all(r.stream for r in llm_server.requests)


async def test_unreadable_score_is_reasked_once_then_unscored(llm_server):
    llm_server.add_rule("NO ISSUE", match=CRITIC)
    llm_server.add_rule("I would rather not put a number on it.")
    session, _ = await run_with_events(make_session("debate", llm_server))
    scorer_turns = [t for t in session.turns if t.role == "scorer"]
    assert len(scorer_turns) == 2  # the first reply, then the re-ask with a format reminder
    assert "Score: N" in llm_server.requests[1].messages[-1]["content"]
    assert scorer_turns[-1].unscored and session.outcome.scores["coherence"] is None


async def test_each_criterion_gets_its_own_debate(llm_server):
    debate_script(llm_server, agree_at=1)
    session = make_session("debate", llm_server)
    session.criteria = [find_criterion("coherence"), find_criterion("consistency")]
    session, _ = await run_with_events(session)
    assert llm_server.calls == 4
    assert set(session.outcome.scores) == {"coherence", "consistency"}
    assert {t.criterion for t in session.turns} == {"coherence", "consistency"}


async def test_an_unscored_last_scorer_turn_leaves_the_criterion_unscored(llm_server):
    """The Critic disputed the earlier score: it is told, with its iteration, never taken as the result."""
    llm_server.add_rule("The score ignores the repeated sentence; it is too high.", match=CRITIC)
    llm_server.add_rule("Reasoning about coherence.\nScore: 4", times=1)
    llm_server.add_rule("I would rather not put a number on it.")
    session, _ = await run_with_events(make_session("debate", llm_server, rounds=1))
    scorer_turns = [t for t in session.turns if t.role == "scorer"]
    assert [t.score for t in scorer_turns] == [4, None, None] and scorer_turns[-1].unscored
    assert session.outcome.scores["coherence"] is None
    assert "no agreement after 1 iteration;" in session.outcome.method
    assert "last readable score, 4 at iteration 0" in session.outcome.method


async def test_the_report_counts_agree_in_number(llm_server):
    from debate_tui.report.markdown import render

    debate_script(llm_server, agree_at=1)
    session, _ = await run_with_events(make_session("debate", llm_server, rounds=1))
    session.task.text = "Short."
    session.usage.calls = 1
    report = render(session)
    assert "NO ISSUE after 1 iteration" in report and "1 iterations" not in report
    assert "- **Text:** 1 word," in report and "1 call," in report
