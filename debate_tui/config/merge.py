"""The configuration's layers merged into one validated `Config`, each value's origin kept as data.

    flag  >  DEBATE_TUI_* environment variable  >  config.toml  >  built-in default

Each setting of `settings.SETTINGS` is resolved on its own, the first that is set winning; a bad value raises
ConfigError naming the setting and where it came from (the file, the variable or the flag).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from debate_tui.config.schema import Config, setting_name
from debate_tui.config.secrets import refuse_secrets
from debate_tui.inputs import ConfigError
from debate_tui.settings import FILE, SETTINGS, Origin


@dataclass(frozen=True)
class Resolved:
    """A configuration with where each of its values came from, for `config show` and error messages."""

    config: Config
    path: Path
    """The config file, whether or not it exists."""
    exists: bool
    origins: dict[tuple[str, ...], Origin]
    """Setting path -> where its value came from (the file, a variable, a flag); absent: the default."""


def given(env: Mapping[str, str], flags: Mapping[str, Any]) -> Iterator[tuple[Origin, tuple[str, ...], Any]]:
    """The values given outside the file, the lower first: each variable (an empty one counts as unset), then
    each flag (by argparse destination)."""
    for setting in SETTINGS.values():
        if value := env.get(setting.env):
            yield Origin("environment", setting.env), setting.toml, value
    for setting in SETTINGS.values():
        if (value := flags.get(setting.name)) is not None:
            yield Origin("flag", setting.flag), setting.toml, value


def resolve(path: Path, file_data: Mapping[str, Any] | None, env: Mapping[str, str],
            flags: Mapping[str, Any]) -> Resolved:
    """Merge the layers, highest last, and validate the result; ConfigError lists every problem."""
    refuse_secrets(path, file_data or {})
    data: dict[str, Any] = copy.deepcopy(dict(file_data or {}))
    origins: dict[tuple[str, ...], Origin] = {loc: FILE for loc, _ in _leaves(data)}
    for origin, loc, value in given(env, flags):
        if _put(data, loc, value):
            origins[loc] = origin
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError("\n".join(_problem(path, error, origins) for error in exc.errors())) from None
    return Resolved(config, path, file_data is not None, origins)


def _leaves(table: Mapping[str, Any], loc: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _leaves(value, (*loc, key))
        else:
            yield (*loc, key), value


def _put(data: dict[str, Any], loc: tuple[str, ...], value: Any) -> bool:
    """Set a nested value; False when the file made a parent something other than a table (its error wins)."""
    node = data
    for key in loc[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            return False
    node[loc[-1]] = value
    return True


def _problem(path: Path, error: Mapping[str, Any], origins: Mapping[tuple[str, ...], Origin]) -> str:
    loc = tuple(str(part) for part in error["loc"] if part != "[key]")
    origin = origins.get(loc) or next((o for p, o in origins.items() if p[: len(loc)] == loc), FILE)
    message = "unknown setting" if error["type"] == "extra_forbidden" else error["msg"].removeprefix("Value error, ")
    return f"{path if origin.kind == 'file' else origin}: {setting_name(loc)}: {message}"
