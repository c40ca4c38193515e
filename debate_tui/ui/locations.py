"""Where the TUI keeps its files: its config directory, themes and the example sessions."""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_NAME = "debate-tui"
REPO = Path(__file__).resolve().parents[2]
"""The source checkout; `themes/` and `sessions/` live beside the package there."""


def shipped(folder: str) -> Path:
    """`themes/` or `sessions/`: beside the package in a checkout, else where a wheel installs them (data-files)."""
    in_checkout = REPO / folder
    return in_checkout if in_checkout.is_dir() else Path(sys.prefix) / "share" / APP_NAME / folder


def config_dir() -> Path:
    """DEBATE_TUI_CONFIG_DIR when set (tests point it at a temporary directory), else the platform's."""
    configured = os.environ.get("DEBATE_TUI_CONFIG_DIR")
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return platformdirs.user_config_path(APP_NAME)


def ui_state_path() -> Path:
    """The TUI's own remembered choices, kept apart from the user-edited config.toml."""
    return config_dir() / "ui-state.json"


def config_toml_path() -> Path:
    return config_dir() / "config.toml"


def theme_dirs() -> list[Path]:
    """Shipped themes first, then the user's own (a user theme may replace a shipped one by name)."""
    return [shipped("themes"), config_dir() / "themes"]


def examples_dir() -> Path:
    """Example sessions recorded with the demo model, one per protocol."""
    return shipped("sessions")
