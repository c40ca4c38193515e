"""Everything of the setup form below the text box: the other texts, options, models, agents, criteria.

Mounted just after the first frame (see `SetupDetails`); the setup screen
fills the option form, the agent rows and the criteria list once the catalog
is loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Collapsible, Input, Label, Select, Static

from debate_tui.choices import STRUCTURED, Choices
from debate_tui.inputs import InputError
from debate_tui.llm import DEMO_MODEL
from debate_tui.settings import REPLY, SETTINGS
from debate_tui.ui.opening import INPUT_LABELS
from debate_tui.ui.widgets.marked import MarkedSelectionList
from debate_tui.ui.widgets.text_box import TextBox

if TYPE_CHECKING:
    from debate_tui.domain import Criterion

EXTRA_INPUTS = ("text_b", "source", "context")
"""The texts besides the one judged, each in its own box, shown when the protocol takes it."""
GENERATION_INPUTS = {setting.name: f"#{setting.form}" for setting in REPLY}
"""Generation settings typed in the form: field -> its input (the form field each declares, `settings.REPLY`)."""
STRUCTURED_SETTING = SETTINGS["structured"]
"""The answer format, offered as a choice of `STRUCTURED_CHOICES` (its prompt: the setting's placeholder)."""
STRUCTURED_CHOICES = [("auto: if free text fails", "auto"), ("on: every answer", "on"),
                      ("off: free text only", "off")]
"""`--structured`'s values, as the form offers them."""


def _structured_shown(value: object) -> str | object:
    """The form's entry for a `structured` choice (none made: the configuration's)."""
    return next((name for name, given in STRUCTURED.items() if value is not None and given == value
                 and type(given) is type(value)), Select.NULL)


class SetupDetails(Vertical):
    """Everything below the text box, mounted just after the first frame.

    The whole form at once (about 150 widgets) tripled the time to the first
    frame; the part a person reads first comes up at once, this follows.
    """

    def __init__(self, choices: Choices, texts: dict[str, str]) -> None:
        super().__init__(id="setup-details")
        self.choices = choices
        self.texts = texts

    def compose(self) -> ComposeResult:
        choices = self.choices
        for key in EXTRA_INPUTS:
            with Vertical(id=f"input-{key}", classes="extra-input"):
                yield Label(INPUT_LABELS[key], classes="section")
                yield TextBox(self.texts.get(key, ""), id=f"text-{key}", soft_wrap=True, show_line_numbers=False)
        yield Label("Options", classes="section")
        yield Vertical(Static("Loading protocols…", classes="dim"), id="options")
        yield Label("Models", classes="section")
        with Horizontal(classes="form-row"):
            yield Label("model", classes="form-label")
            yield Input(choices.model or "", placeholder=f"{DEMO_MODEL}, or e.g. gpt-4o-mini, ollama/llama3.1",
                        id="model", compact=True)
        with Horizontal(classes="form-row"):
            yield Label("API base", classes="form-label")
            yield Input(choices.api_base or "", placeholder="optional, e.g. http://localhost:11434", id="api-base",
                        compact=True)
        for setting in REPLY:
            with Horizontal(classes="form-row"):
                yield Label(setting.form_label, classes="form-label")
                yield Input(_typed(choices, setting.name), placeholder=setting.placeholder, type=setting.input_type,
                            id=setting.form, compact=True)
        with Horizontal(classes="form-row"):
            yield Label(STRUCTURED_SETTING.form_label, classes="form-label")
            yield Select(STRUCTURED_CHOICES, value=_structured_shown(choices.generation.get("structured")),
                         prompt=STRUCTURED_SETTING.placeholder, id=STRUCTURED_SETTING.form, compact=True)
        yield Label("Agents", classes="section")
        yield Static("", id="agents-note")
        yield Vertical(id="agents")
        yield Label("Criteria", classes="section", id="criteria-title")
        yield MarkedSelectionList[str](id="criteria")
        with Horizontal(classes="form-row"):
            yield Input(placeholder="criteria TOML file", id="criteria-path", compact=True)
            yield Button("Load", id="load-criteria", compact=True)
        with Collapsible(title="Write a criterion", id="criterion-editor"):
            with Horizontal(classes="form-row"):
                yield Input(placeholder="name", id="new-name", compact=True)
                yield Input("1", placeholder="low", type="number", id="new-low", classes="narrow", compact=True)
                yield Input("5", placeholder="high", type="number", id="new-high", classes="narrow", compact=True)
            yield Input(placeholder="description: what a high score means", id="new-description", compact=True)
            yield Button("Add criterion", id="add-criterion", compact=True)


    def written_criterion(self) -> Criterion:
        """The criterion written in "Write a criterion"; InputError with the one-line reason it cannot be."""
        from pydantic import ValidationError

        from debate_tui.domain import Criterion

        name = self.query_one("#new-name", Input).value.strip()
        description = self.query_one("#new-description", Input).value.strip()
        if not name or "/" in name:
            raise InputError("A criterion needs a name (without '/').")
        if not description:
            raise InputError(f"Describe {name}: the judges read the description.")
        try:
            return Criterion(name=name, description=description,
                             low=float(self.query_one("#new-low", Input).value or "nan"),
                             high=float(self.query_one("#new-high", Input).value or "nan"))
        except ValidationError as exc:
            raise InputError(exc.errors()[0]["msg"].removeprefix("Value error, ")) from None
        except ValueError:
            raise InputError(f"criterion {name!r}: low and high must be numbers") from None

    def clear_written(self) -> None:
        """Ready for the next criterion: its scale stays, the name and description go."""
        for wid in ("#new-name", "#new-description"):
            self.query_one(wid, Input).value = ""

def _typed(choices: Choices, key: str) -> str:
    """A generation setting as the form's input shows it: typed there, or given as a flag."""
    value = choices.generation.get(key)
    return "" if value is None else str(value)
