"""`--structured`: the answer asked again as JSON under a schema, on the real `run` path through litellm.

Which providers are asked (litellm's table, a server of the user's own tried in OpenAI's form and then in
llama-cpp-python's, free text for the rest), what the session says was used, and the flag's values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debate_tui.cli import build_parser
from debate_tui.cli.task_flags import spelled_out
from debate_tui.domain import AgentSpec, Criterion, Turn
from debate_tui.engine.structured import Question, formats_to_try
from debate_tui.llm.litellm_loader import load_litellm
from tests.helpers import STORY
from tests.helpers.cli import run_cli, session_for

pytestmark = pytest.mark.usefixtures("in_tmp")  # every test writes its outputs in its own folder

STRUCTURED_MODEL = "openai/fake-structured"
"""Registered with litellm below as a model that follows JSON schema response formats."""
ARGUMENT = "The story is clear and ordered; one sentence is repeated, which costs a little."


def run_single(capsys, server, *flags: str) -> tuple[int, dict, dict]:
    """`run --protocol single` against the fake server: exit code, JSON line, the saved session."""
    story = Path("story.txt").absolute()
    story.write_text(STORY)
    code, summary, _ = run_cli(capsys, "run", "--text", str(story), "--protocol", "single", "--api-base",
                               server.base_url, *flags)
    assert summary is not None
    return code, summary, json.loads(Path(summary["session_path"]).read_text())


def asked_format(request) -> str | None:
    return (request.body.get("response_format") or {}).get("type")


def answers_in(server, answer: str, refused: tuple[str, ...] = ()) -> None:
    """The argument as free text; the answer, asked with a response_format the server takes, as the JSON given;
    a format in `refused` gets the 500 llama-cpp-python sends for a response_format type it does not know."""
    for kind in refused:
        server.add_rule(match=lambda request, kind=kind: asked_format_of(request) == kind,
                        error=(500, "Input should be 'text' or 'json_object'"))
    server.add_rule(answer, match=lambda request: "response_format" in request)
    server.add_rule(ARGUMENT)


def asked_format_of(body: dict) -> str | None:
    return (body.get("response_format") or {}).get("type")


def test_a_model_litellm_knows_is_asked_in_openais_form_reason_first(capsys, llm_server):
    load_litellm().register_model({STRUCTURED_MODEL: {"litellm_provider": "openai", "mode": "chat",
                                                      "supports_response_schema": True}})
    answers_in(llm_server, '{"reason": "clear, one repetition", "score": 4}')
    code, summary, session = run_single(capsys, llm_server, "--structured", "--model", STRUCTURED_MODEL)
    assert code == 0 and summary["scores"] == {"coherence": 4.0} and summary["calls"] == 2
    [turn] = session["turns"]
    assert turn["content"].endswith('{"reason": "clear, one repetition", "score": 4}')
    asked = llm_server.requests[1].body["response_format"]
    assert asked["type"] == "json_schema" and asked["json_schema"]["schema"]["required"] == ["reason", "score"]
    assert session["options"]["structured"] is True
    assert session["state"]["answer_format"] == {STRUCTURED_MODEL: "json_schema"}


def test_auto_tries_a_server_of_your_own_in_openais_form_then_llama_cpp_pythons(capsys, llm_server):
    """llama-cpp-python's server refuses `json_schema` (a 500) and takes `json_object` with a schema: the
    second form is used for this turn and every later one, the first is not asked again."""
    answers_in(llm_server, '{"reason": "ordered", "score": 3}', refused=("json_schema",))
    code, summary, session = run_single(capsys, llm_server, "--structured", "auto", "--model", "openai/local",
                                        "--samples", "2")
    assert code == 0 and summary["scores"] == {"coherence": 3.0}
    formats = [asked_format(r) for r in llm_server.requests]
    assert formats.count("json_schema") == 1 and formats.count("json_object") == 2
    json_object = next(r.body["response_format"] for r in llm_server.requests if asked_format(r) == "json_object")
    assert json_object["schema"]["required"] == ["reason", "score"]
    assert json_object["schema"]["properties"]["reason"]["maxLength"] == 300  # its grammar bounds the reason
    assert session["state"]["answer_format"] == {"openai/local": "json_object"}
    assert session["options"]["structured"] == "auto"


def test_auto_asks_only_where_the_free_text_gives_no_answer_in_place_of_the_reminder(capsys, llm_server):
    """A readable reply costs nothing more; an unreadable one gets the JSON call instead of being asked again."""
    llm_server.add_rule('{"reason": "ordered", "score": 3}', match=lambda request: "response_format" in request)
    llm_server.add_rule(ARGUMENT + "\nScore: 4")
    code, summary, session = run_single(capsys, llm_server, "--structured", "auto", "--model", "openai/local")
    assert code == 0 and summary["scores"] == {"coherence": 4.0} and llm_server.calls == 1
    assert "answer_format" not in session["state"]
    llm_server.reset()
    answers_in(llm_server, '{"reason": "ordered", "score": 3}')
    code, summary, session = run_single(capsys, llm_server, "--structured", "auto", "--model", "openai/local")
    assert code == 0 and summary["scores"] == {"coherence": 3.0} and summary["unscored"] == 0
    assert [asked_format(r) for r in llm_server.requests] == [None, "json_schema"]  # no reminder asked


def test_a_server_that_refuses_or_ignores_every_form_gets_free_text_for_the_rest(capsys, llm_server):
    answers_in(llm_server, "{}", refused=("json_schema", "json_object"))
    code, summary, session = run_single(capsys, llm_server, "--structured=auto", "--model", "openai/local",
                                        "--samples", "2")
    assert code == 0 and session["state"]["answer_format"] == {"openai/local": "free text"}
    asked = [kind for r in llm_server.requests if (kind := asked_format(r))]
    assert asked == ["json_schema", "json_object"]  # one try of each form, on the first turn only
    llm_server.reset()
    llm_server.add_rule(ARGUMENT + "\nScore: 4")  # takes the format and answers free text anyway
    code, summary, session = run_single(capsys, llm_server, "--structured", "on", "--model", "openai/local",
                                        "--samples", "2")
    assert code == 0 and summary["scores"] == {"coherence": 4.0}
    assert session["state"]["answer_format"] == {"openai/local": "free text"} and llm_server.calls == 3


def test_auto_leaves_a_hosted_model_litellm_does_not_know_to_free_text_and_on_asks_it(llm_server):
    """A model with no API base of its own is a hosted one: auto asks it nothing; on asks in OpenAI's form."""
    hosted = AgentSpec(name="Judge", role="judge", model="openai/some-hosted-model")
    own = AgentSpec(name="Judge", role="judge", model="openai/local", params={"api_base": llm_server.base_url})
    assert formats_to_try(hosted, "auto") == () and formats_to_try(hosted, True) == ("json_schema",)
    assert formats_to_try(own, "auto") == ("json_schema", "json_object") and formats_to_try(own, False) == ()


