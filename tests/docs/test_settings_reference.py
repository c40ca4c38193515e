"""The settings reference of docs/configuration.md is the one the declaration gives, and every setting the
declaration has is one the configuration takes (a variable and a flag of `config show` set it)."""

from __future__ import annotations

import pytest

from debate_tui.cli import build_parser
from debate_tui.cli.reference import SETTINGS_END, SETTINGS_PAGE, SETTINGS_START, readme_block
from debate_tui.config import resolve_current
from debate_tui.settings import SETTINGS, reference_table


def test_the_settings_reference_is_the_declaration():
    block = readme_block(SETTINGS_PAGE.read_text(encoding="utf-8"), SETTINGS_START, SETTINGS_END)
    assert block == reference_table(), "run: python -m debate_tui.cli.reference --write"
    assert all(f"`{setting.env}`" in block for setting in SETTINGS.values())


VALUES = {int: "7", float: "0.7"}


@pytest.mark.parametrize("name", [n for n, s in SETTINGS.items() if s.kind in VALUES])
def test_each_declared_number_is_taken_from_its_variable_and_its_flag_and_held_to_its_bounds(name, monkeypatch):
    setting = SETTINGS[name]
    value = "1" if setting.kind is int else VALUES[float]
    monkeypatch.setenv(setting.env, value)
    resolved = resolve_current({})
    node = resolved.config
    for part in setting.toml:
        node = getattr(node, part)
    assert node == setting.kind(value) and str(resolved.origins[setting.toml]) == f"environment variable {setting.env}"
    args = build_parser("config").parse_args(["config", "show", setting.flag, value])
    assert getattr(args, name) == value
    from debate_tui.inputs import ConfigError

    with pytest.raises(ConfigError, match=f"flag {setting.flag}: {'.'.join(setting.toml)}"):
        resolve_current({name: "-1"})
