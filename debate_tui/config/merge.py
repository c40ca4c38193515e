"""The configuration's layers merged into one validated `Config`, each value's origin kept as data.

Each setting of `settings.SETTINGS` is resolved on its own, the first layer of `precedence.ORDER` that sets it
winning (a flag, its DEBATE_TUI_* variable, config.toml; unset: the built-in default); a bad value raises
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
from debate_tui.precedence import ORDER, Layer, first, ranked
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


def given(file_data: Mapping[str, Any], env: Mapping[str, str],
          flags: Mapping[str, Any]) -> Iterator[tuple[Origin, tuple[str, ...], Any]]:
    """Each setting given outside the file where it wins over the file: its flag (by argparse destination), else
    its variable (an empty one counts as unset), unless the file's layer is the higher."""
    for setting in SETTINGS.values():
        offered = {Layer.TYPED: (Origin("flag", setting.flag), flags.get(setting.name)),
                   Layer.ENVIRONMENT: (Origin("environment", setting.env), env.get(setting.env) or None),
                   Layer.CONFIG_FILE: (FILE, _get(file_data, setting.toml))}
        won = first(ranked(offered, ORDER), is_set=lambda pair: pair[1] is not None)
        if won is not None and won[0] is not FILE:
            yield won[0], setting.toml, won[1]


def resolve(path: Path, file_data: Mapping[str, Any] | None, env: Mapping[str, str],
            flags: Mapping[str, Any]) -> Resolved:
    """Merge the layers and validate the result; ConfigError lists every problem."""
    refuse_secrets(path, file_data or {})
    data: dict[str, Any] = copy.deepcopy(dict(file_data or {}))
    origins: dict[tuple[str, ...], Origin] = {loc: FILE for loc, _ in _leaves(data)}
    for origin, loc, value in given(file_data or {}, env, flags):
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


def _get(data: Mapping[str, Any], loc: tuple[str, ...]) -> Any:
    """A nested value; None where the file does not set it."""
    node: Any = data
    for key in loc:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


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
