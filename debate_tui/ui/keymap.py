"""User key remapping: the `[keymap]` table of config.toml maps binding ids to keys.

    [keymap]
    "debate.pause" = "ctrl+space"
    "debate.next" = "n,space"

Absent file or table: no change. A malformed file is reported, not fatal.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from debate_tui.inputs import InputError
from debate_tui.locations import config_path
from debate_tui.readfile import MissingFile, read_toml


def load_keymap(path: Path | None = None) -> tuple[dict[str, str], str | None]:
    """The keymap and, when the file could not be used, a one-line reason to show."""
    path = path or config_path()
    try:
        data = read_toml(path)
    except MissingFile:
        return {}, None
    except InputError as exc:
        return {}, f"keymap ignored: {exc}"
    table = data.get("keymap", {})
    if not isinstance(table, dict):
        return {}, f"{path}: [keymap] must be a table of binding id = \"keys\""
    keymap = {str(k): v for k, v in table.items() if isinstance(v, str) and v.strip()}
    bad = sorted(set(table) - set(keymap))
    return keymap, (f"{path}: keymap entries ignored (not key strings): {', '.join(bad)}" if bad else None)


def apply_keymap(app: App) -> None:
    """Give a small app (review, meta) the user's keymap; a file that cannot be used is a warning toast."""
    keymap, problem = load_keymap()
    app.set_keymap(keymap)
    if problem:
        app.notify(problem, severity="warning")
