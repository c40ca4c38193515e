"""The one precedence rule, as the model server sees it: what a person types (a flag, the setup form) wins over
every configured layer; among those, the most specific wins (`[models."M"]` > `[generation.roles.R]` >
`[generation]` or its DEBATE_TUI_* variable > built-in); the session records what was sent.

Asserted on what the fake OpenAI-compatible server RECEIVED (temperature, max_tokens), for `run`, `batch` and the
TUI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.batch import run_batch, write_items
from tests.helpers.cli import run_cli, write_config
from tests.helpers.scripts import agreeing_debate

MODEL = "openai/fake-model"
CONFIGURED = {"temperature": 0.5, "max_reply_tokens": 55}
TYPED = {"temperature": 0.9, "max_reply_tokens": 77}
FLAGS = ["--temperature", str(TYPED["temperature"]), "--max-reply-tokens", str(TYPED["max_reply_tokens"])]
VALUES = f"temperature = {CONFIGURED['temperature']}\nmax_reply_tokens = {CONFIGURED['max_reply_tokens']}\n"
LAYERS = {
    "models": f'[models."{MODEL}"]\n{VALUES}',
    "roles": f"[generation.roles.scorer]\n{VALUES}[generation.roles.critic]\n{VALUES}",
    "generation": f"[generation]\n{VALUES}",
    "environment": "",
}
"""A configured layer that sets both reply settings to CONFIGURED (the environment: its two variables)."""


def configure(server, layer: str, monkeypatch) -> None:
    """config.toml reaching the fake server, with `layer` giving CONFIGURED."""
    server_table = f'[models."{MODEL}"]\napi_base = "{server.base_url}"\n'
    text = f'default_model = "{MODEL}"\n'
    if layer == "models":
        text += server_table + VALUES
    else:
        text += server_table + LAYERS[layer]
    if layer == "environment":
        monkeypatch.setenv("DEBATE_TUI_TEMPERATURE", str(CONFIGURED["temperature"]))
        monkeypatch.setenv("DEBATE_TUI_MAX_REPLY_TOKENS", str(CONFIGURED["max_reply_tokens"]))
    write_config(text)


def received(server) -> set[tuple[float, int]]:
    """(temperature, max_tokens) of every chat request the server got."""
    return {(r.body.get("temperature"), r.body.get("max_tokens")) for r in server.requests}


def sent_by(session: dict) -> set[tuple[float, int]]:
    return {(a["params"]["temperature"], a["params"]["max_tokens"]) for a in session["agents"]}


EXPECTED_TYPED = {(TYPED["temperature"], TYPED["max_reply_tokens"])}
EXPECTED_CONFIGURED = {(CONFIGURED["temperature"], CONFIGURED["max_reply_tokens"])}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_run_a_flag_beats_every_configured_layer(capsys, story_file, llm_server, monkeypatch, layer):
    agreeing_debate(llm_server)
    configure(llm_server, layer, monkeypatch)
    code, summary, err = run_cli(capsys, "run", "--text", str(story_file), "--criteria", "coherence", *FLAGS)
    assert code == 0, err
    assert received(llm_server) == EXPECTED_TYPED
    session = json.loads(Path(summary["session_path"]).read_text())
    assert sent_by(session) == EXPECTED_TYPED
    assert (session["options"]["temperature"], session["options"]["max_reply_tokens"]) == (0.9, 77)


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_run_without_flags_the_configured_layer_is_sent_and_recorded(capsys, story_file, llm_server, monkeypatch,
                                                                     layer):
    agreeing_debate(llm_server)
    configure(llm_server, layer, monkeypatch)
    code, summary, err = run_cli(capsys, "run", "--text", str(story_file), "--criteria", "coherence")
    assert code == 0, err
    assert received(llm_server) == EXPECTED_CONFIGURED
    assert sent_by(json.loads(Path(summary["session_path"]).read_text())) == EXPECTED_CONFIGURED


def test_run_the_most_specific_configured_layer_wins(capsys, story_file, llm_server):
    """[models."M"] > [generation.roles.R] > [generation]: each layer sets a different value."""
    agreeing_debate(llm_server)
    write_config(f'default_model = "{MODEL}"\n[generation]\ntemperature = 0.1\nmax_reply_tokens = 11\n'
                 f'[generation.roles.critic]\ntemperature = 0.2\nmax_reply_tokens = 22\n'
                 f'[models."{MODEL}"]\napi_base = "{llm_server.base_url}"\ntemperature = 0.3\n'
                 f'[models."openai/scorer"]\napi_base = "{llm_server.base_url}"\n')
    code, summary, err = run_cli(capsys, "run", "--text", str(story_file), "--criteria", "coherence",
                                 "--agent-model", "Scorer=openai/scorer")
    assert code == 0, err
    by_model = {r.model: (r.body["temperature"], r.body["max_tokens"]) for r in llm_server.requests}
    assert by_model == {"scorer": (0.1, 11), "fake-model": (0.3, 22)}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_batch_a_flag_beats_every_configured_layer(capsys, tmp_path, llm_server, monkeypatch, layer):
    agreeing_debate(llm_server)
    configure(llm_server, layer, monkeypatch)
    items, out = write_items(tmp_path / "in.jsonl", 2), tmp_path / "out.jsonl"
    code, summary, err = run_batch(capsys, str(items), "--out", str(out), "--criteria", "coherence", *FLAGS)
    assert code == 0, err
    assert summary["done"] == 2
    assert received(llm_server) == EXPECTED_TYPED


def test_batch_without_flags_the_most_specific_layer_is_sent(capsys, tmp_path, llm_server, monkeypatch):
    agreeing_debate(llm_server)
    monkeypatch.setenv("DEBATE_TUI_TEMPERATURE", "0.1")
    configure(llm_server, "models", monkeypatch)
    items, out = write_items(tmp_path / "in.jsonl", 1), tmp_path / "out.jsonl"
    code, _, err = run_batch(capsys, str(items), "--out", str(out), "--criteria", "coherence")
    assert code == 0, err
    assert received(llm_server) == EXPECTED_CONFIGURED


async def _tui_run(argv: list[str], remembered: dict | None = None):
    """The TUI opened as `debate-tui tui ARGV` (the real router, so litellm calls the fake server), the story
    pasted and the run started from the form; returns the running session once it has ended."""
    from textual import events
    from textual.widgets import TextArea

    from debate_tui.cli import build_parser
    from debate_tui.cli.tui import tui_request
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.launch import launch_from
    from debate_tui.ui.locations import ui_state_path
    from debate_tui.ui.screens.debate import DebateScreen
    from debate_tui.ui.state import load_state
    from tests.helpers import STORY
    from tests.helpers.ui import freeze, open_setup, wait_until

    if remembered is not None:
        ui_state_path().parent.mkdir(parents=True, exist_ok=True)
        ui_state_path().write_text(json.dumps({"setup": remembered}))
    request = tui_request(build_parser("tui").parse_args(["tui", "--criteria", "coherence", *argv]))
    app = DebateTUI(launch_from(request, load_state()), stamp=freeze)
    async with app.run_test(size=(120, 36)) as pilot:
        setup = await open_setup(pilot)
        text_area = setup.query_one("#text-text", TextArea)
        text_area.focus()
        app.post_message(events.Paste(STORY))
        await wait_until(pilot, lambda: text_area.text == STORY, what="the pasted text")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what="the debate screen")
        session = app.screen.session
        await wait_until(pilot, lambda: session.status != "running" and len(session.turns) >= 2, timeout=30,
                         what="the run's end")
        return session


@pytest.mark.parametrize("layer", [*sorted(LAYERS), "remembered"])
async def test_tui_a_flag_beats_every_configured_layer_and_the_remembered_setup(llm_server, monkeypatch, layer):
    agreeing_debate(llm_server)
    configure(llm_server, "generation" if layer == "remembered" else layer, monkeypatch)
    remembered = {"generation": {"temperature": "0.3", "max_reply_tokens": "33"}} if layer == "remembered" else None
    session = await _tui_run(FLAGS, remembered)
    assert received(llm_server) == EXPECTED_TYPED
    assert {(a.params["temperature"], a.params["max_tokens"]) for a in session.agents} == EXPECTED_TYPED
    assert (session.options["temperature"], session.options["max_reply_tokens"]) == (0.9, 77)


async def test_tui_without_flags_the_models_table_is_sent(llm_server, monkeypatch):
    agreeing_debate(llm_server)
    configure(llm_server, "models", monkeypatch)
    await _tui_run([])
    assert received(llm_server) == EXPECTED_CONFIGURED
