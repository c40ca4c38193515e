"""MATEval against the fake server through litellm: call structure per strategy, the
summarizer's report read into located errors and scores, ROC stories end to end,
and the demo model through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debate_tui.catalog import find_criterion
from debate_tui.cli import main
from debate_tui.domain import AgentSpec, ErrorSpan, Task
from debate_tui.factory import runner_for
from debate_tui.llm import demo
from debate_tui.llm.base import ChatRequest, Completion
from debate_tui.llm.demo import DemoClient
from debate_tui.meta.datasets import DataRoot, data_dir
from debate_tui.parsing import parse_error_report
from debate_tui.protocols import mateval, mateval_demo
from tests.helpers import FIXTURES, STORY
from tests.helpers.scripts import FEEDBACK, REPEATED, REPORT, SUMMARIZER, mateval_script
from tests.helpers.sessions import make_session, run

ROC_REPORTS = FIXTURES / "mateval_roc_reports"
ROC = "mateval/ROC/ROC_test_change_final.json"


def expected_calls(strategy: str, evaluators: int, feedback: bool, subquestions: int = 5) -> int:
    """The documented call structure (module docstring of debate_tui.protocols.mateval)."""
    f = int(feedback)
    per_round = {"SR+CoT": 2 * evaluators + f, "CoT": evaluators + f, "SR": 2 * evaluators + f,
                 "O_b_O": evaluators + f, "SA": 1 + f}[strategy]
    rounds = 1 if strategy == "SA" else subquestions
    return rounds * per_round + 1


@pytest.mark.parametrize("strategy", ["SR+CoT", "CoT", "SR", "O_b_O", "SA"])
@pytest.mark.parametrize("evaluators,feedback", [(2, True), (3, True), (2, False)])
async def test_call_structure_of_every_strategy(llm_server, strategy, evaluators, feedback):
    mateval_script(llm_server)
    session = await run(make_session("mateval", llm_server, strategy=strategy, evaluators=evaluators,
                                     feedback=feedback))
    assert session.status == "completed", session.error
    assert llm_server.calls == expected_calls(strategy, evaluators, feedback) == session.usage.calls
    rounds = 1 if strategy == "SA" else 5
    assert [t.role for t in session.turns].count("feedback") == (rounds if feedback else 0)
    assert session.turns[-1].role == "summarizer"


async def test_default_is_sr_cot_with_feedback_26_calls_in_the_papers_order(llm_server):
    mateval_script(llm_server)
    session = await run(make_session("mateval", llm_server))
    assert llm_server.calls == 5 * (2 * 2 + 1) + 1 == 26
    first_round = [(t.agent, t.round, t.criterion) for t in session.turns[:5]]
    assert first_round == [("Evaluator 1", 1, "REP"), ("Evaluator 2", 1, "REP"), ("Evaluator 1", 1, "REP"),
                           ("Evaluator 2", 1, "REP"), ("Feedback", 1, "REP")]
    assert [t.criterion for t in session.turns[:-1:5]] == ["REP", "LINC", "DCONT", "ILC", "FER"]


async def test_reflection_sees_the_others_and_feedback_reaches_everyone_next_round(llm_server):
    llm_server.add_rule(REPORT, match=SUMMARIZER)
    llm_server.add_rule("Feedback: nobody checked the second sentence.", match=FEEDBACK)
    llm_server.add_rule("Evaluator two's view: no repetition.", match="You are Evaluator 2")
    llm_server.add_rule("Evaluator one's view: a repetition.")
    await run(make_session("mateval", llm_server, strategy="SR+CoT", evaluators=2))
    requests = [r.messages for r in llm_server.requests]
    reflection_1 = requests[2]
    assert reflection_1[-2] == {"role": "assistant", "content": "Evaluator one's view: a repetition."}
    reflection = reflection_1[-1]["content"]
    assert "Evaluator two's view" in reflection and "Reflect on your statement" in reflection
    second_round_statement = requests[5][-1]["content"]
    assert "Round 2 of 5" in second_round_statement and "nobody checked the second sentence" in second_round_statement
    assert "Statements already made in this round" in requests[6][-1]["content"]
    # the feedback once, under its own heading; the history before the round's question, so each
    # evaluator's prompts share their start with the previous round's (prompt caching)
    assert second_round_statement.count("nobody checked the second sentence") == 1
    first_round_statement = requests[0][-1]["content"]
    assert second_round_statement.index("The discussion so far") < second_round_statement.index("Round 2 of 5")
    assert second_round_statement.startswith(first_round_statement.split("Round 1 of 5")[0])


async def test_report_is_read_into_located_errors_and_paper_scores(llm_server):
    mateval_script(llm_server)
    session = await run(make_session("mateval", llm_server))
    outcome = session.outcome
    assert outcome.scores == {"REP": -1, "LINC": 0, "DCONT": 0, "ILC": -1, "FER": 0, "total": -2}
    rep = [e for e in outcome.errors if e.type == "REP"]
    assert len(rep) == 1, "the same sentence reported twice counts once"
    second = STORY.index(REPEATED, STORY.index(REPEATED) + 1)
    assert (rep[0].start, rep[0].end) == (second, second + len(REPEATED)), "a repetition points at the repeat"
    assert "ILC: 1 error" in outcome.notes


async def test_unreadable_summary_is_reasked_once_then_unscored_not_zero(llm_server):
    mateval_script(llm_server, report="The text is fine overall, I would say.")
    session = await run(make_session("mateval", llm_server, strategy="SA", feedback=False))
    assert llm_server.calls == expected_calls("SA", 1, False) + 1
    assert "exactly in this form" in llm_server.requests[-1].messages[-1]["content"]
    assert session.turns[-1].unscored
    assert session.outcome.scores == {"REP": None, "LINC": None, "DCONT": None, "ILC": None, "FER": None,
                                      "total": None}


async def test_a_question_left_unanswered_is_unscored_and_the_total_too(llm_server):
    mateval_script(llm_server, report="Q: Does the text contain Repetition (REP) errors?\nA: No\n")
    session = await run(make_session("mateval", llm_server, strategy="SA", feedback=False))
    assert llm_server.calls == 2
    assert session.outcome.scores["REP"] == 0
    assert session.outcome.scores["LINC"] is None and session.outcome.scores["total"] is None


async def test_mateval_own_error_list_form_is_read_too(llm_server):
    native = f"Error location：{REPEATED}\nError type：Repetition\nReason：said twice.\nScore：-1"
    mateval_script(llm_server, report=native)
    session = await run(make_session("mateval", llm_server, strategy="SA", feedback=False))
    assert session.outcome.scores == {"REP": -1, "LINC": 0, "DCONT": 0, "ILC": 0, "FER": 0, "total": -1}


async def test_a_subset_of_types_is_discussed_and_scored(llm_server):
    mateval_script(llm_server)
    session = await run(make_session("mateval", llm_server, criteria="REP,ILC"))
    assert llm_server.calls == 2 * (2 * 2 + 1) + 1
    assert session.outcome.scores == {"REP": -1, "ILC": -1, "total": -2}
    assert "Answer only the questions about these types: REP, ILC" in llm_server.requests[-1].messages[-1]["content"]


def _spans(errors: list[ErrorSpan], text: str) -> set[tuple[str, int, int]]:
    """(type, start, end) of the located errors, the end before any closing punctuation: a quote
    that drops the sentence's final period still points at the same sentence."""
    return {(e.type, e.start, e.start + len(text[e.start:e.end].rstrip(" .!?,;:"))) for e in errors if e.located}


