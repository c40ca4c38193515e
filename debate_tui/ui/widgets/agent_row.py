"""One row of the setup form's Agents section: the agent's name and role, its persona, its model.

A widget only: which agents there are, and what they are called, the session
factory decides (the setup screen asks it and rebuilds the rows).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Input, Label, Select

from debate_tui.ui.literal import literal


class AgentRow(Horizontal):
    """One agent: its name and role, a persona to replace the default, a model to replace the default."""

    def __init__(self, name: str, role: str, default: str | None, chosen: str | None, personas: list[str],
                 model: str, placeholder: str) -> None:
        super().__init__(classes="form-row agent-row")
        self.agent_name = name
        self.role = role
        self.default = default
        """The persona the protocol gives this agent; choosing it again is no override."""
        self.chosen = chosen or default
        self.personas = personas
        self.model = model
        self.placeholder = placeholder

    @property
    def made_from(self) -> tuple:
        """What the row was made from: a rebuild that would make the same row keeps this one."""
        return self.agent_name, self.role, self.default, self.chosen, self.personas, self.model, self.placeholder

    def compose(self) -> ComposeResult:
        yield Label(literal(f"{self.agent_name} ({self.role.replace('_', ' ')})"), classes="form-label")
        yield Select([(p, p) for p in self.personas], value=self.chosen if self.chosen in self.personas
                     else Select.NULL, prompt="no persona", classes="agent-persona", compact=True)
        yield Input(self.model, placeholder=self.placeholder, classes="agent-model", compact=True)

    def read(self) -> tuple[str | None, str]:
        """The persona and model shown; a row still mounting (agents rebuilt twice in a row) shows its own."""
        if not (selects := self.query(Select)) or not (inputs := self.query(Input)):
            return (self.chosen if self.chosen in self.personas else None), self.model.strip()
        persona = selects.first().value
        return (None if persona is Select.NULL else str(persona)), inputs.first().value.strip()