def test_an_answer_off_the_scale_leaves_the_free_text_in_force(capsys, llm_server):
    load_litellm().register_model({STRUCTURED_MODEL: {"litellm_provider": "openai", "mode": "chat",
                                                      "supports_response_schema": True}})
    answers_in(llm_server, '{"reason": "off the scale", "score": 9}')
    code, summary, session = run_single(capsys, llm_server, "--structured", "--model", STRUCTURED_MODEL)
    assert code == 0 and "score 9" not in json.dumps(session["turns"]) and summary["scores"] == {"coherence": None}
    assert summary["unscored"] == 1  # the free text gave no score either, the re-ask neither


def test_llama_cpp_pythons_form_holds_a_whole_scale_to_its_numbers_and_a_reason_may_break_lines(capsys, llm_server):
    """Its grammar can bound a score to a scale's whole numbers (a small model wrote "1000.2" for 1-3), and it lets
    a raw line break into the reason, which strict JSON refuses: the answer after it is still taken."""
    answers_in(llm_server, '{"reason": "ordered\nmostly", "score": 2}', refused=("json_schema",))
    code, summary, session = run_single(capsys, llm_server, "--structured", "on", "--model", "openai/local",
                                        "--criteria", "coherence")
    assert code == 0 and summary["scores"] == {"coherence": 2.0}
    asked = next(r.body["response_format"] for r in llm_server.requests if asked_format(r) == "json_object")
    assert asked["schema"]["properties"]["score"] == {"enum": [1, 2, 3, 4, 5]}
    assert session["turns"][0]["content"].endswith('{"reason": "ordered\\nmostly", "score": 2}')  # one line


