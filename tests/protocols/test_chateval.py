"""ChatEval against the fake server through the real litellm path, and on the demo model through the CLI."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from debate_tui.catalog import find_criterion, find_persona
from debate_tui.cli import main
from debate_tui.domain import Outcome
from debate_tui.engine.events import Notice
from debate_tui.factory import runner_for
from debate_tui.llm.litellm_client import load_litellm
from debate_tui.llm.router import ModelRouter
from debate_tui.protocols import chateval
from debate_tui.protocols.common import ModelChoice
from debate_tui.protocols.pairs import calibrate, majority, preference
from debate_tui.report.markdown import render
from tests.helpers import STORY
from tests.helpers.scripts import chateval_script, speaking
from tests.helpers.sessions import make_session, run_with_events

OTHER = "Swimming takes practice: float first, then kick, then breathe. A coach helps."
REFEREES = ("General Public", "Critic", "News Author")


def prompt(record) -> str:
    return "\n".join(m["content"] for m in record.messages)


def requests_of(server, name: str) -> list[str]:
    return [prompt(r) for r in server.requests if speaking(name) in prompt(r)]


@pytest.mark.parametrize("strategy, per_turn_extra", [
    ("one-by-one", 0), ("simultaneous-talk", 0), ("simultaneous-talk-with-summarizer", 1),
])
@pytest.mark.parametrize("agents, turns", [(2, 1), (3, 2), (5, 2)])
async def test_call_counts_per_strategy(llm_server, strategy, per_turn_extra, agents, turns):
    session, _ = await run_with_events(make_session("chateval", llm_server, agents=agents, turns=turns,
                                                    strategy=strategy))
    assert session.status == "completed"
    expected = agents * turns + per_turn_extra * turns
    assert llm_server.calls == expected == session.usage.calls
    roles = [t.role for t in session.turns]
    assert roles.count("referee") == agents * turns and roles.count("summarizer") == per_turn_extra * turns
    assert sorted(t.slot for t in session.turns) == list(range(expected))


async def test_several_criteria_and_the_swap_multiply_the_calls(llm_server):
    llm_server.default_reply = "Scores: 3 2"
    session, _ = await run_with_events(make_session("chateval", llm_server, text_b=OTHER,
                                                    criteria=("coherence", "fluency"), agents=2, turns=2, swap=True))
    assert llm_server.calls == 2 * 2 * 2 * 2 == session.usage.calls
    assert {t.criterion for t in session.turns} == {"coherence", "fluency"}
    assert sorted({t.round for t in session.turns}) == [1, 2, 3, 4]  # the swapped pass numbers its turns on


async def test_final_score_is_the_mean_of_final_turn_scores(llm_server):
    chateval_script(llm_server, {"General Public": ["Score: 5", "Score: 4"], "Critic": ["Score: 1", "Score: 2"],
                        "News Author": ["Score: 3"]})
    session, _ = await run_with_events(make_session("chateval", llm_server, turns=2))
    assert session.outcome.scores == {"coherence": 3.0}
    assert session.outcome.per_agent == {"General Public": {"coherence": 4}, "Critic": {"coherence": 2},
                                         "News Author": {"coherence": 3}}
    assert session.outcome.notes == ["coherence: mean of the referees' final-turn scores"]


async def test_unscored_referee_is_left_out_of_the_mean(llm_server):
    llm_server.add_rule("Still thinking about it.", match="had no score I could read")
    chateval_script(llm_server, {"General Public": ["Score: 4"], "Critic": ["Score: 2"],
                                 "News Author": ["It depends."]})
    session, _ = await run_with_events(make_session("chateval", llm_server, turns=1))
    assert llm_server.calls == 3 + 1  # the unscored referee was re-asked once
    assert session.outcome.scores == {"coherence": 3.0}
    assert session.outcome.per_agent["News Author"] == {"coherence": None}
    assert "1 unscored" in " ".join(session.outcome.notes)


@pytest.mark.parametrize("replies, verdict, votes", [
    (["Scores: 4 3", "Scores: 5 2", "Scores: 2 4"], "1", {"General Public": "1", "Critic": "1", "News Author": "2"}),
    (["Scores: 4 3", "Scores: 3 3", "Scores: 2 4"], "0", {"General Public": "1", "Critic": "0", "News Author": "2"}),
    (["Scores: 1 5", "Scores: 2 4", "Scores: 3 3"], "2", {"General Public": "2", "Critic": "2", "News Author": "0"}),
])
async def test_pairwise_verdict_is_a_majority_vote_of_preferences(llm_server, replies, verdict, votes):
    chateval_script(llm_server, dict(zip(REFEREES, ([r] for r in replies), strict=True)))
    session, _ = await run_with_events(make_session("chateval", llm_server, text_b=OTHER, turns=1))
    outcome = session.outcome
    assert outcome.verdict == verdict and outcome.agent_verdicts == votes
    firsts = [float(r.split()[1]) for r in replies]
    assert outcome.scores["coherence_1"] == pytest.approx(sum(firsts) / 3)
    assert set(outcome.per_agent["Critic"]) == {"coherence_1", "coherence_2"}
    report = render(session)
    assert f"**Verdict:** {verdict}" in report and "| Critic | " in report and "| coherence_1 | 1-5 |" in report


def test_majority_rules():
    assert majority(["1", "1", "2"]) == "1"
    assert majority(["1", "2"]) == "0"  # split: a tie
    assert majority(["1", "2", "0"]) == "0"
    assert majority(["2", None, None]) == "2"  # unreadable answers do not vote
    assert majority([None, None]) is None  # nothing readable is no verdict, not a tie
    assert preference(4, 4) == "0" and preference(None, 3) is None


async def test_swap_detects_a_position_biased_panel(llm_server):
    llm_server.default_reply = "Text 1 reads better.\nScores: 4 2"  # whatever comes first wins
    session = make_session("chateval", llm_server, text_b=OTHER, agents=3, turns=1, swap=True)
    session, _ = await run_with_events(session)
    swap = session.state["swap"]
    assert swap["verdict"] == "1" and swap["swapped_verdict_original_numbering"] == "2"
    assert swap["consistent"] is False
    assert session.outcome.verdict == "0"  # 4+2 vs 2+4 over both positions: a tie
    assert session.outcome.scores == {"coherence_1": 3.0, "coherence_2": 3.0}
    assert any("flipped" in note for note in session.outcome.notes)
    assert llm_server.calls == 2 * 3


async def test_swap_keeps_a_consistent_panel_verdict(llm_server):
    def by_content(request) -> str:
        first = prompt_text(request).split("[Text 1]\n", 1)[1]
        return "Scores: 4 2" if first.startswith(STORY) else "Scores: 2 4"

    llm_server.add_rule(by_content)
    session, _ = await run_with_events(make_session("chateval", llm_server, text_b=OTHER, agents=2, turns=1, swap=True))
    assert session.state["swap"]["consistent"] is True
    assert session.state["swap"]["swapped_verdict_original_numbering"] == "1"
    assert session.outcome.verdict == "1"
    swapped_requests = [prompt(r) for r in llm_server.requests[2:]]
    assert all(p.split("[Text 1]\n", 1)[1].startswith(OTHER) for p in swapped_requests)


def prompt_text(request: dict) -> str:
    return "\n".join(m["content"] for m in request["messages"])


def test_calibrate_maps_the_swapped_run_back():
    original = Outcome(per_agent={"A": {"c_1": 5, "c_2": 3}}, verdict="1")
    twin = Outcome(per_agent={"A": {"c_1": 2, "c_2": 4}}, verdict="2")  # prefers the same text, now second
    state: dict = {}
    combined = calibrate(original, twin, [find_criterion("coherence").model_copy(update={"name": "c"})], state)
    assert state["swap"]["consistent"] is True and state["swap"]["swapped_verdict_original_numbering"] == "1"
    assert combined.per_agent == {"A": {"c_1": 4.5, "c_2": 2.5}} and combined.verdict == "1"


@pytest.mark.serial
async def test_simultaneous_talk_runs_a_round_in_parallel(llm_server):
    load_litellm()
    llm_server.add_rule("Score: 3")
    await run_with_events(make_session("chateval", llm_server, agents=2, turns=1,
                                       strategy="simultaneous-talk"))  # warm the client
    llm_server.reset()
    llm_server.latency = 0.3
    llm_server.add_rule("Score: 3")
    session = make_session("chateval", llm_server, agents=3, turns=1, strategy="simultaneous-talk")
    runner = runner_for(session, ModelRouter())
    started = time.perf_counter()
    await runner.run()
    elapsed = time.perf_counter() - started
    print(f"3 referees, one simultaneous turn, 300 ms latency each: {elapsed * 1000:.0f} ms")
    assert session.status == "completed" and llm_server.calls == 3
    assert elapsed < 0.6
    arrivals = [r.at for r in llm_server.requests]
    assert max(arrivals) - min(arrivals) < 0.2
    assert [t.agent for t in sorted(session.turns, key=lambda t: t.slot)] == list(REFEREES)


async def test_one_by_one_speakers_hear_the_earlier_ones(llm_server):
    chateval_script(llm_server, {name: [f"{name} says MARK-{i}.\nScore: 3"] for i, name in enumerate(REFEREES)})
    await run_with_events(make_session("chateval", llm_server, turns=2, strategy="one-by-one"))
    critic_first, critic_second = requests_of(llm_server, "Critic")
    assert "MARK-0" in critic_first and "MARK-2" not in critic_first
    assert "MARK-2" in critic_second  # the last speaker of turn 1, heard in turn 2
    general_public_second = requests_of(llm_server, "General Public")[1]
    assert "MARK-1" in general_public_second and "MARK-2" in general_public_second


async def test_simultaneous_talk_hides_the_current_round(llm_server):
    chateval_script(llm_server, {name: [f"{name} says MARK-{i}.\nScore: 3"] for i, name in enumerate(REFEREES)})
    await run_with_events(make_session("chateval", llm_server, turns=2, strategy="simultaneous-talk"))
    for name in REFEREES:
        first, second = requests_of(llm_server, name)
        assert "MARK-" not in first
        assert all(f"MARK-{i}" in second for i in range(3))


async def test_summarizer_replaces_the_raw_talk(llm_server):
    llm_server.add_rule("SUMMARY-OF-THE-TURN: they roughly agree.", match="Summarize this turn")
    chateval_script(llm_server, {name: [f"{name} says MARK-{i}.\nScore: 3"] for i, name in enumerate(REFEREES)})
    session, _ = await run_with_events(make_session("chateval", llm_server, turns=2,
                                                    strategy="simultaneous-talk-with-summarizer"))
    summarizer_requests = [prompt(r) for r in llm_server.requests if "Summarize this turn" in prompt(r)]
    assert len(summarizer_requests) == 2
    assert all(f"MARK-{i}" in summarizer_requests[0] for i in range(3))
    for name in REFEREES:
        second = requests_of(llm_server, name)[1]
        assert "SUMMARY-OF-THE-TURN" in second and "MARK-" not in second
    assert session.agent("Summarizer").role == "summarizer"


async def test_one_persona_for_all_referees_is_allowed_with_a_warning(llm_server):
    session = make_session("chateval", llm_server, turns=1, personas=[find_persona("critic")])
    assert [a.name for a in session.agents] == ["Critic 1", "Critic 2", "Critic 3"]
    session, events = await run_with_events(session)
    assert session.status == "completed"
    assert any(isinstance(e, Notice) and "share one persona" in e.message for e in events)
    _, events = await run_with_events(make_session("chateval", llm_server, turns=1))
    assert not any(isinstance(e, Notice) and "share one persona" in e.message for e in events)


def test_panel_is_filled_from_the_personas_in_order_and_cycled():
    models = ModelChoice(default="m", per_agent={"news-author": "other"})
    names = [a.name for a in chateval.build_agents(chateval.Options(agents=5), models)]
    assert names == ["General Public", "Critic", "News Author", "Psychologist", "Scientist"]
    two = [find_persona("critic"), find_persona("scientist")]
    specs = chateval.build_agents(chateval.Options(agents=3, strategy="simultaneous-talk-with-summarizer"), models, two)
    assert [a.name for a in specs] == ["Critic 1", "Scientist", "Critic 2", "Summarizer"]
    default = chateval.build_agents(chateval.Options(), models)
    assert {a.name: a.model for a in default}["News Author"] == "other"


def cli(capsys, *args: str) -> tuple[int, dict | None, str]:
    rc = main(["run", *args])
    out, err = capsys.readouterr()
    lines = [line for line in out.splitlines() if line.startswith("{")]
    return rc, json.loads(lines[-1]) if lines else None, err


def test_cli_demo_runs_a_panel(capsys, story_file):
    rc, summary, err = cli(capsys, "--protocol", "chateval", "--demo", "--text", str(story_file))
    assert rc == 0 and summary["status"] == "completed"
    assert summary["calls"] == 3 * 2
    assert 1 <= summary["scores"]["coherence"] <= 5
    session = json.loads(Path(summary["session_path"]).read_text())
    final = [t["score"] for t in session["turns"] if t["round"] == 2]
    assert len(set(final)) == 1  # the demo panel converges
    assert "(demo)" in err


def test_cli_demo_pairwise_with_summarizer_and_swap(capsys, story_file, tmp_path):
    other = tmp_path / "other.txt"
    other.write_text(OTHER)
    rc, summary, _ = cli(capsys, "--protocol", "chateval", "--demo", "--text", str(other), "--text-b", str(story_file),
                         "--agents", "2", "--turns", "1", "--strategy", "simultaneous-talk-with-summarizer", "--swap")
    assert rc == 0 and summary["calls"] == 2 * (2 * 1 + 1)
    assert summary["verdict"] == "1"  # the story repeats a sentence
    session = json.loads(Path(summary["session_path"]).read_text())
    assert session["state"]["swap"]["consistent"] is True
    assert "**Verdict:** 1" in Path(summary["report"]).read_text()


@pytest.mark.parametrize("args, message", [
    (["--agents", "6"], "--agents"),
    (["--strategy", "round-robin"], "--strategy"),
    (["--agent-model", "Nobody=gpt-4o"], "no agent named"),
])
def test_cli_rejects_bad_panels(capsys, story_file, args, message):
    rc, summary, err = cli(capsys, "--protocol", "chateval", "--demo", "--text", str(story_file), *args)
    assert rc == 2 and summary is None and message in err


def test_cli_same_persona_warns(capsys, story_file):
    rc, _, err = cli(capsys, "--protocol", "chateval", "--demo", "--text", str(story_file),
                     "--personas", "critic", "--turns", "1")
    assert rc == 0 and "share one persona" in err


async def test_the_summarizer_reads_only_the_turn_it_summarizes(llm_server):
    """Algorithm 3's SUM(BUF): earlier summaries are the referees' history, not the summarizer's input."""
    llm_server.add_rule("SUMMARY-OF-THE-TURN: they roughly agree.", match="Summarize this turn")
    chateval_script(llm_server, {name: [f"{name} says MARK-{i}.\nScore: 3"] for i, name in enumerate(REFEREES)})
    await run_with_events(make_session("chateval", llm_server, turns=2, strategy="simultaneous-talk-with-summarizer"))
    second = [prompt(r) for r in llm_server.requests if "Summarize this turn" in prompt(r)][1]
    assert "SUMMARY-OF-THE-TURN" not in second and all(f"MARK-{i}" in second for i in range(3))


