"""What the TUI's first frame shows, read without pydantic: the theme and the top of the setup form.

Importing pydantic and building the models of the remembered state and of the
config takes longer than a bare Textual app needs for its whole first frame.
So `run_app` draws the first frame from this quick read of `ui-state.json`
(plain JSON, values taken only where they are strings) and of the texts given;
right after it, the app validates the same data (`ui.state.state_from`), builds
the `Launch` (where a config.toml that cannot be used is reported, as before),
and the form shows the validated choices.
"""

from __future__ import annotations

import argparse
import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debate_tui.inputs import read_text
from debate_tui.locations import config_path
from debate_tui.ui.locations import ui_state_path

TEXT_ARGS = {"text": "--text", "text_b": "--text-b", "source": "--source", "context": "--context"}
INPUT_LABELS = {
    "text": "Text to judge",
    "text_b": "Second answer (pairwise)",
    "source": "Source or question",
    "context": "Context or facts",
}
DEFAULT_THEME = "debate-dark"


@dataclass(frozen=True)
class TopOfForm:
    """The protocol and text file to offer, arguments winning over remembered choices (`prefill` merges the same
    way); the first frame shows the protocol, the file row comes with the form's other controls."""

    protocol: str = "debate"
    text_path: str = ""


@dataclass
class Opening:
    """The first screen of `debate-tui [tui]` without --autostart, before anything is validated."""

    args: argparse.Namespace
    remembered: dict[str, Any]
    """ui-state.json as read, unvalidated: `ui.state.state_from` validates it after the first frame."""
    theme: str
    top: TopOfForm
    texts: dict[str, str]
    notes: list[str]
    """Warnings to show (e.g. a text file's invalid UTF-8 replaced)."""


def read_texts(args: argparse.Namespace, warn) -> dict[str, str]:
    """The texts given as files (or '-', stdin); raises InputError with a one-line reason."""
    return {key: read_text(ref, flag, warn) for key, flag in TEXT_ARGS.items() if (ref := getattr(args, key, None))}


def top_of_form(args: argparse.Namespace, protocol: str, text_path: str) -> TopOfForm:
    """Arguments given on the command line win over the remembered protocol and text file."""
    given = getattr(args, "text", None)
    return TopOfForm(getattr(args, "protocol", None) or protocol, given if given and given != "-" else text_path)


def read_opening(args: argparse.Namespace) -> Opening:
    """Raises InputError (one-line reason) when a given text file cannot be read."""
    remembered = read_remembered()
    setup = remembered.get("setup")
    setup = setup if isinstance(setup, dict) else {}
    defaults = TopOfForm()
    notes: list[str] = []
    return Opening(
        args=args,
        remembered=remembered,
        theme=configured_theme() or _text(remembered, "theme", DEFAULT_THEME),
        top=top_of_form(args, _text(setup, "protocol", defaults.protocol), _text(setup, "text_path", defaults.text_path)),
        texts=read_texts(args, notes.append),
        notes=notes,
    )


def configured_theme() -> str | None:
    """The theme DEBATE_TUI_THEME or config.toml names, over the one last picked in the TUI.

    Read plainly for the first frame; the config is validated right after it, and a file that cannot
    be used is reported then.
    """
    if named := os.environ.get("DEBATE_TUI_THEME"):
        return named
    try:
        named = tomllib.loads(config_path().read_text(encoding="utf-8")).get("theme")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return named if isinstance(named, str) and named else None


def read_remembered(path: Path | None = None) -> dict[str, Any]:
    """ui-state.json as a table, unvalidated; empty when there is none or it is not a JSON table."""
    try:
        data = json.loads((path or ui_state_path()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _text(table: dict[str, Any], key: str, default: str) -> str:
    value = table.get(key)
    return value if isinstance(value, str) else default
