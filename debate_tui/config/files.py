"""Reading the configuration's sources: config.toml's bytes and tables, and the DEBATE_TUI_* variables."""

from __future__ import annotations

import os

from debate_tui.readfile import parse_config, read_config_bytes
from debate_tui.settings import PREFIX

__all__ = ["environment", "parse_file", "read_config_bytes"]

parse_file = parse_config
"""config.toml's bytes and tables are read by `readfile`, pydantic-free, which the TUI's first frame uses too."""


def environment() -> dict[str, str]:
    """This process's DEBATE_TUI_* variables."""
    return {name: value for name, value in os.environ.items() if name.startswith(PREFIX)}