def test_a_scale_of_other_than_whole_ends_keeps_any_number():
    halves = Criterion(name="halves", description="", low=0.5, high=4.5)
    for criterion, expected in ((halves, {"type": "number"}), (None, {"enum": [1, 2, 3, 4, 5]})):
        asked = Question("pair", criterion).response_format("json_object")["schema"]["properties"]
        assert asked["score_1"] == asked["score_2"] == expected
    openais = Question("score").response_format("json_schema")["json_schema"]["schema"]
    assert openais["properties"]["score"] == {"type": "number"}


@pytest.mark.parametrize(("argv", "value"), [
    (["--structured"], True), (["--structured", "auto"], "auto"), (["--structured=off"], False),
    (["--structured", "on"], True), ([], None),
])
def test_the_flags_values(argv, value):
    args = build_parser("run").parse_args(["run", "--text", "t.txt", *argv])
    assert args.structured == value


def test_the_bare_flag_right_before_batchs_input_is_on(capsys):
    batch = build_parser("batch")
    assert spelled_out(["batch", "--structured", "in.jsonl"], batch) == ["batch", "--structured=on", "in.jsonl"]
    given = ["batch", "--structured", "auto", "in.jsonl"]
    assert spelled_out(given, batch) == given
    with pytest.raises(SystemExit):
        build_parser("run").parse_args(["run", "--text", "t.txt", "--structured", "always"])
    assert "choose from auto, on, off" in capsys.readouterr().err


def test_a_truncated_reply_says_its_own_tokens_not_its_json_answers(capsys, llm_server):
    """The pane's "truncated at N tokens" counts the reply's tokens; the JSON answer's call adds to the turn's
    usage, not to how long the reply was when its cap cut it."""
    answers_in(llm_server, '{"reason": "ok", "score": 3}')
    code, summary, session = run_single(capsys, llm_server, "--structured", "auto", "--model", "openai/local",
                                        "--max-reply-tokens", "12")
    turn = session["turns"][0]  # the cut reply is asked again: each try is a turn of its own
    reply, total = turn["reply_tokens"], turn["usage"]["completion_tokens"]
    assert turn["finish_reason"] == "length" and turn["usage"]["calls"] == 2 and 0 < reply < total
    assert Turn.model_validate(turn).ending == f"truncated at {reply} tokens"


REPORT_JSON = ('{"REP": "yes", "REP_sentence": "He went to the pool every morning.", "LINC": "no", '
               '"LINC_sentence": "", "DCONT": "no", "DCONT_sentence": "", "ILC": "no", "ILC_sentence": "", '
               '"FER": "yes", "FER_sentence": "Tom swam to the moon."}')
"""A report's answers as JSON: a repetition the story has, and a factual error quoting a sentence it has not."""


def run_mateval(capsys, server, *flags: str) -> tuple[int, dict, dict]:
    """MATEval with one evaluator (SA: a statement, the feedback, the report) on the story, against the fake server."""
    return run_single(capsys, server, "--protocol", "mateval", "--strategy", "SA", "--model", "openai/local", *flags)


