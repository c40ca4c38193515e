"""What the TUI's first frame shows, read without pydantic: the theme and the top of the setup form.

Importing pydantic and building the models of the remembered state and of the
config takes longer than a bare Textual app needs for its whole first frame.
So `run_app` draws the first frame from this quick read of `ui-state.json`
(plain JSON, values taken only where they are strings), of config.toml and of
the texts given, resolved by the same rule as the whole form
(`choices.resolve`); right after it, the app validates the same data
(`ui.state.state_from`), builds the `Launch` (where a config.toml that cannot
be used is reported, as before), and the form shows the validated choices.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from debate_tui.choices import COMMAND_LINE, DEFAULT, DEFAULT_PROTOCOL, REMEMBERED, Choices, Source, resolve
from debate_tui.inputs import InputError, read_text
from debate_tui.locations import config_path
from debate_tui.readfile import read_config, read_json
from debate_tui.settings import Origin, env_var
from debate_tui.ui.locations import ui_state_path

TEXT_ARGS = {"text": "--text", "text_b": "--text-b", "source": "--source", "context": "--context"}
INPUT_LABELS = {
    "text": "Text to judge",
    "text_b": "Second answer (pairwise)",
    "source": "Source or question",
    "context": "Context or facts",
}
FORM_FIELDS = {key: f"the '{label}' box" for key, label in INPUT_LABELS.items()}
"""How the form gives each text, for a refusal ("give the second with the 'Second answer (pairwise)' box")."""
DEFAULT_THEME = "debate-dark"


@dataclass
class TuiRequest:
    """What the command line asks of the TUI, made by the `tui` command from its flags (no argparse here)."""

    choices: Choices = field(default_factory=Choices)
    """The task flags, unchecked: the session factory checks them as it does for `run`; `inputs`: the files
    given for the texts ('-': stdin)."""
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
    choices: Choices
    """The protocol and text file the first frame shows (`first_choices`); the rest comes validated after it."""
    texts: dict[str, str]
    notes: list[str]
    """Warnings to show (e.g. a text file's invalid UTF-8 replaced)."""


def read_texts(refs: Mapping[str, str], warn: Callable[[str], None]) -> dict[str, str]:
    """The texts given as files (or '-', stdin); raises InputError with a one-line reason."""
    return {key: read_text(ref, flag, warn) for key, flag in TEXT_ARGS.items() if (ref := refs.get(key))}


def first_choices(request: TuiRequest, setup: dict[str, Any]) -> Choices:
    """The protocol and text file to offer, by the one precedence rule (`choices.resolve`) over a plain read
    of each source; the first frame shows the protocol, the file row comes with the form's other controls."""
    inputs = setup.get("inputs")
    text_path = _text(setup, "text_path", "") or _text(inputs if isinstance(inputs, dict) else {}, "text", "")
    return resolve(Source.of(COMMAND_LINE, request.choices),
                   Source(str(Origin("environment", env_var("protocol"))), _given(os.environ.get(env_var("protocol")))),
                   Source(f"config.toml ({config_path()})", _given(configured_in_file("protocol"))),
                   Source(REMEMBERED, {**_given(_text(setup, "protocol", "")), "inputs": _given(text_path, "text")}),
                   Source(DEFAULT, {"protocol": DEFAULT_PROTOCOL}),
                   config_newer=config_is_newer(config_path(), ui_state_path()))


def config_is_newer(config_file: Path, state_file: Path) -> bool:
    """Whether config.toml was saved after the remembered setup: what the person set there last then wins."""
    try:
        written = config_file.stat().st_mtime
    except OSError:
        return False
    try:
        return written > state_file.stat().st_mtime
    except OSError:
        return True


def read_opening(request: TuiRequest) -> Opening:
    """Raises InputError (one-line reason) when a given text file cannot be read."""
    remembered = read_remembered()
    setup = remembered.get("setup")
    setup = setup if isinstance(setup, dict) else {}
    from debate_tui.envfile import notice

    notes: list[str] = [read] if (read := notice()) is not None else []  # the working directory's .env: said
    return Opening(
        request=request,
        remembered=remembered,
        theme=configured("theme") or _text(remembered, "theme", DEFAULT_THEME),
        choices=first_choices(request, setup),
        texts=read_texts(request.choices.inputs, notes.append),
        notes=notes,
    )


def configured(setting: str) -> str | None:
    """A top-level setting (theme) as DEBATE_TUI_<NAME> or config.toml gives it, read plainly.

    For the first frame only; the config is validated right after it, and a file that cannot
    be used is reported then.
    """
    return os.environ.get(env_var(setting)) or configured_in_file(setting)


def configured_in_file(setting: str) -> str | None:
    """A top-level setting as config.toml gives it, read as the configuration reads it (`readfile.read_config`);
    None when the file or the value cannot be used (reported once the configuration is validated)."""
    try:
        named = (read_config(config_path()) or {}).get(setting)
    except InputError:
        return None
    return named if isinstance(named, str) and named else None


def _given(value: str | None, key: str = "protocol") -> dict[str, str]:
    """`{key: value}` when the value is set: a source that sets nothing else."""
    return {key: value} if value else {}


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
