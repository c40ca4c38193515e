"""Where the TUI keeps its files: its config directory, themes and the example sessions."""

from __future__ import annotations

import sys
from pathlib import Path

from debate_tui.locations import APP_NAME, config_dir
REPO = Path(__file__).resolve().parents[2]
"""The source checkout; `themes/` and `sessions/` live beside the package there."""


def shipped(folder: str) -> Path:
    """`themes/` or `sessions/`: beside the package in a checkout, else where a wheel installs them (data-files)."""
    in_checkout = REPO / folder
    return in_checkout if in_checkout.is_dir() else Path(sys.prefix) / "share" / APP_NAME / folder


def ui_state_path() -> Path:
    """The TUI's own remembered choices, kept apart from the user-edited config.toml."""
    return config_dir() / "ui-state.json"


def theme_dirs() -> list[Path]:
    """Shipped themes first, then the user's own (a user theme may replace a shipped one by name)."""
    return [shipped("themes"), config_dir() / "themes"]


def examples_dir() -> Path:
    """Example sessions recorded with the demo model, one per protocol."""
    return shipped("sessions")