@pytest.mark.parametrize("strategy", ["one-by-one", "simultaneous-talk", "simultaneous-talk-with-summarizer"])
async def test_a_long_discussion_is_condensed_to_the_history_budget(llm_server, strategy):
    from debate_tui.domain import HistorySettings
    from debate_tui.llm.tokens import prompt_tokens

    talk = "I read the story twice and weighed each sentence against the next one. " * 5
    llm_server.add_rule("Condensed: every referee gave 3 so far.", match="Condense this earlier part")
    llm_server.add_rule(f"{talk}", match="Summarize this turn")
    chateval_script(llm_server, {name: [f"{talk}\nScore: 3"] for name in REFEREES})
    session = make_session("chateval", llm_server, turns=4, strategy=strategy)
    panel = chateval.Panel(None, session.task, session.criteria[0])  # type: ignore[arg-type]
    frame = prompt_tokens("openai/fake-debater", panel.prompt(session.agent("Critic"), history=[]))
    budget = frame + 150  # room for one turn of talk or summary, so every strategy has to condense
    session.keep_history(HistorySettings(max_history_tokens=budget))
    session, events = await run_with_events(session)
    assert session.status == "completed"
    assert any(t.agent.startswith("Condenser for ") for t in session.turns)
    for request in llm_server.requests:
        if "Now it's your time to talk" in prompt(request):
            assert prompt_tokens("openai/fake-debater", request.messages) <= budget


