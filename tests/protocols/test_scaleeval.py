"""ScaleEval against the fake server through litellm: call counts, stopping on consensus,
the human at the end, the drawn order mapped back to the original numbering, criteria
variants, and the demo model through the CLI."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from debate_tui.catalog import find_criterion
from debate_tui.cli import main
from debate_tui.domain import HumanAction
from debate_tui.protocols.criteria_variants import VARIANTS, levels, rubric, vary
from tests.helpers.scripts import (
    CONTRARIAN,
    CONTRARIAN_SPEAKER,
    NAMES,
    QUESTION,
    prefer_marker,
    scaleeval_script,
    seed_where,
)
from tests.helpers.sessions import make_session, run

INITIAL = "Compare the two submissions"


async def test_unanimous_initial_verdicts_cost_three_calls(llm_server):
    scaleeval_script(llm_server)
    session = await run(make_session("scaleeval", llm_server, seed=seed_where(False)))
    assert session.status == "completed"
    assert llm_server.calls == 3 == session.usage.calls
    assert session.outcome.verdict == "2"
    assert session.outcome.method == "consensus in the initial round"
    assert sorted(t.slot for t in session.turns) == [0, 1, 2]
    assert all(INITIAL in r.messages[-1]["content"] for r in llm_server.requests)


@pytest.mark.parametrize("stubborn,calls,consensus_round", [(0, 6, 1), (1, 9, 2)])
async def test_each_discussion_round_costs_three_more(llm_server, stubborn, calls, consensus_round):
    scaleeval_script(llm_server, stubborn_rounds=stubborn)
    session = await run(make_session("scaleeval", llm_server, per_agent=CONTRARIAN_SPEAKER))
    assert llm_server.calls == calls == session.usage.calls
    assert session.outcome.method == f"consensus in discussion round {consensus_round}"
    assert session.outcome.verdict == "2"
    assert max(t.round for t in session.turns) == consensus_round


async def test_discussion_shows_every_evaluation_and_reminds_who_speaks(llm_server):
    scaleeval_script(llm_server, stubborn_rounds=0)
    session = await run(make_session("scaleeval", llm_server, per_agent=CONTRARIAN_SPEAKER))
    speakers = session.state["order"]["speakers"]
    discussion = llm_server.requests[3:]
    assert [r.messages[-1]["content"].split("remember you are ")[1].split(".")[0] for r in discussion] == speakers
    every = [r.messages for r in llm_server.requests]
    data = every[0][-1]["content"].split("[Criteria]")[0]
    assert all(m[0] == every[0][0] and m[-1]["content"].startswith(data) for m in every), \
        "one system message and the same data first in every prompt: a provider's prompt cache serves them"
    first = discussion[0].messages[-1]["content"]
    assert all(f"[{name}'s Initial Evaluation]" in first for name in speakers)
    last = discussion[-1].messages[-1]["content"]
    assert f"[{speakers[0]}'s Discussion -- Round 1]" in last and f"[{speakers[1]}'s Discussion -- Round 1]" in last


@pytest.mark.parametrize("swapped", [True, False])
async def test_verdicts_are_reported_in_the_original_numbering(llm_server, swapped):
    scaleeval_script(llm_server)
    session = await run(make_session("scaleeval", llm_server, seed=seed_where(swapped)))
    assert session.state["order"]["swapped"] is swapped
    shown = "1" if swapped else "2"
    assert [t.verdict for t in session.turns] == [shown] * 3, "turns keep the numbering the speakers saw"
    assert session.outcome.verdict == "2", "the marked answer is the second text given"
    assert session.outcome.agent_verdicts == {name: "2" for name in NAMES}
    assert ("swapped, the speakers saw the second text as Submission 1" in session.outcome.notes[0]) is swapped
    assert sorted(session.state["order"]["speakers"]) == NAMES


async def test_order_is_drawn_from_the_seed_and_kept(llm_server):
    scaleeval_script(llm_server)
    first = await run(make_session("scaleeval", llm_server, seed=7))
    llm_server.reset()
    scaleeval_script(llm_server)
    again = await run(make_session("scaleeval", llm_server, seed=7))
    assert first.state["order"] == again.state["order"]
    assert [t.agent for t in first.turns] == first.state["order"]["speakers"]


async def test_no_consensus_waits_for_a_person_then_resumes_without_new_calls(llm_server):
    scaleeval_script(llm_server)
    session = await run(make_session("scaleeval", llm_server, per_agent=CONTRARIAN_SPEAKER, rounds=2))
    assert session.status == "needs_human"
    assert llm_server.calls == 3 + 3 * 2
    assert "did not agree after 2 discussion rounds" in session.pending_question
    session.actions.append(HumanAction(kind="decide", value="1", after_turn=len(session.turns)))
    resumed = await run(session)
    assert resumed.status == "completed"
    assert llm_server.calls == 9, "the recorded turns are replayed, not asked again"
    assert resumed.outcome.verdict == "1"
    assert resumed.outcome.method == "decided by a person after no consensus in 2 discussion rounds"
    assert resumed.outcome.agent_verdicts == {"Speaker 1": "2", "Speaker 2": "2", "Speaker 3": "1"}


async def test_a_mistyped_decision_is_asked_again(llm_server):
    scaleeval_script(llm_server)
    session = await run(make_session("scaleeval", llm_server, per_agent=CONTRARIAN_SPEAKER, rounds=0))
    session.actions.append(HumanAction(kind="decide", value="3", after_turn=3))
    again = await run(session)
    assert again.status == "needs_human"
    session.actions.append(HumanAction(kind="decide", value="0", after_turn=3))
    assert (await run(session)).outcome.verdict == "0"


@pytest.mark.parametrize("policy,verdict", [("majority", "2"), ("tie", "0"), ("undecided", None)])
async def test_other_ways_to_settle_without_consensus(llm_server, policy, verdict):
    scaleeval_script(llm_server)
    session = await run(make_session("scaleeval", llm_server, per_agent=CONTRARIAN_SPEAKER, rounds=1,
                                     on_no_consensus=policy))
    assert session.status == "completed"
    assert llm_server.calls == 6
    assert session.outcome.verdict == verdict


async def test_an_unreadable_verdict_is_reasked_once_and_never_counts(llm_server):
    llm_server.add_rule("Both have merits; hard to say.", model=CONTRARIAN)
    llm_server.add_rule(prefer_marker)
    session = await run(make_session("scaleeval", llm_server, per_agent=CONTRARIAN_SPEAKER, rounds=0,
                                     on_no_consensus="majority"))
    assert llm_server.calls == 4
    assert [t.unscored for t in session.turns if t.agent == "Speaker 3"] == [False, True]
    assert session.outcome.agent_verdicts["Speaker 3"] is None
    assert session.outcome.verdict == "2", "the two readable verdicts are a majority"


@pytest.mark.parametrize("seed", range(4))
async def test_a_reasked_speaker_replays_slot_by_slot_on_resume(llm_server, seed):
    llm_server.add_rule("Both have merits; hard to say.", model=CONTRARIAN)
    llm_server.add_rule(prefer_marker)
    session = await run(make_session("scaleeval", llm_server, seed=seed, per_agent=CONTRARIAN_SPEAKER, rounds=0))
    assert session.status == "needs_human"
    recorded = [(t.slot, t.agent, t.content) for t in session.turns]
    session.actions.append(HumanAction(kind="decide", value="2", after_turn=len(session.turns)))
    resumed = await run(session)
    assert resumed.status == "completed" and llm_server.calls == 4
    assert [(t.slot, t.agent, t.content) for t in resumed.turns] == recorded
    assert resumed.outcome.agent_verdicts == {"Speaker 1": "2", "Speaker 2": "2", "Speaker 3": None}


async def test_criteria_variant_is_what_the_speakers_read(llm_server):
    scaleeval_script(llm_server)
    session = await run(make_session("scaleeval", llm_server, criteria_variant="flipped"))
    prompt = llm_server.requests[0].messages[-1]["content"]
    assert "toN lufpleH - ehT esnopser si yletelpmoc detalernu," in prompt
    assert session.state["criteria_variant"]["variant"] == "flipped"
    assert session.state["criteria_variant"]["rubric"] in prompt


def test_variants_keep_the_levels_and_are_deterministic():
    helpfulness = find_criterion("helpfulness")
    for variant in VARIANTS:
        varied = vary(helpfulness, variant, seed=3)
        assert [level for level, _ in levels(varied)] == ["1", "2", "3", "4", "5"]
        assert vary(helpfulness, variant, seed=3) == varied
    assert vary(helpfulness, "general", 3) is helpfulness
    assert vary(helpfulness, "gibberish", 3) != vary(helpfulness, "gibberish", 4)
    assert vary(helpfulness, "masked", 3) != vary(helpfulness, "masked", 4)
    assert Counter(rubric(vary(helpfulness, "shuffled", 3)).replace('"', "").split()) == \
        Counter(rubric(helpfulness).replace('"', "").split())
    shortened = dict(levels(vary(helpfulness, "shortened", 3)))
    assert shortened["1"].startswith("The response is completely unrelated")
    assert shortened["5"].startswith("The response is exceptionally thorough")
    masked = dict(levels(vary(helpfulness, "masked", 3)))["1"]
    assert "_" in masked and len(masked) == len(dict(levels(helpfulness))["1"])


def test_a_rubric_without_numbers_is_numbered_from_the_scale():
    criterion = find_criterion("helpfulness").model_copy(update={"steps": ["bad", "good"], "low": 0, "high": 1})
    assert levels(criterion) == [("0", "bad"), ("1", "good")]


def _cli(capsys, *args: str) -> tuple[int, dict]:
    code = main(list(args))
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1]) if out else {}


@pytest.fixture
def pair(tmp_path: Path) -> list[str]:
    a, b, q = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "q.txt"
    a.write_text("You solve it. You solve it. Use the formula.")
    b.write_text("Use the quadratic formula, or factor the polynomial when the roots are whole numbers.")
    q.write_text(QUESTION)
    return ["--text", str(a), "--text-b", str(b), "--source", str(q)]


def test_cli_demo_converges_after_one_discussion_round(capsys, pair, tmp_path):
    report = tmp_path / "r.md"
    code, result = _cli(capsys, "run", "--demo", "--protocol", "scaleeval", *pair, "--seed", "5",
                        "--report", str(report))
    assert code == 0 and result["status"] == "completed"
    assert result["calls"] == 6 and result["verdict"] == "2"
    markdown = report.read_text()
    assert "consensus in discussion round 1" in markdown and "submission order drawn from the seed" in markdown


def test_cli_needs_a_person_exit_5_then_resume_with_a_decision(capsys, pair):
    code, result = _cli(capsys, "run", "--demo", "--protocol", "scaleeval", *pair, "--rounds", "0")
    assert code == 5 and result["status"] == "needs_human" and result["calls"] == 3
    code, result = _cli(capsys, "resume", result["session"], "--decide", "2")
    assert code == 0 and result["status"] == "completed" and result["verdict"] == "2"
    assert result["calls"] == 3


@pytest.mark.parametrize("policy,verdict", [("majority", "2"), ("tie", "0"), ("undecided", None)])
def test_cli_on_no_consensus(capsys, pair, policy, verdict):
    code, result = _cli(capsys, "run", "--demo", "--protocol", "scaleeval", *pair, "--rounds", "0",
                        "--on-no-consensus", policy)
    assert code == 0 and result["verdict"] == verdict


def test_cli_agent_model_and_variant_are_stored(capsys, pair):
    code, result = _cli(capsys, "run", "--demo", "--protocol", "scaleeval", *pair, "--criteria-variant", "masked",
                        "--agent-model", "speaker-2=demo/offline", "--seed", "1")
    assert code == 0
    session = json.loads(Path(result["session_path"]).read_text())
    assert session["options"]["criteria_variant"] == "masked"
    assert "_" in session["state"]["criteria_variant"]["rubric"]


@pytest.mark.parametrize("args,message", [
    (["--text-b", None], "give the second with --text-b"),
    (["--criteria", "helpfulness,reasoning"], "one criterion per run"),
    (["--agent-model", "Speaker 9=openai/x"], "no agent named 'Speaker 9'"),
    (["--agent-model", "Speaker 1"], "expected NAME=MODEL"),
    (["--criteria-variant", "upside-down"], "invalid choice"),
])
def test_cli_refuses_bad_choices(capsys, pair, args, message):
    argv = ["run", "--demo", "--protocol", "scaleeval", *pair]
    if args[1] is None:  # drop an argument instead of adding one
        at = argv.index(args[0])
        del argv[at:at + 2]
    else:
        argv += args
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse refuses an invalid choice itself
        code = exc.code
    assert code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("swapped", [False, True])
async def test_the_report_of_a_run_waiting_for_a_person_shows_who_said_what(llm_server, swapped):
    from debate_tui.report.markdown import render

    scaleeval_script(llm_server)
    session = await run(make_session("scaleeval", llm_server, seed=seed_where(swapped), per_agent=CONTRARIAN_SPEAKER,
                                     rounds=1))
    assert session.status == "needs_human"
    report = render(session)
    assert "No result yet: the run waits for a person's decision." in report
    rows = [line for line in report.splitlines() if line.startswith("| 0 |") or line.startswith("| 1 |")]
    header = next(line for line in report.splitlines() if line.startswith("| Round |"))
    assert header == "| Round | Speaker 1 | Speaker 2 | Speaker 3 |"
    # in the original numbering whatever the drawn order: the marked text (text 2) is preferred by
    # Speakers 1 and 2, the contrarian Speaker 3 prefers text 1, in both rounds
    assert rows == ["| 0 | 2 | 2 | 1 |", "| 1 | 2 | 2 | 1 |"]
    assert "**Undecided:** The speakers did not agree after 1 discussion round on helpfulness" in report
    lines = report.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#"):
            assert lines[i + 1] == "" and (i == 0 or lines[i - 1] == ""), f"heading {line!r} without blank lines"
