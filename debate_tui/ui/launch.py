"""From `debate-tui [tui] ...` arguments to what the app opens with.

The same task options as `run`: with `--autostart` they are validated exactly
as `run` validates them and the debate starts at once; without it they
prefill the setup screen over the remembered choices.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from debate_tui.cli.task_args import build_session, build_task, sessions_dir
from debate_tui.config import effective_config
from debate_tui.cli.task_flags import OPTION_KEYS
from debate_tui.domain import Session
from debate_tui.llm import DEMO_MODEL
from debate_tui.ui.opening import read_texts, top_of_form
from debate_tui.ui.state import SetupChoices, UiState


@dataclass
class Launch:
    state: UiState = field(default_factory=UiState)
    choices: SetupChoices = field(default_factory=SetupChoices)
    texts: dict[str, str] = field(default_factory=dict)
    criteria_spec: str | None = None
    """`--criteria` as typed: names are ticked, a TOML file is loaded, once the catalog is there."""
    session: Session | None = None
    """Set with --autostart: the session to run at once."""
    demo: bool = True
    step: bool = False
    sessions_dir: Path | None = None
    notes: list[str] = field(default_factory=list)
    theme: str | None = None
    """The theme the configuration names (config.toml, DEBATE_TUI_THEME): over the remembered one."""


def launch_from_args(args: argparse.Namespace, state: UiState, texts: dict[str, str] | None = None) -> Launch:
    """Raises InputError (one-line reason) when a given file cannot be read or --autostart is invalid.

    `texts`: the files already read for the first frame (`Opening`), not read twice (stdin cannot be).
    """
    notes: list[str] = []
    launch = Launch(state=state, step=bool(getattr(args, "step", False)), sessions_dir=sessions_dir(args),
                    notes=notes, criteria_spec=getattr(args, "criteria", None))
    if getattr(args, "autostart", False):
        choice = build_session(args, build_task(args, notes.append), notes.append)
        launch.session, launch.demo = choice.session, choice.demo
    launch.texts = read_texts(args, notes.append) if texts is None else texts
    launch.theme = effective_config(args).theme
    launch.choices = prefill(state.setup, args)
    return launch


def prefill(remembered: SetupChoices, args: argparse.Namespace) -> SetupChoices:
    """Arguments given on the command line win over remembered choices."""
    choices = remembered.model_copy(deep=True)
    top = top_of_form(args, choices.protocol, choices.text_path)
    if top.protocol != choices.protocol:
        choices.protocol, choices.options, choices.agent_models, choices.agent_personas = top.protocol, {}, {}, {}
    choices.text_path = top.text_path
    choices.options.update((key, getattr(args, key)) for key in OPTION_KEYS if getattr(args, key, None) is not None)
    if getattr(args, "tie_breaker", False):
        choices.options["tie_breaker"] = "agent"
    if getattr(args, "demo", False):
        choices.model = DEMO_MODEL
    elif getattr(args, "model", None):
        choices.model = args.model
    if getattr(args, "api_base", None):
        choices.api_base = args.api_base
    for name in ("max_reply_tokens", "temperature"):
        if getattr(args, name, None) is not None:
            setattr(choices, name, str(getattr(args, name)))
    if getattr(args, "structured", None):
        choices.structured = True
    return choices