async def test_a_digested_history_costs_no_call_and_keeps_the_latest_talk_verbatim(llm_server):
    from debate_tui.domain import HistorySettings
    from debate_tui.engine.digest import DIGEST_HEADER
    from debate_tui.llm.tokens import prompt_tokens

    talk = "I read the story twice and weighed each sentence against the next one. " * 5
    chateval_script(llm_server, {name: [f"{name} opens with MARK-{i}. {talk}\nScore: {i + 2}"]
                        for i, name in enumerate(REFEREES)})
    session = make_session("chateval", llm_server, turns=4, strategy="one-by-one")
    panel = chateval.Panel(None, session.task, session.criteria[0])  # type: ignore[arg-type]
    frame = prompt_tokens("openai/fake-debater", panel.prompt(session.agent("Critic"), history=[]))
    budget = frame + 300  # about two replies of talk
    session.keep_history(HistorySettings(max_history_tokens=budget, condense="digest"))
    session, events = await run_with_events(session)
    assert session.status == "completed"
    assert llm_server.calls == 3 * 4 and not any(t.role == "summarizer" for t in session.turns)
    assert any(isinstance(e, Notice) and "digested (no call" in e.message for e in events)
    talks = [r for r in llm_server.requests if "Now it's your time to talk" in prompt(r)]
    assert all(prompt_tokens("openai/fake-debater", r.messages) <= budget for r in talks)
    last = prompt(talks[-1]).split(chateval.HISTORY_START)[1].split(chateval.HISTORY_END)[0]
    digest, *verbatim = last.strip().split("\n\n")
    assert digest.startswith(DIGEST_HEADER)
    assert "[General Public]: General Public opens with MARK-0. ... Score: 2" in digest.splitlines()
    assert "[Critic]: Critic opens with MARK-1. ... Score: 3" in digest.splitlines()
    assert verbatim[-1] == f"[Critic]: Critic opens with MARK-1. {talk}\nScore: 3"  # News Author speaks last
    assert len(last.split()) < len(talk.split()) * 3  # the history of eleven replies is under three of them


