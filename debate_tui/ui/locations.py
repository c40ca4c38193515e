"""Where the TUI keeps its files: its remembered state and themes."""

from __future__ import annotations

from pathlib import Path

from debate_tui.locations import config_dir, shipped


def ui_state_path() -> Path:
    """The TUI's own remembered choices, kept apart from the user-edited config.toml."""
    return config_dir() / "ui-state.json"


def theme_dirs() -> list[Path]:
    """Shipped themes first, then the user's own (a user theme may replace a shipped one by name)."""
    return [shipped("themes"), config_dir() / "themes"]
