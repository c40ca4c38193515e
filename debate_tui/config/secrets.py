"""Keys never live in config.toml: a setting whose name or value looks like a key is refused before anything
else is read, naming the setting (never the value) and what to do instead."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from debate_tui.config.schema import setting_name
from debate_tui.inputs import ConfigError
from debate_tui.redact import redact

_SECRET_NAME = re.compile(r"(?i)(^|_)(api_?key|key|token|secret|password|passwd|credentials?)$")


def refuse_secrets(path: Path, table: Mapping[str, Any]) -> None:
    """ConfigError listing every setting of the file that looks like a key."""
    found = sorted(_secrets(table))
    if found:
        raise ConfigError("\n".join(
            f"{path}: {redact(setting_name(loc))}: {why}. Keys never go in the config file: keep the key in an "
            f"environment variable and name that variable, e.g. api_key_env = \"OPENAI_API_KEY\" "
            f"in a [models.\"<model>\"] table" for loc, why in found))


def _secrets(table: Mapping[str, Any], loc: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """Settings whose name or value looks like a key, with the reason (never the value)."""
    for key, value in table.items():
        here = (*loc, str(key))
        values = value if isinstance(value, list) else [value]
        if redact(str(key)) != str(key):
            yield here, "this name looks like a key"
        elif isinstance(value, dict):
            yield from _secrets(value, here)
        elif loc[:1] != ("keymap",) and _SECRET_NAME.search(str(key)):
            yield here, "a key setting is not allowed"
        elif any(isinstance(item, str) and redact(item) != item for item in values):
            yield here, "the value looks like a key"