async def test_a_digest_that_does_not_fit_falls_back_to_a_summary(llm_server):
    from debate_tui.domain import HistorySettings
    from debate_tui.engine.digest import DIGEST_HEADER
    from debate_tui.llm.tokens import prompt_tokens

    talk = "I read the story twice and weighed each sentence against the next one. " * 5
    llm_server.add_rule("Condensed: every referee gave 3 so far.", match="Condense this earlier part")
    chateval_script(llm_server, {name: [f"{talk}\nScore: 3"] for name in REFEREES})
    session = make_session("chateval", llm_server, turns=4, strategy="one-by-one")
    panel = chateval.Panel(None, session.task, session.criteria[0])  # type: ignore[arg-type]
    frame = prompt_tokens("openai/fake-debater", panel.prompt(session.agent("Critic"), history=[]))
    session.keep_history(HistorySettings(max_history_tokens=frame + 150, condense="digest"))
    session, _ = await run_with_events(session)
    assert session.status == "completed"
    condensed = [prompt(r) for r in llm_server.requests if "Condense this earlier part" in prompt(r)]
    assert condensed and DIGEST_HEADER in condensed[0]  # the digest was tried first, then summarized
    assert llm_server.calls == 3 * 4 + len(condensed)


def test_cli_condense_digest_is_kept_in_the_session(capsys, story_file):
    rc, summary, err = cli(capsys, "--protocol", "chateval", "--demo", "--text", str(story_file), "--turns", "3",
                           "--max-history-tokens", "600", "--condense", "digest")
    session = json.loads(Path(summary["session_path"]).read_text())
    assert rc == 0 and session["state"] == {"max_history_tokens": 600, "condense": "digest"}
    assert "digested (no call" in err and summary["calls"] == 3 * 3  # no condenser call
