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

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from debate_tui.choices import Choices
from debate_tui.inputs import InputError, read_text
from debate_tui.locations import config_path
from debate_tui.readfile import read_json, read_toml
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
class TuiRequest:
    """What the command line asks of the TUI, made by the `tui` command from its flags (no argparse here)."""

    choices: Choices = field(default_factory=Choices)
    """The task flags, unchecked: the session factory checks them as it does for `run`."""
    texts: dict[str, str] = field(default_factory=dict)
    """Input name -> the file given for it, or '-' for stdin."""
    config_flags: dict[str, Any] = field(default_factory=dict)
    """Flags that override the configuration (--model, --sessions-dir, ...), by name."""
    autostart: bool = False
    step: bool = False
    sessions_dir: str | None = None
    history: dict[str, Any] = field(default_factory=dict)
    """--max-history-tokens and --condense as given (`engine.condense.history_state` reads them)."""
    policy: str | None = None
    """`--policy POLICY.json`: judge the text up a trust ladder (implies starting at once)."""


@dataclass
class Opening:
    """The first screen of `debate-tui [tui]` without --autostart, before anything is validated."""

    request: TuiRequest
    remembered: dict[str, Any]
    """ui-state.json as read, unvalidated: `ui.state.state_from` validates it after the first frame."""
    theme: str
    top: TopOfForm
    texts: dict[str, str]
    notes: list[str]
    """Warnings to show (e.g. a text file's invalid UTF-8 replaced)."""


def read_texts(refs: dict[str, str], warn: Callable[[str], None]) -> dict[str, str]:
    """The texts given as files (or '-', stdin); raises InputError with a one-line reason."""
    return {key: read_text(ref, flag, warn) for key, flag in TEXT_ARGS.items() if (ref := refs.get(key))}


def top_of_form(request: TuiRequest, protocol: str, text_path: str) -> TopOfForm:
    """The command line wins over the remembered protocol and text file, and those over config.toml's protocol."""
    given = request.texts.get("text")
    return TopOfForm(request.choices.protocol or protocol or configured("protocol") or TopOfForm.protocol,
                     given if given and given != "-" else text_path)


def read_opening(request: TuiRequest) -> Opening:
    """Raises InputError (one-line reason) when a given text file cannot be read."""
    remembered = read_remembered()
    setup = remembered.get("setup")
    setup = setup if isinstance(setup, dict) else {}
    notes: list[str] = []
    return Opening(
        request=request,
        remembered=remembered,
        theme=configured("theme") or _text(remembered, "theme", DEFAULT_THEME),
        top=top_of_form(request, _text(setup, "protocol", ""), _text(setup, "text_path", "")),
        texts=read_texts(request.texts, notes.append),
        notes=notes,
    )


def configured(setting: str) -> str | None:
    """A top-level setting (theme, protocol) as DEBATE_TUI_<NAME> or config.toml gives it, read plainly.

    For the first frame only; the config is validated right after it, and a file that cannot
    be used is reported then.
    """
    if named := os.environ.get(f"DEBATE_TUI_{setting.upper()}"):
        return named
    try:
        named = read_toml(config_path()).get(setting)
    except InputError:
        return None
    return named if isinstance(named, str) and named else None


def read_remembered(path: Path | None = None) -> dict[str, Any]:
    """ui-state.json as a table, unvalidated; empty when there is none or it is not a JSON table."""
    try:
        data = read_json(path or ui_state_path(), "ui-state")
    except InputError:
        return {}
    return data if isinstance(data, dict) else {}


def _text(table: dict[str, Any], key: str, default: str) -> str:
    value = table.get(key)
    return value if isinstance(value, str) else default
