"""Our own themes, read from TOML files so a user can add theirs without code.

Each file holds the fields of `textual.theme.Theme` (name, primary, background,
dark, ... and a `[variables]` table). A file that cannot be used is skipped
with a reason, so one bad theme never stops the app.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from textual.theme import Theme

from debate_tui.readfile import read_toml

THEME_FIELDS = {f.name for f in fields(Theme)}


def read_theme(path: Path) -> Theme:
    data = read_toml(path)
    unknown = set(data) - THEME_FIELDS
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(sorted(unknown))}")
    if "name" not in data or "primary" not in data:
        raise ValueError("a theme needs at least 'name' and 'primary'")
    return Theme(**data)


def load_themes(dirs: list[Path]) -> tuple[list[Theme], list[str]]:
    """Themes from every `*.toml` in `dirs`, in order, and the problems met on the way."""
    themes: list[Theme] = []
    problems: list[str] = []
    for folder in dirs:
        for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
            try:
                themes.append(read_theme(path))
            except (ValueError, TypeError) as exc:  # readfile's FileError is a ValueError
                problems.append(f"theme {path.name} skipped: {exc}")
    return themes, problems
