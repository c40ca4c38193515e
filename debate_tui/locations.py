"""Where debate-tui's configuration and shipped data live; light enough for the TUI's first frame (no pydantic)."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "debate-tui"


def config_dir() -> Path:
    """DEBATE_TUI_CONFIG_DIR when set (tests point it at a temporary directory), else the platform's."""
    configured = os.environ.get("DEBATE_TUI_CONFIG_DIR")
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return platformdirs.user_config_path(APP_NAME)


def state_dir() -> Path:
    """DEBATE_TUI_STATE_DIR when set, else the platform's state folder (~/.local/state/debate-tui on Linux):
    what the program remembers for itself, apart from what a person edits (config) or keeps (data)."""
    configured = os.environ.get("DEBATE_TUI_STATE_DIR")
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return platformdirs.user_state_path(APP_NAME)


def config_path() -> Path:
    return config_dir() / "config.toml"


def shipped(folder: str) -> Path:
    """A folder shipped inside the package (debate_tui/data: `themes`, `sessions`), found beside this module.

    pip installs the package as plain files, so the folder is a real directory
    wherever the package went (a venv, --user, --prefix, --target). Not through
    importlib.resources, which found the same path and took 1.1 ms of the TUI's
    start-up to import.
    """
    return Path(__file__).with_name("data") / folder


def examples_dir() -> Path:
    """Example sessions recorded with the demo model, one per protocol."""
    return shipped("sessions")
