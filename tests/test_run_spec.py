"""One run specification (`Choices`), resolved by one rule: command line > environment > config.toml >
remembered setup > default, each value's origin recorded; the remembered setup is that object serialised,
and a file saved before it still loads."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError, replace

import pytest

from debate_tui.choices import COMMAND_LINE, DEFAULT, REMEMBERED, Choices, Source, resolve
from debate_tui.cli import build_parser
from debate_tui.cli.tui import tui_request
from debate_tui.config import resolve_current
from debate_tui.domain import Task
from debate_tui.factory import build_session
from debate_tui.llm import DEMO_MODEL
from debate_tui.locations import config_path
from debate_tui.resolver import resolve_choices
from debate_tui.ui.locations import ui_state_path
from debate_tui.ui.opening import read_opening
from debate_tui.ui.state import UiState, load_state
from tests.helpers import FAKE_KEY, STORY
from tests.helpers.cli import fake_model_config, write_config


def sources(**given: dict) -> list[Source]:
    names = ("command_line", "environment", "config_file", "remembered", "default")
    return [Source(name, given.get(name, {})) for name in names]


def test_the_first_source_that_sets_a_choice_wins_and_is_named():
    choices = resolve(*sources(environment={"model": "env/m"}, config_file={"model": "file/m", "protocol": "single"},
                               remembered={"model": "old/m", "protocol": "chateval", "personas": "critic"},
                               default={"protocol": "debate"}), config_newer=True)
    assert (choices.model, choices.protocol, choices.personas) == ("env/m", "single", "critic")
    assert choices.origins == {"model": "environment", "protocol": "config_file", "personas": "remembered"}
    older = resolve(*sources(config_file={"protocol": "single"}, remembered={"protocol": "chateval"}),
                    config_newer=False)
    assert (older.protocol, older.origins["protocol"]) == ("chateval", "remembered")


def test_tables_merge_key_by_key_and_protocol_bound_choices_stay_with_their_protocol():
    line = {"options": {"rounds": 3}, "generation": {"temperature": 0.4}}
    kept = resolve(*sources(command_line=line, remembered={"protocol": "debate", "options": {"rounds": 2, "seed": 7},
                                                           "generation": {"max_reply_tokens": "99"}}),
                   config_newer=False)
    assert kept.options == {"rounds": 3, "seed": 7}
    assert kept.generation == {"temperature": 0.4, "max_reply_tokens": "99"}
    assert (kept.origins["options.rounds"], kept.origins["options.seed"]) == ("command_line", "remembered")
    moved = resolve(*sources(command_line={"protocol": "single", **line},
                             remembered={"protocol": "debate", "options": {"seed": 7}, "criteria": ["x"]}),
                    config_newer=False)
    assert moved.options == {"rounds": 3} and moved.criteria is None  # the debate's seed and criteria stay behind


def test_choices_are_immutable_and_a_copy_changes_one_field():
    choices = Choices(protocol="single", criteria=["coherence"])
    with pytest.raises(FrozenInstanceError):
        choices.protocol = "debate"  # type: ignore[misc]
    assert replace(choices, model="openai/x") == Choices(protocol="single", criteria=("coherence",), model="openai/x")


def test_environment_beats_the_remembered_setup_and_config_toml_saved_last_beats_it_too(monkeypatch):
    remembered = Choices(protocol="chateval", model="old/m")
    given = tui_request(build_parser("tui").parse_args(["tui", "--temperature", "0.2"])).choices
    monkeypatch.setenv("DEBATE_TUI_MODEL", "openai/env")
    choices = resolve_choices(given, resolve_current({}), remembered)
    assert (choices.protocol, choices.model, choices.generation) == ("chateval", "openai/env", {"temperature": 0.2})
    assert choices.origins["model"] == "environment variable DEBATE_TUI_MODEL"
    assert (choices.origins["protocol"], choices.origins["generation"]) == (REMEMBERED, COMMAND_LINE)
    monkeypatch.delenv("DEBATE_TUI_MODEL")
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text('protocol = "single"\n')
    newer = resolve_choices(given, resolve_current({}), remembered, config_newer=True)
    assert (newer.protocol, newer.model) == ("single", "old/m")
    assert newer.origins["protocol"] == f"config.toml ({config_path()})"
    assert resolve_choices(Choices(), resolve_current({})).origins["protocol"].startswith("config.toml")
    config_path().unlink()
    assert resolve_choices(Choices(), resolve_current({})).origins == {"protocol": DEFAULT}


def test_the_first_frame_follows_the_same_rule_as_the_form(monkeypatch):
    """An environment variable's protocol wins over the remembered one in the first frame, as on the form."""
    ui_state_path().parent.mkdir(parents=True, exist_ok=True)
    ui_state_path().write_text(json.dumps({"setup": {"protocol": "chateval"}}))
    monkeypatch.setenv("DEBATE_TUI_PROTOCOL", "single")
    opening = read_opening(tui_request(build_parser("tui").parse_args(["tui"])))
    assert opening.choices.protocol == "single"
    assert opening.choices.origins["protocol"] == "environment variable DEBATE_TUI_PROTOCOL"


