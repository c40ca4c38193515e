"""Reading the configuration's sources: config.toml's bytes and tables, and the DEBATE_TUI_* variables."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from debate_tui.inputs import ConfigError, InputError
from debate_tui.readfile import MissingFile, decode, parse_toml, read_bytes
from debate_tui.settings import PREFIX


def read_config_bytes(path: Path) -> bytes | None:
    """The file's bytes, None when there is none; bounded and checked (`readfile`: DEBATE_TUI_MAX_TOML_BYTES,
    never a device or FIFO)."""
    try:
        return read_bytes(path, "toml")
    except MissingFile:
        return None
    except InputError as exc:
        raise ConfigError(str(exc)) from None


def parse_file(path: Path, raw: bytes | None) -> dict[str, Any] | None:
    """The file's tables, or None when there is no file."""
    if raw is None:
        return None
    try:
        return parse_toml(decode(raw, str(path)), str(path))
    except InputError as exc:
        raise ConfigError(str(exc)) from None


def environment() -> dict[str, str]:
    """This process's DEBATE_TUI_* variables."""
    return {name: value for name, value in os.environ.items() if name.startswith(PREFIX)}
