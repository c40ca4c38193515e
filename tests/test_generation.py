"""Generation settings: the per-reply cap and the temperature, from flags, config.toml and the built-in defaults."""

from __future__ import annotations

import pytest

from debate_tui.cli import build_parser
from debate_tui.config import ConfigError
from debate_tui.generation import Generation
from tests.helpers.cli import session_for, write_config
from tests.helpers.ui import RecordingDemo, freeze, open_setup, type_into, wait_until


def params(session) -> dict[str, tuple[int, float]]:
    return {a.name: (a.params["max_tokens"], a.params["temperature"]) for a in session.agents}


def test_defaults_fit_each_role_and_judge_at_temperature_zero(story_file):
    debate = session_for("--text", str(story_file), "--demo")
    assert set(params(debate).values()) == {(512, 0.0)}
    mateval = params(session_for("--text", str(story_file), "--demo", "--protocol", "mateval"))
    assert mateval["Summarizer"] == (1536, 0.0) and mateval["Evaluator 1"] == (768, 0.0)
    assert debate.options["max_reply_tokens"] is None and debate.options["temperature"] is None


def test_flags_set_every_agent_and_are_recorded_in_the_options(story_file):
    session = session_for("--text", str(story_file), "--demo", "--protocol", "mateval",
                          "--max-reply-tokens", "200", "--temperature", "0.3")
    assert set(params(session).values()) == {(200, 0.3)}
    assert session.options["max_reply_tokens"] == 200 and session.options["temperature"] == 0.3
    assert Generation.recorded(session.options).max_reply_tokens == 200


def test_sampling_keeps_its_temperature_unless_one_is_set(story_file):
    sampled = session_for("--text", str(story_file), "--model", "openai/x", "--protocol", "single", "--samples", "3")
    assert params(sampled)["Judge"] == (512, 1.0)
    chosen = session_for("--text", str(story_file), "--model", "openai/x", "--protocol", "single", "--samples", "3",
                         "--temperature", "0.5")
    assert params(chosen)["Judge"] == (512, 0.5)


def test_the_most_specific_setting_wins(story_file):
    write_config('[generation]\nmax_reply_tokens = 300\ntemperature = 0.2\n'
                 '[generation.roles.critic]\nmax_reply_tokens = 250\n'
                 '[models."openai/small"]\nmax_reply_tokens = 100\ncontext_window = 2048\n')
    session = session_for("--text", str(story_file), "--model", "openai/x", "--agent-model", "Scorer=openai/small")
    assert params(session) == {"Scorer": (100, 0.2), "Critic": (250, 0.2)}
    assert session.agent("Scorer").context_window == 2048 and session.agent("Critic").context_window is None
    assert "context_window" not in session.agent("Scorer").params  # not a litellm argument


def test_bad_values_name_the_setting(story_file, capsys):
    write_config('[generation.roles.jester]\nmax_reply_tokens = 10\n')
    with pytest.raises(ConfigError, match="generation.roles.*unknown role 'jester'"):
        session_for("--text", str(story_file), "--demo")
    write_config("")
    with pytest.raises(ConfigError, match="--max-reply-tokens.*greater than 0"):
        session_for("--text", str(story_file), "--demo", "--max-reply-tokens", "0")


@pytest.mark.parametrize("command", ["run", "batch", "tui"])
def test_help_shows_the_generation_flags(command):
    text = build_parser(command).parse_args([command, "--text", "x"] if command != "batch" else
                                            [command, "in.jsonl", "--out", "o"])
    help_text = build_parser(command)._subparsers._group_actions[0].choices[command].format_help()
    assert all(flag in help_text for flag in ("--max-reply-tokens", "--temperature", "--structured"))
    assert text.max_reply_tokens is None and text.temperature is None


def test_the_setup_form_sets_the_cap_and_temperature_and_refuses_nonsense():
    from dataclasses import replace

    from debate_tui.choices import Choices
    from debate_tui.cli.tui import tui_request
    from debate_tui.config import resolve_current
    from debate_tui.inputs import InputError
    from debate_tui.resolver import resolve_choices
    from debate_tui.ui.session_builder import build as build_from_form
    from debate_tui.ui.session_builder import load_catalog

    resolved = resolve_current({})
    request = tui_request(build_parser("tui").parse_args(["tui", "--max-reply-tokens", "150", "--temperature", "0.4",
                                                          "--structured"]))
    remembered = Choices(model="openai/x", criteria=["summeval/coherence"], generation={"temperature": "0.9"})
    choices = resolve_choices(request.choices, resolved, remembered)
    assert choices.generation == {"max_reply_tokens": 150, "temperature": 0.4, "structured": True}
    assert choices.origins["generation.temperature"] == "command line"
    session = build_from_form(load_catalog(choices), choices, {"text": "A short story."}).session
    assert set(params(session).values()) == {(150, 0.4)} and session.options["max_reply_tokens"] == 150
    assert session.options["structured"] is True
    with pytest.raises(InputError, match="--max-reply-tokens"):
        build_from_form(load_catalog(choices), replace(choices, generation={"max_reply_tokens": "lots"}),
                        {"text": "A story."})


async def test_the_setup_screen_shows_the_cap_and_temperature_and_a_started_run_uses_them():
    from textual import events
    from textual.widgets import Select, TextArea

    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.launch import Launch
    from debate_tui.ui.screens.debate import DebateScreen
    from tests.helpers import STORY

    app = DebateTUI(Launch(step=True), client=RecordingDemo(), stamp=freeze)
    async with app.run_test(size=(120, 36)) as pilot:
        setup = await open_setup(pilot)
        assert setup.query_one("#max-reply-tokens").placeholder.startswith("tokens per reply (default 512")
        text_area = setup.query_one("#text-text", TextArea)
        text_area.focus()
        app.post_message(events.Paste(STORY))
        await wait_until(pilot, lambda: text_area.text == STORY, what="the pasted text")
        await type_into(pilot, "#max-reply-tokens", "180")
        await type_into(pilot, "#temperature", "0.2")
        structured = setup.query_one("#structured", Select)
        assert structured.value is Select.NULL  # nothing chosen: as configured
        structured.value = "auto"
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what="the debate screen")
        session = app.screen.session
        assert set(params(session).values()) == {(180, 0.2)}
        assert (session.options["max_reply_tokens"], session.options["temperature"]) == (180, 0.2)
        assert session.options["structured"] == "auto"


def test_the_reply_meter_asks_the_tokenizer_only_near_the_cap(monkeypatch):
    from debate_tui.llm import tokens

    asked: list[int] = []

    def counted(model: str, text: str) -> int:
        asked.append(len(text))
        return len(text.split())  # one token a word, for the test

    monkeypatch.setattr(tokens, "reply_tokens", counted)
    meter = tokens.ReplyMeter("openai/x", cap=100)
    parts: list[str] = []
    for number in range(200):
        parts.append(f"w{number} ")  # one token a delta
        if meter.add(parts):
            break
    assert len(parts) == 100, "stopped at the 100th token, no later"
    assert 1 <= len(asked) <= 8, "a few exact counts, not one a delta"
    assert not any(tokens.ReplyMeter("openai/x", cap=None).add(["a long delta " * 50]) for _ in range(3))
