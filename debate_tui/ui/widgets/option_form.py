"""A form generated from a protocol's pydantic `Options` model, so a new protocol needs no UI code.

Literal fields become a Select, booleans a Checkbox, numbers a typed Input,
fields whose name ends in `persona` a Select of the known personas (each with
its one-line description), other strings an Input. Values come back as typed
(validation is the protocol's).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Label, Select

from debate_tui.ui.literal import literal, one_line
from debate_tui.ui.widgets.described import described
from debate_tui.ui.widgets.marked import MarkedCheckbox

UNLIMITED = 100_000
"""No cut: a field's help is wrapped by the form, only its line breaks are the source's."""


def _choices(info: FieldInfo) -> tuple[Any, ...] | None:
    return typing.get_args(info.annotation) if typing.get_origin(info.annotation) is typing.Literal else None


def field_widget(name: str, info: FieldInfo, value: Any, personas: Mapping[str, str]) -> Widget:
    """The input for one option, showing `value` (the remembered or default one); `personas`: name -> its line."""
    wid = f"opt-{name}"
    choices = _choices(info)
    if choices is not None:
        return Select([(str(c), c) for c in choices], value=value if value in choices else info.default,
                      allow_blank=False, id=wid, compact=True)
    if name.endswith("persona") and personas:
        current = value if value in personas else (info.default if info.default in personas else next(iter(personas)))
        return Select(described(personas), value=current, allow_blank=False, id=wid, compact=True)
    if info.annotation is bool:
        return MarkedCheckbox(value=bool(value), id=wid, compact=True)
    kind: Literal["integer", "number", "text"] = (
        "integer" if info.annotation is int else "number" if info.annotation is float else "text")
    placeholder = "random" if name == "seed" else "default" if info.default is None else str(info.default)
    return Input("" if value is None else str(value), type=kind, id=wid, placeholder=placeholder, compact=True)


def _read(widget: Widget, info: FieldInfo) -> Any:
    if isinstance(widget, Select):
        return widget.value
    if isinstance(widget, Checkbox):
        return widget.value
    raw = widget.value.strip() if isinstance(widget, Input) else ""
    if raw == "":
        return None
    try:
        return int(raw) if info.annotation is int else float(raw) if info.annotation is float else raw
    except ValueError:
        return raw  # the protocol's validation names the field and the problem


class OptionForm(Vertical):
    """One labelled row per option field."""

    def __init__(self, model: type[BaseModel], values: dict[str, Any], personas: Mapping[str, str],
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model = model
        self.values = values
        self.personas = personas

    def compose(self) -> ComposeResult:
        for name, info in self.model.model_fields.items():
            value = self.values.get(name, None if name == "seed" else info.default)
            with Horizontal(classes="form-row"):
                yield Label(literal(name.replace("_", " ")), classes="form-label")
                yield field_widget(name, info, value, self.personas)
                if info.description:
                    # a docstring's own line breaks made ragged lines ("Off / by / default")
                    yield Label(literal(one_line(info.description, UNLIMITED), "dim"), classes="form-help")

    def read(self) -> dict[str, Any]:
        """The typed values; a blank number is left out so the protocol's default applies."""
        values: dict[str, Any] = {}
        for name, info in self.model.model_fields.items():
            value = _read(self.query_one(f"#opt-{name}"), info)
            if value is not None:
                values[name] = value
        return values