def test_a_matevals_report_is_asked_a_yes_or_no_per_type_and_its_sentence(capsys, llm_server):
    """The report's free text (no repetition) gives way to its JSON line: a yes with a sentence of the story costs
    the type its point; a yes whose sentence is not in the story is listed, not located, and costs nothing."""
    llm_server.add_rule(match=lambda request: asked_format_of(request) == "json_schema",
                        error=(500, "Input should be 'text' or 'json_object'"))
    llm_server.add_rule(REPORT_JSON, match=lambda request: "response_format" in request)
    llm_server.add_rule("Q: Does the text contain Repetition (REP) errors?\nA: No", match=lambda request:
                        "Answer one question per error type" in request["messages"][-1]["content"])
    llm_server.add_rule(ARGUMENT)
    code, summary, session = run_mateval(capsys, llm_server, "--structured", "on", "--max-reply-tokens", "100")
    assert code == 0 and summary["scores"] == {"REP": -1.0, "LINC": 0.0, "DCONT": 0.0, "ILC": 0.0, "FER": 0.0,
                                               "total": -1.0}
    report = session["turns"][-1]
    assert report["agent"] == "Summarizer" and report["content"].startswith("Q: Does")
    assert report["content"].endswith(REPORT_JSON)
    located = {e["type"]: e["start"] is not None for e in session["outcome"]["errors"]}
    assert located == {"REP": True, "FER": False}
    asked = next(r.body["response_format"] for r in llm_server.requests if asked_format(r) == "json_object")
    properties = asked["schema"]["properties"]
    assert list(properties)[:2] == ["REP", "REP_sentence"] and properties["REP"]["enum"] == ["yes", "no"]
    assert properties["FER_sentence"]["maxLength"] == 200 and "reason" not in properties
    caps = [r.body.get("max_tokens") for r in llm_server.requests]
    assert caps == [100, 100, 100, 400, 400]  # statement, feedback, report; its JSON in two forms: 80 a type


def test_auto_asks_a_report_as_json_only_where_it_answers_no_question_in_place_of_the_rewrite(capsys, llm_server):
    answers_in(llm_server, REPORT_JSON)
    code, summary, session = run_mateval(capsys, llm_server, "--structured", "auto")
    assert code == 0 and summary["scores"]["REP"] == -1.0
    summaries = [t for t in session["turns"] if t["agent"] == "Summarizer"]
    assert len(summaries) == 1 and summaries[0]["content"].startswith(ARGUMENT)  # answered by JSON, not rewritten
    assert summary["calls"] == 4  # statement, feedback, report, its JSON


def test_a_report_json_that_leaves_a_type_out_leaves_the_free_text_in_force(capsys, llm_server):
    answers_in(llm_server, REPORT_JSON.replace('"FER": "yes", ', ""))
    code, summary, session = run_mateval(capsys, llm_server, "--structured", "on")
    assert code == 0 and set(summary["scores"].values()) == {None} and summary["unscored"] == 1
    assert summary["calls"] == 6  # the report and its JSON, then the rewrite and its JSON
    assert not any(t["content"].endswith("}") for t in session["turns"] if t["agent"] == "Summarizer")


def test_auto_is_the_default_for_a_server_of_your_own_and_hosted_models_keep_free_text(capsys, llm_server):
    """Issue 45: unset, `--structured` is "auto" where every model is served from the user's own api_base (an
    unreadable reply gets the JSON call, not the reminder); a hosted model keeps free text; a set value wins."""
    answers_in(llm_server, '{"reason": "ordered", "score": 3}')
    code, summary, session = run_single(capsys, llm_server, "--model", "openai/local")
    assert code == 0 and summary["scores"] == {"coherence": 3.0} and summary["unscored"] == 0
    assert session["options"]["structured"] == "auto"
    assert [asked_format(r) for r in llm_server.requests] == [None, "json_schema"]
    llm_server.reset()
    answers_in(llm_server, '{"reason": "ordered", "score": 3}')
    code, summary, session = run_single(capsys, llm_server, "--model", "openai/local", "--structured", "off")
    assert session["options"]["structured"] is False and "json_schema" not in [asked_format(r)
                                                                               for r in llm_server.requests]
    Path("story.txt").write_text(STORY)
    assert session_for("--text", "story.txt", "--model", "gpt-4o-mini").options["structured"] is False
    assert session_for("--text", "story.txt", "--demo").options["structured"] is False
