"""What the TUI remembers between runs: the last setup choices and the theme.

Kept in `ui-state.json` in the config directory, apart from the user's own
`config.toml`. The setup is the run's `Choices` as saved by `Choices.saved`;
a file written before that (generation settings as typed strings, the text
file beside them) is read as it is now. Reading tolerates a missing or
corrupt file (the defaults are used); writing is done off the event loop by
`save_state`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_serializer, field_validator

from debate_tui.choices import Choices
from debate_tui.domain import Criterion  # noqa: F401  (`Choices.custom_criteria` for pydantic: see the end)
from debate_tui.safefile import write_problem
from debate_tui.store import write_atomic
from debate_tui.ui.locations import ui_state_path
from debate_tui.ui.opening import DEFAULT_THEME, read_remembered

OLD_GENERATION = ("max_reply_tokens", "temperature", "structured")
"""Generation settings an older ui-state.json kept beside the other choices, as typed."""


class UiState(BaseModel):
    theme: str = DEFAULT_THEME
    setup: Choices = Field(default_factory=Choices)
    """The last choices the setup screen started a run with."""

    @field_validator("setup", mode="before")
    @classmethod
    def _as_now(cls, setup: Any) -> Any:
        return upgraded(setup)

    @field_serializer("setup")
    def _saved(self, setup: Choices) -> dict[str, Any]:
        return setup.saved()


def upgraded(setup: Any) -> Any:
    """A setup as saved now, from one saved before it was a `Choices`: an empty string was "not set"."""
    if not isinstance(setup, dict) or not any(key in setup for key in (*OLD_GENERATION, "text_path")):
        return setup
    setup = {key: value for key, value in setup.items() if value not in ("", False)}
    generation = {key: setup.pop(key) for key in OLD_GENERATION if key in setup}
    text_path = setup.pop("text_path", None)
    return {**setup, "generation": generation, "inputs": {"text": text_path} if text_path else {}}


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


UiState.model_rebuild()  # `Choices` names Criterion only for type checkers: it is known here
