"""What the TUI remembers between runs: the last setup choices and the theme.

Kept in `ui-state.json` in the config directory, apart from the user's own
`config.toml`. Reading tolerates a missing or corrupt file (the defaults are
used); writing is done off the event loop by `save_state`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from debate_tui.choices import Choices
from debate_tui.domain import Criterion
from debate_tui.llm import DEMO_MODEL
from debate_tui.safefile import write_problem
from debate_tui.store import write_atomic
from debate_tui.ui.locations import ui_state_path
from debate_tui.ui.opening import DEFAULT_THEME, read_remembered


class SetupChoices(BaseModel):
    """Everything the setup screen asks for except the texts themselves."""

    protocol: str = ""
    """Empty: `protocol` in the configuration."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Protocol options by field name, as typed (validated by the session factory against the protocol's spec)."""
    criteria: list[str] | None = None
    """Built-in criterion names, and names of `custom_criteria` entries that are ticked; None: the protocol's."""
    personas: str | None = None
    """`--personas` as given: cycled over the agents that take one, under `agent_personas`."""
    custom_criteria: list[Criterion] = Field(default_factory=list)
    """Criteria loaded from a TOML file or typed in the small editor."""
    model: str = ""
    """Default model for every agent; empty means DEBATE_TUI_MODEL or the offline demo."""
    api_base: str = ""
    max_reply_tokens: str = ""
    """Tokens one reply may have, as typed; empty: `[generation]` in config.toml, else the per-role default."""
    temperature: str = ""
    """As typed; empty: `[generation]` in config.toml, else 0 for judging turns."""
    structured: bool = False
    """Ask each answer line as JSON where the model supports it (or `[generation] structured` in config.toml)."""
    agent_models: dict[str, str] = Field(default_factory=dict)
    """Per-agent model, overriding `model`."""
    agent_personas: dict[str, str] = Field(default_factory=dict)
    """Per-agent persona name, overriding the protocol's default persona."""
    text_path: str = ""
    """The last text file loaded, offered again."""


    def to_choices(self) -> Choices:
        """The form's choices for the session factory, which checks them as it checks `run`'s flags."""
        return Choices(
            protocol=self.protocol or None, criteria=self.criteria, custom_criteria=list(self.custom_criteria),
            personas=self.personas, options=dict(self.options), model=self.model.strip() or None,
            api_base=self.api_base.strip() or None, demo=self.model.strip() == DEMO_MODEL,
            agent_models=dict(self.agent_models), agent_personas=dict(self.agent_personas),
            generation={**{key: typed for key in ("max_reply_tokens", "temperature")
                           if (typed := getattr(self, key).strip())},
                        **({"structured": True} if self.structured else {})})


class UiState(BaseModel):
    theme: str = DEFAULT_THEME
    setup: SetupChoices = Field(default_factory=SetupChoices)


def load_state(path: Path | None = None) -> UiState:
    """The remembered state, or the defaults when there is none or it cannot be read."""
    return state_from(read_remembered(path))


def state_from(remembered: dict[str, Any]) -> UiState:
    """The state read by `read_remembered`, validated; the defaults when it is not valid."""
    try:
        return UiState.model_validate(remembered)
    except ValidationError:
        return UiState()


async def save_state(state: UiState, path: Path | None = None) -> str | None:
    """Serialise now (a consistent snapshot), write in a thread (never on the loop); the one-line reason when
    it cannot be written (a full disk, a read-only home): the app goes on, it only forgets."""
    text = state.model_dump_json(indent=1)
    target = path or ui_state_path()
    try:
        await asyncio.to_thread(write_atomic, target, text)
    except OSError as exc:
        return write_problem(exc, target, "or point DEBATE_TUI_CONFIG_DIR at a writable directory") + (
            "; choices are not remembered")
    return None