def test_the_remembered_setup_is_the_choices_serialised_and_an_older_file_still_loads():
    ui_state_path().parent.mkdir(parents=True, exist_ok=True)
    older = {"theme": "debate-paper", "setup": {
        "protocol": "single", "options": {"samples": 2}, "criteria": ["summeval/coherence"], "personas": None,
        "custom_criteria": [{"name": "wit", "description": "How witty.", "low": 1, "high": 5}],
        "model": "", "api_base": "", "max_reply_tokens": "300", "temperature": "", "structured": False,
        "agent_models": {}, "agent_personas": {}, "text_path": "story.txt"}}
    ui_state_path().write_text(json.dumps(older))
    state = load_state()
    assert state.theme == "debate-paper"
    setup = state.setup
    assert (setup.protocol, dict(setup.options), setup.criteria) == ("single", {"samples": 2}, ("summeval/coherence",))
    assert (setup.model, setup.api_base, dict(setup.generation)) == (None, None, {"max_reply_tokens": "300"})
    assert setup.text_path == "story.txt" and [c.name for c in setup.custom_criteria] == ["wit"]
    saved = json.loads(UiState(theme="x", setup=setup).model_dump_json())["setup"]
    assert saved == {"protocol": "single", "criteria": ["summeval/coherence"], "options": {"samples": 2},
                     "custom_criteria": [setup.custom_criteria[0].model_dump(mode="json")],
                     "generation": {"max_reply_tokens": "300"}, "inputs": {"text": "story.txt"}}
    assert UiState.model_validate({"setup": saved}).setup == setup
    ui_state_path().write_text(json.dumps({"setup": {"temperature": ["not", "a", "number"], "options": 3}}))
    assert load_state() == UiState()



CONFIGURED_RUN = ('[roles]\ncritic = "openai/critic"\n[protocols.debate]\nrounds = 3\n'
                  '[generation]\ntemperature = 0.2\n[generation.roles.critic]\nmax_reply_tokens = 99\n')


def test_config_show_tells_a_run_s_choices_and_where_each_came_from(monkeypatch, capsys):
    from debate_tui.cli import main

    monkeypatch.setenv("DEBATE_TUI_MODEL", "openai/env")
    assert main(["config", "show", "--json", "--protocol", "single"]) == 0
    choices = json.loads(capsys.readouterr().out)["choices"]
    assert choices["protocol"] == {"value": "single", "origin": COMMAND_LINE}
    assert choices["model"] == {"value": "openai/env", "origin": "environment variable DEBATE_TUI_MODEL"}
    write_config(CONFIGURED_RUN)
    assert main(["config", "show", "--json"]) == 0
    spec = json.loads(capsys.readouterr().out)["spec"]  # the record the factory builds from, origins included
    assert spec["option_defaults"] == {"debate": {"rounds": 3}} and spec["role_models"] == {"critic": "openai/critic"}
    assert spec["origins"]["generation_defaults.temperature"] == f"config.toml ({config_path()})"
    config_path().unlink()
    assert main(["config", "show"]) == 0
    shown = capsys.readouterr().out
    assert "#   protocol = debate  (default)\n#   model = openai/env  (environment variable DEBATE_TUI_MODEL)" in shown


