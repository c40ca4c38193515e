"""Where the TUI keeps its files: its remembered state and themes."""

from __future__ import annotations

import shutil
from pathlib import Path

from debate_tui.locations import config_dir, shipped, state_dir

UI_STATE = "ui-state.json"
_moved = False


def ui_state_path() -> Path:
    """The TUI's own remembered choices, in the state folder (apart from the user-edited config.toml).

    Before, it sat in the config folder: the first call moves it from there once, unless the state folder has
    one already. A move that fails leaves the old file where it was, and it is used from there."""
    global _moved
    path = state_dir() / UI_STATE
    if _moved:
        return path
    old = config_dir() / UI_STATE
    if old.is_file() and not path.exists():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(old, path)
        except OSError:
            return old
    _moved = True
    return path


def theme_dirs() -> list[Path]:
    """Shipped themes first, then the user's own (a user theme may replace a shipped one by name)."""
    return [shipped("themes"), config_dir() / "themes"]