def _gold(item: dict) -> set[tuple[str, int, int]]:
    """The annotators' located errors: their own report, read by the same parser."""
    return _spans(parse_error_report(item["disturbance_data"], item["story"]), item["story"])


def _overlaps(error: tuple[str, int, int], spans: set[tuple[str, int, int]]) -> bool:
    kind, start, end = error
    return any(k == kind and s < end and start < e for k, s, e in spans)


async def test_roc_reports_end_to_end_precision_and_recall(llm_server, capsys):
    """Hand-written summarizer reports (tests/fixtures) through the protocol, spans against the annotations."""
    stories = json.loads(DataRoot(data_dir()).read_text(ROC))
    predicted_total = gold_total = exact = overlapping = unlocated = 0
    for path in sorted(ROC_REPORTS.glob("roc-*.txt")):
        item = stories[int(path.stem.split("-")[1])]
        llm_server.reset()
        mateval_script(llm_server, report=path.read_text(encoding="utf-8"))
        session = await run(make_session("mateval", llm_server, text=item["story"], strategy="SA", feedback=False))
        assert session.status == "completed"
        predicted = _spans(session.outcome.errors, item["story"])
        gold = _gold(item)
        unlocated += sum(not e.located for e in session.outcome.errors)
        predicted_total += len(predicted)
        gold_total += len(gold)
        exact += len(predicted & gold)
        overlapping += sum(_overlaps(p, gold) for p in predicted)
        assert session.outcome.scores["total"] == -sum(1 for e in session.outcome.errors if e.located)
    precision, recall = exact / predicted_total, exact / gold_total
    with capsys.disabled():
        print(f"\nMATEval ROC end to end ({len(list(ROC_REPORTS.glob('roc-*.txt')))} stories): {gold_total} annotated, "
              f"{predicted_total} located, {unlocated} unlocated; exact spans precision {precision:.3f} recall "
              f"{recall:.3f}; overlapping spans precision {overlapping / predicted_total:.3f}")
    # The reports' deliberate slips: one false positive, one paraphrase, one over-long quote.
    assert (gold_total, predicted_total, unlocated, exact, overlapping) == (19, 19, 1, 17, 18)