def test_the_factory_builds_the_same_session_from_a_resolved_spec_with_config_toml_gone():
    """Once resolved, the spec carries every configured value with its origin: the factory reads nothing else."""
    path = write_config(fake_model_config("http://127.0.0.1:8000/v1") + CONFIGURED_RUN)
    spec = resolve_choices(Choices(criteria=["coherence"], options={"seed": 5}), resolve_current({}))
    assert spec.origins["option_defaults.debate"] == spec.origins["model_settings.openai/fake-model"] == (
        f"config.toml ({path})")
    made = build_session(Task(text=STORY), spec).session
    path.unlink()
    again = build_session(Task(text=STORY), spec).session
    assert again.model_dump(exclude={"id", "created_at", "updated_at"}) == made.model_dump(
        exclude={"id", "created_at", "updated_at"})
    scorer, critic = made.agents[:2]
    assert scorer.params == {"api_base": "http://127.0.0.1:8000/v1", "api_key_env": "FAKE_LLM_KEY",
                             "max_tokens": 512, "temperature": 0.2}
    assert (critic.model, critic.params["max_tokens"], made.options["rounds"]) == ("openai/critic", 99, 3)
    now = build_session(Task(text=STORY), resolve_choices(Choices(), resolve_current({}))).session
    assert now.agents[0].model == DEMO_MODEL and now.options["rounds"] != 3  # the file is gone for a new spec


def test_a_session_file_keeps_its_spec_and_a_file_from_before_still_loads(story_file, tmp_path, capsys):
    from debate_tui.cli import main
    from debate_tui.domain import Session
    from debate_tui.store import read_session

    write_config(CONFIGURED_RUN)
    path = tmp_path / "kept.json"
    assert main(["run", "--demo", "--temperature", "0.3", "--text", str(story_file), "--session", str(path)]) == 0
    capsys.readouterr()
    written = json.loads(path.read_text())["spec"]
    assert written["generation"] == {"temperature": 0.3} and written["option_defaults"] == {"debate": {"rounds": 3}}
    assert written["origins"]["generation.temperature"] == COMMAND_LINE
    assert written["origins"]["generation_defaults.roles"] == f"config.toml ({config_path()})"
    assert "temperature" not in written["generation_defaults"]  # the flag enters the spec once, as typed
    assert FAKE_KEY not in path.read_text()
    session = read_session(path)
    assert session.spec is not None and session.spec.generation == {"temperature": 0.3}
    assert session.spec.origins == written["origins"]
    assert Session.model_validate_json(session.model_dump_json()).spec.data() == session.spec.data()
    del (older := json.loads(path.read_text()))["spec"]
    path.write_text(json.dumps(older))
    assert read_session(path).spec is None


def test_what_the_command_line_gave_is_no_change_of_the_configuration():
    made = resolve_choices(Choices(model="openai/x"), resolve_current({"model": "openai/x"}))  # run --model openai/x
    assert made.origins["default_model"] == COMMAND_LINE
    assert made.configured_changes(resolve_choices(Choices(), resolve_current({}))) == []
    write_config('[generation]\ntemperature = 0.5\n[roles]\ncritic = "openai/c"\n')
    assert made.configured_changes(resolve_choices(Choices(), resolve_current({}))) == [
        "generation_defaults", "role_models"]
