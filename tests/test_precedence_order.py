"""The precedence order, stated once here and checked on every function that applies it: for every pair of
layers, the higher one's value wins (a reorder of `precedence.Layer` is one edit and fails here)."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest

from debate_tui.choices import Choices, Source, resolve
from debate_tui.config.merge import resolve as resolve_config
from debate_tui.domain import AgentSpec
from debate_tui.factory import run_wide
from debate_tui.generation import Generation, ReplySettings
from debate_tui.precedence import REPLY_ORDER, Layer, Scope, merged_tables

EXPECTED = ("command line", "environment", "config.toml", "remembered from your last setup", "default")
"""The order of a run's choices, the highest first (config.toml under the remembered setup when saved before it)."""
REPLY = ("typed", "models", "roles", "generation")
"""The order of a reply setting's configured places, the highest first."""


def _sources(setting: dict[str, str]) -> dict[str, Source]:
    """One source per layer; those named in `setting` give `model` its value."""
    return {layer: Source(layer, {"model": setting[layer]} if layer in setting else {}) for layer in EXPECTED}


def _resolved(setting: dict[str, str], *, config_newer: bool = True) -> tuple[str | None, str]:
    by_layer = _sources(setting)
    choices = resolve(*(by_layer[layer] for layer in EXPECTED), config_newer=config_newer)
    return choices.model, choices.origins.get("model", "")


@pytest.mark.parametrize(("higher", "lower"), list(combinations(EXPECTED, 2)))
def test_a_run_s_choice_comes_from_the_higher_layer(higher, lower):
    assert _resolved({higher: "high", lower: "low"}) == ("high", higher)


def test_config_saved_before_the_remembered_setup_goes_under_it():
    both = {"config.toml": "file", "remembered from your last setup": "remembered"}
    assert _resolved(both, config_newer=False) == ("remembered", "remembered from your last setup")
    assert _resolved(both, config_newer=True) == ("file", "config.toml")


CONFIG_LAYERS = {"command line": "flags", "environment": "env", "config.toml": "file"}


@pytest.mark.parametrize(("higher", "lower"), list(combinations(CONFIG_LAYERS, 2)))
def test_a_configuration_value_comes_from_the_higher_layer(higher, lower):
    given = {"flags": {}, "env": {}, "file": None}
    for layer, timeout in ((higher, 7.0), (lower, 3.0)):
        where = CONFIG_LAYERS[layer]
        if where == "flags":
            given["flags"] = {"timeout": timeout}
        elif where == "env":
            given["env"] = {"DEBATE_TUI_TIMEOUT": str(timeout)}
        else:
            given["file"] = {"limits": {"timeout": timeout}}
    resolved = resolve_config(Path("config.toml"), given["file"], given["env"], given["flags"])
    assert resolved.config.limits.timeout == 7.0
    assert resolved.origins[("limits", "timeout")].layer == higher


def _generation(places: dict[str, float]) -> Generation:
    reply = {place: ReplySettings(temperature=value) for place, value in places.items()}
    return Generation(temperature=places.get("generation"), typed=reply.get("typed", ReplySettings()),
                      models={"m": reply["models"]} if "models" in reply else {},
                      roles={"critic": reply["roles"]} if "roles" in reply else {})


@pytest.mark.parametrize(("higher", "lower"), list(combinations(REPLY, 2)))
def test_an_agent_s_reply_setting_comes_from_the_higher_place(higher, lower):
    agent = AgentSpec(name="Critic", role="critic", model="m")
    assert _generation({higher: 0.7, lower: 0.3}).temperature_for(agent) == 0.7


def test_tables_merge_key_by_key_the_higher_layer_winning_each_key() -> None:
    typed, configured = {"structured": "off"}, {"structured": "on", "timeout": 30}
    assert merged_tables({Layer.TYPED: typed, Scope.GENERATION: configured}, REPLY_ORDER) == {
        "structured": "off", "timeout": 30}
    assert merged_tables({Layer.TYPED: {}, Scope.GENERATION: configured}, REPLY_ORDER) == configured


def test_a_run_wide_generation_setting_typed_beats_the_configured_one() -> None:
    choices = Choices(generation={"structured": "off"}, generation_defaults={"structured": "on", "timeout": 30})
    assert run_wide(choices) == {"structured": "off", "timeout": 30}