async def test_roc_story_through_the_full_discussion(llm_server):
    """Story 30's repeated sentence: quoted in lower case, reported twice, located at the repeat."""
    item = json.loads(DataRoot(data_dir()).read_text(ROC))[30]
    mateval_script(llm_server, report=(ROC_REPORTS / "roc-030.txt").read_text(encoding="utf-8"))
    session = await run(make_session("mateval", llm_server, text=item["story"]))
    assert llm_server.calls == 26
    assert _spans(session.outcome.errors, item["story"]) == _gold(item)
    assert session.outcome.scores == {"REP": -1, "LINC": 0, "DCONT": -1, "ILC": 0, "FER": -1, "total": -3}


def test_options_refuse_rounds_for_decomposed_strategies():
    with pytest.raises(ValueError, match="rounds apply to O_b_O and SR"):
        mateval.Options.model_validate({"strategy": "SR+CoT", "rounds": 3})
    assert mateval.Options.model_validate({"strategy": "SR", "rounds": 3}).rounds == 3


async def test_sr_with_rounds_discusses_the_whole_question(llm_server):
    mateval_script(llm_server)
    session = await run(make_session("mateval", llm_server, strategy="SR", rounds=2))
    assert llm_server.calls == 2 * (2 * 2 + 1) + 1
    assert all(t.criterion is None for t in session.turns)
    assert "Which errors of these types" in llm_server.requests[0].messages[-1]["content"]


def test_only_error_types_can_be_judged():
    with pytest.raises(ValueError, match="MATEval judges error types"):
        mateval.check_task(Task(text="x"), [find_criterion("coherence")])


async def test_the_demo_plays_mateval_s_summarizer_only_for_mateval_s_summarizer():
    """The demo plays the part MATEval's spec declares for an agent's role, handed with the request; a spec that
    speaks as given (a history condenser, whose role is summarizer too) is judged plainly."""
    requests: list[ChatRequest] = []

    class Recording(DemoClient):
        async def complete(self, request: ChatRequest, on_delta=None) -> Completion:
            requests.append(request)
            return await super().complete(request, on_delta)

    session = make_session("mateval", criteria="REP")
    runner = runner_for(session, Recording())
    await runner.run()
    played = {request.demo for request in requests}
    assert played == {mateval_demo.evaluator, mateval_demo.feedback, mateval_demo.summarizer}
    report = session.turns[-1]
    assert report.agent == "Summarizer" and report.content.startswith("(demo) Final evaluation report.")
    brief = f"[Text to evaluate]\n{STORY}\n[End of text]"
    condenser = AgentSpec(name="Condenser for Evaluator 1", role="summarizer", model="demo/offline")
    condensed = await runner_for(session, Recording()).turn(
        condenser, [{"role": "user", "content": f"{brief}\n\nSummarize the older rounds of this debate."}], round=9)
    assert requests[-1].demo is None and condensed.content.startswith("(demo) Assessment:")
    assert demo.Reading.of(requests[-1].messages).text == STORY


def _cli(capsys, *args: str) -> tuple[int, dict]:
    code = main(["run", "--demo", *args])
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1]) if out else {}


def test_cli_demo_run_locates_the_repeated_sentence(capsys, story_file, tmp_path):
    report = tmp_path / "report.md"
    code, result = _cli(capsys, "--protocol", "mateval", "--text", str(story_file), "--report", str(report))
    assert code == 0 and result["status"] == "completed"
    assert result["calls"] == 26
    assert result["scores"] == {"REP": -1, "LINC": 0, "DCONT": 0, "ILC": 0, "FER": 0, "total": -1}
    markdown = report.read_text()
    assert "## Errors" in markdown and "## Error report" in markdown
    assert f'Repetition (REP), line 1, column 65, sentence 3: "{REPEATED}"' in markdown
    session = json.loads(Path(result["session_path"]).read_text())
    assert all(t["content"].startswith("(demo)") for t in session["turns"])


