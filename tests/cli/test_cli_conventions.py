"""Command-line conventions (issue 29): --version, shell completion, --json listings, exit codes in every help,
the CLI reference's three errors, and the TUI taking every flag `run` takes."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from importlib.metadata import version

import pytest

from debate_tui.cli import COMMANDS, build_parser, main
from debate_tui.cli.completion import script
from debate_tui.cli.reference import render
from debate_tui.cli.task_flags import CONDENSE_MODES
from tests.helpers import FAKE_KEY
from tests.helpers.cli import fake_model_config, write_config


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_version_comes_from_the_installed_metadata_before_the_tui_rewrite(capsys):
    assert main(["--version"]) == 0  # it was read as a TUI flag: exit 2, "unrecognized arguments"
    assert capsys.readouterr().out == f"debate-tui {version('debate-tui')}\n"
    with pytest.raises(SystemExit) as exit_:  # and it is in --help, as argparse's own version action
        build_parser().parse_args(["--version"])
    assert exit_.value.code == 0 and version("debate-tui") in capsys.readouterr().out


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
def test_the_bash_completion_script_completes_a_subcommand_and_an_option_value(tmp_path):
    path = tmp_path / "debate-tui.bash"
    path.write_text(script("bash"))

    def complete(*words: str) -> list[str]:
        line = " ".join(("debate-tui", *words))
        shell = (f"source {path}; COMP_WORDS=(debate-tui {' '.join(repr(w) for w in words)}); "
                 f"COMP_CWORD={len(words)}; COMP_LINE={line!r}; COMP_POINT=${{#COMP_LINE}}; "
                 "_shtab_debate_tui; printf '%s\\n' \"${COMPREPLY[@]}\"")
        done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=30, check=True)
        return done.stdout.split()

    assert complete("ru") == ["run"]
    assert complete("comp") == ["compare", "completion"]
    assert complete("export", "--format", "") == ["md", "json", "html"]
    assert "--timeout" in complete("tui", "--ti")


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_name_every_command(shell, capsys):
    assert main(["completion", shell]) == 0
    out = capsys.readouterr().out
    assert all(command in out for command in COMMANDS)


def test_sessions_json_lists_saved_sessions_and_examples(capsys, story_file):
    assert main(["run", "--demo", "--protocol", "single", "--text", str(story_file)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert main(["sessions", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    [row] = listing["sessions"]
    assert row["id"] == summary["session"] and row["protocol"] == "single" and row["status"] == "completed"
    assert {r["protocol"] for r in listing["examples"]} >= {"debate", "mateval", "scaleeval"}
    assert main(["sessions", "--json", "--no-examples"]) == 0
    assert json.loads(capsys.readouterr().out)["examples"] == []


def test_models_json_names_key_variables_and_checks(capsys, monkeypatch, llm_server):
    write_config(fake_model_config(llm_server.base_url) + '[roles]\ncritic = "azure/my-gpt"\n')
    monkeypatch.setenv("FAKE_LLM_KEY", FAKE_KEY)
    monkeypatch.setenv("AZURE_API_KEY", "az-secret-value-0123")
    monkeypatch.delenv("AZURE_API_BASE", raising=False)
    assert main(["models", "--json"]) == 0
    out = capsys.readouterr().out
    listing = json.loads(out)
    assert FAKE_KEY not in out and "az-secret-value-0123" not in out
    fake, azure = listing["models"]
    assert fake["model"] == "openai/fake-model" and fake["api_base"] == llm_server.base_url
    assert fake["key"]["variables"] == ["FAKE_LLM_KEY"] and fake["key"]["set"] and fake["check"] is None
    assert azure["key"]["variables"] == ["AZURE_API_KEY", "AZURE_API_BASE", "AZURE_API_VERSION"]
    assert not azure["key"]["set"] and azure["key"]["missing"] == ["AZURE_API_BASE", "AZURE_API_VERSION"]


def test_models_check_json_keeps_the_exit_code(capsys, monkeypatch, llm_server):
    write_config(fake_model_config(llm_server.base_url))
    monkeypatch.setenv("FAKE_LLM_KEY", FAKE_KEY)
    assert main(["models", "--check", "--json", "--timeout", "10"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["answered"] == 1 and listing["models"][0]["check"]["status"] == "ok"


def test_config_show_json_gives_settings_origins_and_key_variables(capsys, monkeypatch):
    write_config('default_model = "bedrock/anthropic.claude-3-haiku"\n')
    monkeypatch.setenv("AWS_PROFILE", "work")
    monkeypatch.setenv("AWS_REGION_NAME", "eu-west-1")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert main(["config", "show", "--json", "--timeout", "60"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["exists"] and shown["settings"]["limits"]["timeout"] == 60
    assert shown["origins"]["limits.timeout"] == "flag --timeout" and shown["origins"]["default_model"] == "file"
    [model] = shown["models"]
    assert model["key"]["instead"] == ["AWS_PROFILE", "AWS_REGION_NAME"] and model["key"]["set"]  # a profile works


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_lists_its_exit_codes_in_its_help(command):
    assert "Exit codes: 0 " in subcommands()[command].format_help()


def test_the_reference_shows_what_help_shows():
    reference = render()
    meta = reference.split("### `debate-tui meta`", 1)[1].split("### ", 1)[0]
    bootstrap = "| `--bootstrap N` | resamples for the 95% intervals (default 1000; 0: none; at most 100,000) |"
    assert bootstrap in meta  # not 95%%
    assert "| `--seed N` | seed of the resampling (default 0) |" in meta  # not the protocols' seed
    config = reference.split("### `debate-tui config`", 1)[1].split("### ", 1)[0]
    assert "| `ACTION` | `path`: print the config file's path; `show`: " in config  # the row was empty
    assert "| `--seed N` | DEBATE, MATEval, ScaleEval: seed" in reference.split("### Task options", 1)[1]


def options(parser: argparse.ArgumentParser, *, leave_out: tuple[str, ...] = ()) -> set[str]:
    return {option for group in parser._action_groups if group.title not in leave_out
            for action in group._group_actions for option in action.option_strings}


def test_the_tui_takes_every_flag_run_takes_but_the_output_files():
    commands = subcommands()
    missing = options(commands["run"], leave_out=("output",)) - options(commands["tui"])
    assert missing == set()  # --timeout exited 2 here


def test_the_tui_applies_limits_and_history_flags_as_run_does(story_file):
    from debate_tui.cli.tui import tui_request
    from debate_tui.domain import HistorySettings
    from debate_tui.ui.launch import launch_from
    from debate_tui.ui.state import UiState

    args = build_parser("tui").parse_args(["tui", "--text", str(story_file), "--timeout", "60", "--retries", "2",
                                           "--max-cost", "0.5", "--max-history-tokens", "900", "--condense", "digest",
                                           "--demo", "--autostart"])
    launch = launch_from(tui_request(args), UiState())
    limits = launch.config.limits
    assert (limits.timeout, limits.retries, limits.max_cost) == (60, 2, 0.5)
    assert launch.history == HistorySettings(max_history_tokens=900, condense="digest")


def test_condense_modes_are_the_engine_s():
    from typing import get_args

    from debate_tui.engine.condense import CondenseMode

    assert get_args(CondenseMode) == CONDENSE_MODES


def test_cloud_credentials_name_every_variable_and_the_fix(monkeypatch):
    from debate_tui.cli.models import fix_for
    from debate_tui.config import load_config

    for name in ("AZURE_API_KEY", "AZURE_API_BASE", "AZURE_API_VERSION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                 "AWS_REGION_NAME", "AWS_PROFILE", "GOOGLE_APPLICATION_CREDENTIALS", "VERTEXAI_PROJECT",
                 "VERTEXAI_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    config = load_config()
    monkeypatch.setenv("AZURE_API_KEY", "az-key-0123456789")
    azure = fix_for(config, "azure/gpt-4o", "auth")
    assert azure == "set AZURE_API_BASE and AZURE_API_VERSION (export AZURE_API_BASE=...)"
    assert fix_for(config, "bedrock/anthropic.claude-3-haiku", "auth").endswith(", or AWS_PROFILE and AWS_REGION_NAME")
    vertex = config.key_source("vertex_ai/gemini-1.5-pro")
    assert vertex.shown == "GOOGLE_APPLICATION_CREDENTIALS + VERTEXAI_PROJECT + VERTEXAI_LOCATION" and not vertex.is_set
