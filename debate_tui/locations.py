"""Where debate-tui's configuration lives; light enough for the TUI's first frame (no pydantic)."""

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


def config_path() -> Path:
    return config_dir() / "config.toml"