def test_cli_strategy_and_no_feedback(capsys, story_file):
    code, result = _cli(capsys, "--protocol", "mateval", "--text", str(story_file), "--strategy", "CoT",
                        "--evaluators", "3", "--no-feedback")
    assert code == 0 and result["calls"] == expected_calls("CoT", 3, False)


@pytest.mark.parametrize("args,message", [
    (["--strategy", "SR+CoT", "--rounds", "2"], "--rounds"),
    (["--strategy", "nonsense"], "--strategy"),
    (["--evaluators", "1"], "--evaluators"),
    (["--criteria", "coherence"], "MATEval judges error types"),
    (["--agent-model", "Critic=openai/x"], "no agent named 'Critic'"),
])
def test_cli_refuses_bad_choices(capsys, story_file, args, message):
    code = main(["run", "--demo", "--protocol", "mateval", "--text", str(story_file), *args])
    assert code == 2
    assert message in capsys.readouterr().err


PLACEHOLDER_COPY = """Q: Does the text contain Repetition (REP) errors?
A: Yes
Location: "<a sentence copied exactly from the text>"
Explanation: <why it is an error>
Deduction: -1
Q: Does the text contain Logical Inconsistency (LINC) errors?
A: No
"""
UNLOCATED = f"""Q: Does the text contain Repetition (REP) errors?
A: Yes
Location: "{REPEATED}"
Explanation: Said twice in a row.
Deduction: -1
Location: "She cooked tacos for Taco Tuesday."
Explanation: A sentence that is not in this text.
Deduction: -1
"""


def test_the_report_form_has_a_placeholder_no_quote():
    assert "<a sentence copied exactly from the text>" in parse_error_report.__globals__["ERROR_REPORT_FORMAT"]
    assert "Taco" not in parse_error_report.__globals__["ERROR_REPORT_FORMAT"]
    errors = parse_error_report(PLACEHOLDER_COPY, STORY)
    assert all(e.quote == "" for e in errors), "a copied placeholder is no quote"


async def test_a_copied_placeholder_costs_no_point(llm_server):
    mateval_script(llm_server, report=PLACEHOLDER_COPY)
    session = await run(make_session("mateval", llm_server, criteria="REP,LINC", strategy="SA"))
    assert session.outcome.scores == {"REP": 0, "LINC": 0, "total": 0}


@pytest.mark.parametrize("count_unlocated,rep", [(False, -1), (True, -2)])
async def test_an_error_not_located_costs_no_point_unless_asked(llm_server, count_unlocated, rep):
    from debate_tui.report.markdown import render

    mateval_script(llm_server, report=UNLOCATED)
    session = await run(make_session("mateval", llm_server, criteria="REP", strategy="SA",
                                     count_unlocated=count_unlocated))
    assert [e.located for e in session.outcome.errors] == [True, False]
    assert session.outcome.scores == {"REP": rep, "total": rep}
    assert any("1 not located in the text" in note for note in session.outcome.notes)
    report = render(session)
    assert "**Not located:** 1 of 2 errors" in report
    assert ("0 (not located)" in report) is not count_unlocated
    assert ("Deduction: none (not located)" in report) is not count_unlocated


@pytest.mark.parametrize("command", ["run", "batch"])
def test_count_unlocated_is_a_flag_of_run_and_batch(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--count-unlocated" in capsys.readouterr().out


def test_a_reports_json_line_is_its_answer_and_keeps_the_reports_own_explanation():
    """With `--structured`, the report's last line answers each asked type: a yes with a sentence of the story is a
    located error, explained as the report above explains that sentence; a type the text says yes to and the JSON
    no has no error; without the line (or with one that leaves a type out), the report's text is read."""
    text = ('Q: Does the text contain Repetition (REP) errors?\nA: Yes\n'
            'Location: "He went to the pool every morning."\nExplanation: the same sentence twice\nDeduction: -1\n'
            'Q: Does the text contain Factual Errors (FER) errors?\nA: Yes\nLocation: "Tom swam to the moon."\n')
    line = '{"REP": "yes", "REP_sentence": "He went to the pool every morning.", "FER": "no", "FER_sentence": ""}'
    answered, errors = mateval.read_report(f"{text}{line}", STORY, ["REP", "FER"])
    assert answered == {"REP", "FER"}
    assert [(e.type, e.located, e.explanation) for e in errors] == [("REP", True, "the same sentence twice")]
    partial = '{"REP": "yes", "REP_sentence": "He went to the pool every morning."}'  # FER left out
    for free in (text, text + partial):
        answered, errors = mateval.read_report(free, STORY, ["REP", "FER"])
        assert answered == {"REP", "FER"} and sorted(e.type for e in errors) == ["FER", "REP"]
