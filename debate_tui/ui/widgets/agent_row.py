"""One row of the setup form's Agents section: the agent's name and role, its persona, its model.

A widget only: which agents there are, and what they are called, the session
factory decides (the setup screen asks it and rebuilds the rows). The row shows
the name the agent will carry on the debate screen: a ChatEval referee given
the "plain" persona is called "Plain" there, and the form says so before.
"""

from __future__ import annotations

from collections.abc import Mapping

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Input, Label, Select

from debate_tui.ui.literal import literal
from debate_tui.ui.widgets.described import described


class AgentRow(Horizontal):
    """One agent: its name and role, a persona to replace the default, a model to replace the default."""

    def __init__(self, name: str, role: str, default: str | None, chosen: str | None, personas: Mapping[str, str],
                 model: str, placeholder: str, shown: str | None = None) -> None:
        """`name`: the agent's name before any persona is picked, which the choices are keyed by; `shown`: the
        name it will carry with the persona picked (a referee is named after its persona); `personas`: name ->
        its one-line description."""
        super().__init__(classes="form-row agent-row")
        self.agent_name = name
        self.shown = shown or name
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
        name = Label(self._title(), classes="form-label agent-name")
        name.tooltip = self._renamed()
        yield name
        yield Select(described(self.personas), value=self.chosen if self.chosen in self.personas
                     else Select.NULL, prompt="no persona", classes="agent-persona", compact=True)
        yield Input(self.model, placeholder=self.placeholder, classes="agent-model", compact=True)

    def read(self) -> tuple[str | None, str]:
        """The persona and model shown; a row still mounting (agents rebuilt twice in a row) shows its own."""
        if not (selects := self.query(Select)) or not (inputs := self.query(Input)):
            return (self.chosen if self.chosen in self.personas else None), self.model.strip()
        persona = selects.first().value
        return (None if persona is Select.NULL else str(persona)), inputs.first().value.strip()

    def show_name(self, shown: str) -> None:
        """The name the agent will carry, now that its persona (or another row's) changed."""
        self.shown = shown
        if labels := self.query(".agent-name"):
            label = labels.first(Label)
            label.update(self._title())
            label.tooltip = self._renamed()

    def _title(self) -> Content:
        role = self.role.replace("_", " ")
        return literal(self.shown if self.shown.lower().startswith(role) else f"{self.shown} ({role})")

    def _renamed(self) -> str | None:
        if self.shown == self.agent_name:
            return None
        return f"Named after its persona on the debate screen (was {self.agent_name})"
