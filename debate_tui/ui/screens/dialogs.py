"""Small modal dialogs: a remark, a score override, a human decision, a confirmation, an export.

Each returns its answer through `dismiss`; none touches the engine: the
screen that opened it decides what to do with the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Select, Static

from debate_tui.domain import Criterion
from debate_tui.report.exports import DEFAULT, FORMATS, ExportFormat, FileFormat
from debate_tui.ui.literal import literal
from debate_tui.ui.widgets.footer import AppFooter

BUTTONS_IN_A_ROW = 5
"""A decision on a 1-10 scale wraps into two rows instead of running off an 80-column screen."""
T = TypeVar("T")


class Dialog(ModalScreen[T], Generic[T]):
    """Escape cancels every dialog (answering None); the frame and title are shared."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel", tooltip="Close without doing anything")]
    DEFAULT_CLASSES = "dialog"
    BOX_CLASSES = "dialog-box"

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(classes=self.BOX_CLASSES):
            yield Label(literal(self.title_text, "bold"), classes="dialog-title")
            yield from self.body()
            yield Static("", classes="dialog-error")

    def body(self) -> ComposeResult:
        yield from ()

    def complain(self, message: str) -> None:
        self.query_one(".dialog-error", Static).update(literal(message, "$error"))

    def action_cancel(self) -> None:
        self.dismiss(None)


class FormDialog(Dialog[T]):
    """A form: Enter in any box, or its first button, submits; its button whose id ends in "-cancel" cancels."""

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if str(event.button.id).endswith("-cancel"):
            self.dismiss(None)
        else:
            self.submit()

    def on_input_submitted(self) -> None:
        self.submit()

    def submit(self) -> None:
        """Dismiss with the answer, or `complain` and stay open."""
        raise NotImplementedError


class TextPrompt(Dialog[str | None]):
    """One line of text, e.g. the remark injected into the next turn."""

    def __init__(self, title: str, placeholder: str = "") -> None:
        super().__init__(title)
        self.placeholder = placeholder

    def body(self) -> ComposeResult:
        yield Input(placeholder=self.placeholder, id="prompt-input")
        yield Label("Enter to send, Escape to cancel", classes="dialog-help")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            self.complain("Type something, or press Escape to cancel.")
            return
        self.dismiss(text)


@dataclass(frozen=True)
class OverrideAnswer:
    criterion: str
    value: float | str
    """A score on the criterion's scale, or of a pair the verdict "1", "2" or "0" (original numbering)."""
    why: str


PAIR_VERDICTS = ("1", "2", "0")


class OverrideDialog(FormDialog[OverrideAnswer | None]):
    """Replace a criterion's score, or a pair's verdict; the reason is recorded with who and when."""

    def __init__(self, criteria: list[Criterion], *, pairwise: bool = False) -> None:
        super().__init__("Override the verdict" if pairwise else "Override a score")
        self.criteria = {c.name: c for c in criteria}
        self.pairwise = pairwise

    def body(self) -> ComposeResult:
        options = [(f"{c.name} ({c.scale})", c.name) for c in self.criteria.values()]
        yield Select(options, value=options[0][1], allow_blank=False, id="override-criterion")
        if self.pairwise:
            yield Input(placeholder="1 = text 1 better, 2 = text 2 better, 0 = tie", id="override-value",
                        restrict="[120]?", max_length=1)
        else:
            yield Input(placeholder="new score", id="override-value", type="number")
        yield Input(placeholder="why (recorded in the report)", id="override-why")
        with Horizontal(classes="dialog-buttons"):
            yield Button("Override", variant="warning", id="override-ok")
            yield Button("Cancel", id="override-cancel")

    def submit(self) -> None:
        name = str(self.query_one("#override-criterion", Select).value)
        criterion = self.criteria[name]
        raw = self.query_one("#override-value", Input).value.strip()
        value = self._verdict(raw) if self.pairwise else self._score(raw, criterion)
        if value is None:
            return
        why = self.query_one("#override-why", Input).value.strip()
        if not why:
            self.complain("Say why: the reason goes into the report with your name.")
            return
        self.dismiss(OverrideAnswer(name, value, why))

    def _verdict(self, raw: str) -> str | None:
        if raw not in PAIR_VERDICTS:
            self.complain("The verdict is 1 (text 1 better), 2 (text 2 better) or 0 (a tie).")
            return None
        return raw

    def _score(self, raw: str, criterion: Criterion) -> float | None:
        try:
            value = float(raw)
        except ValueError:
            self.complain(f"The score must be a number on {criterion.name}'s scale {criterion.scale}.")
            return None
        if not criterion.low <= value <= criterion.high:
            self.complain(f"{value:g} is outside {criterion.name}'s scale {criterion.scale}.")
            return None
        return value


class DecisionDialog(Dialog[str | None]):
    """The run waits for a person: ScaleEval without consensus, a DEBATE tie. None means stop.

    Only an aimed key decides: a digit names an option, the arrows move between the buttons and
    Enter presses the one they reached. Nothing has focus when it opens, so the space or Enter a
    person was pressing to step the run cannot decide by accident.
    """

    AUTO_FOCUS = ""  # nothing: see above
    BINDINGS = [
        Binding("f1", "app.help", "Help", id="decision.help", tooltip="Every key of this dialog, and the protocols"),
        Binding("r", "report", "Report", id="decision.report",
                tooltip="Read the report so far (every answer, the transcript) before deciding"),
        *(Binding(digit, f"pick('{digit}')", "Decide", show=False, id=f"decision.{digit}",
                  tooltip=f"Answer {digit}, where {digit} is one of the options") for digit in "0123456789"),
        Binding("left,up", "move(-1)", "Previous", show=False, id="decision.previous"),
        Binding("right,down,tab", "move(1)", "Next", show=False, id="decision.next"),
        Binding("shift+tab", "move(-1)", show=False),
    ]

    def __init__(self, question: str, options: tuple[str, ...], labels: tuple[str, ...] = (),
                 details: tuple[tuple[str, str], ...] = (),
                 escape: str = "Escape stops the run (it can be resumed)",
                 report: Callable[[], None] | None = None) -> None:
        """`report`: what `r` opens (the report of the session the question is about), over this dialog."""
        super().__init__("Your decision is needed")
        self.escape = escape
        self.report = report
        self.question = question
        self.options = options
        self.labels = labels if len(labels) == len(options) else ()
        self.details = details
        self._at: int | None = None
        """The button the arrows reached; None until an arrow is pressed."""

    def body(self) -> ComposeResult:
        yield Static(literal(self.question), classes="dialog-question")
        for label, text in self.details:
            yield Static(Content.assemble((f"{label}: ", "bold"), literal(text)), classes="dialog-detail")
        with Grid(classes="dialog-buttons decision-buttons") as buttons:
            buttons.styles.grid_size_columns = min(len(self.options), BUTTONS_IN_A_ROW)
            for index, option in enumerate(self.options):
                shown = f"{option} · {self.labels[index]}" if self.labels else option
                yield Button(literal(shown), id=f"decide-{index}", variant="primary")
        keys = "/".join(o for o in self.options if len(o) == 1 and o.isdigit())
        yield Static((f"{keys} decide{'s' if '/' not in keys else ''}, " if keys else "")
                     + f"arrows move, Enter presses the highlighted button; {'r the report, ' if self.report else ''}"
                     f"F1 help; {self.escape}", classes="dialog-help")

    def action_report(self) -> None:
        if self.report is not None:
            self.report()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        index = int(str(event.button.id).removeprefix("decide-"))
        self.dismiss(self.options[index])

    def action_pick(self, digit: str) -> None:
        if digit in self.options:
            self.dismiss(digit)

    def action_move(self, step: int) -> None:
        """Counted here, not read from the focus: focus moves after the key is handled, so two arrows pressed
        quickly (one read of the terminal) moved only once and Enter then pressed the wrong button."""
        buttons = list(self.query(Button))
        at = self._at if self._at is not None else (-1 if step > 0 else 0)
        self._at = (at + step) % len(buttons)
        buttons[self._at].focus()


class ConfirmDialog(Dialog[bool | None]):
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="dialog.yes", tooltip="Confirm"),
        Binding("n", "answer(False)", "No", id="dialog.no", tooltip="Do not do it"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__("Please confirm")
        self.question = question

    def body(self) -> ComposeResult:
        yield Static(literal(self.question), classes="dialog-question")
        with Horizontal(classes="dialog-buttons"):
            yield Button("Yes (y)", variant="error", id="confirm-yes")
            yield Button("No (n)", id="confirm-no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


@dataclass(frozen=True)
class ExportAnswer:
    path: Path
    format: ExportFormat


class FormatChoice(RadioSet):
    """The export formats: the arrows choose one (not only highlight it); Enter exports (the dialog's key).

    A plain RadioSet's Down only moved a highlight and its Enter pressed the format already chosen, so after a
    click on a format neither seemed to do anything."""

    BINDINGS = [
        Binding("down,right", "step(1)", "Next format", show=False, id="export.next-format"),
        Binding("up,left", "step(-1)", "Previous format", show=False, id="export.previous-format"),
    ]

    def action_step(self, step: int) -> None:
        buttons = list(self.query(RadioButton))
        buttons[(self.pressed_index + step) % len(buttons)].value = True


class ExportDialog(FormDialog[ExportAnswer | None]):
    """Where to write the report and in which format (`report.exports.FORMATS`); switching format switches the
    suffix, and the line under the path says in words which format goes to which full path.

    The path has the focus with the cursor at its end (nothing selected: a first key typed used to erase it),
    so Enter exports at once to the name offered."""

    AUTO_FOCUS = "#export-path"
    BINDINGS = [Binding("enter", "export", "Export", id="export.export", priority=True,
                        tooltip="Write the file named here (on a button: press it)"),
                # The arrows choose a format wherever the focus is, as the dialog's line says: with the focus in
                # the path (where it starts) Down did nothing. Left and right stay the path's cursor keys.
                Binding("down", "format(1)", "Next format", show=False, id="export.next-format"),
                Binding("up", "format(-1)", "Previous format", show=False, id="export.previous-format")]

    def __init__(self, default_stem: Path) -> None:
        super().__init__("Export the report")
        self.stem = default_stem

    def body(self) -> ComposeResult:
        with FormatChoice(id="export-format"):
            for fmt in FORMATS:
                yield RadioButton(self._label(fmt, fmt is DEFAULT), value=fmt is DEFAULT, id=f"fmt-{fmt.name}")
        yield Input(str(self.stem.with_suffix(DEFAULT.suffix)), id="export-path", select_on_focus=False)
        yield Static("", id="export-where", classes="dialog-question")
        with Horizontal(classes="dialog-buttons"):
            yield Button("Export", variant="primary", id="export-ok")
            yield Button("Cancel", id="export-cancel")
        yield Label("Enter exports; arrows choose a format; Escape cancels", classes="dialog-help")

    def compose(self) -> ComposeResult:
        """The box, and below it this dialog's own footer over the screen's (which showed the report's keys)."""
        yield from super().compose()
        yield AppFooter()

    def on_mount(self) -> None:
        self._show_where()

    @staticmethod
    def _label(fmt: FileFormat, chosen: bool) -> str:
        """The chosen format is marked in text, not only by the button's colour."""
        return f"{fmt.label}{'  ◀ chosen' if chosen else ''}"

    @property
    def chosen(self) -> FileFormat:
        return next(fmt for fmt in FORMATS if self.query_one(f"#fmt-{fmt.name}", RadioButton).value)

    @property
    def format(self) -> ExportFormat:
        return self.chosen.name

    def _path(self) -> Path:
        return Path(self.query_one("#export-path", Input).value.strip() or self.stem).expanduser()

    def _show_where(self) -> None:
        self.query_one("#export-where", Static).update(literal(f"{self.chosen.label.split(' (')[0]} to "
                                                               f"{self._path().absolute()}"))

    def on_radio_set_changed(self) -> None:
        chosen = self.chosen
        for fmt in FORMATS:
            self.query_one(f"#fmt-{fmt.name}", RadioButton).label = self._label(fmt, fmt is chosen)
        path_input = self.query_one("#export-path", Input)
        path_input.value = str(self._path().with_suffix(chosen.suffix))
        path_input.cursor_position = len(path_input.value)
        self._show_where()

    def on_input_changed(self) -> None:
        self._show_where()

    def action_format(self, step: int) -> None:
        self.query_one(FormatChoice).action_step(step)

    def action_export(self) -> None:
        """Enter exports from the path and the formats alike (a RadioSet's own Enter pressed the format already
        chosen); on a button it presses that button, so Enter on Cancel cancels."""
        if isinstance(self.focused, Button):
            self.focused.press()
        else:
            self.submit()

    def submit(self) -> None:
        raw = self.query_one("#export-path", Input).value.strip()
        if not raw:
            self.complain("Give a file path.")
            return
        self.dismiss(ExportAnswer(Path(raw).expanduser(), self.format))


ALL_AGENTS = "*"
"""The fork dialog's choice of whom a new model is for: every agent."""


@dataclass(frozen=True)
class ForkAnswer:
    """What a fork changes after turn `at`: a remark, a model (for `agent`, or ALL_AGENTS), or neither."""

    at: int
    remark: str
    model: str
    agent: str = ALL_AGENTS


class ForkDialog(FormDialog[ForkAnswer | None]):
    """Where to cut (the picked turn, editable) and what to change from the next turn on.

    The remark has the focus, so typing it and pressing Enter forks after the picked turn."""

    AUTO_FOCUS = "#fork-remark"
    BOX_CLASSES = "dialog-box fork-box"

    def __init__(self, at: int, total: int, picked: str, agents: list[tuple[str, str]]) -> None:
        """`picked`: the turn `at` in words; `agents`: (name, model) of each agent."""
        super().__init__("Fork: what if you had stepped in")
        self.at, self.total, self.picked = at, total, picked
        self.agents = agents

    def body(self) -> ComposeResult:
        models = ", ".join(dict.fromkeys(model for _, model in self.agents))
        yield Static(literal(f"Keep the first {self.at} of {self.total} turns ({self.picked}); the change applies "
                             f"from the next."), classes="dialog-question", id="fork-what")
        with Horizontal(classes="fork-row"):
            yield Label("after turn", classes="fork-label")
            yield Input(str(self.at), id="fork-at", type="integer", placeholder=f"0-{self.total}")
            yield Input(placeholder="a remark for the next turn (optional)", id="fork-remark")
        with Horizontal(classes="fork-row"):
            yield Input(placeholder=f"another model (now {models})", id="fork-model")
            yield Select([("every agent", ALL_AGENTS), *((f"{name} only", name) for name, _ in self.agents)],
                         value=ALL_AGENTS, allow_blank=False, id="fork-agent")
        with Horizontal(classes="dialog-buttons"):
            yield Button("Fork", variant="primary", id="fork-ok")
            yield Button("Cancel", id="fork-cancel")
        yield Label("Enter forks; the fork plays in its own panes, the original stays",
                    classes="dialog-help")

    def submit(self) -> None:
        raw = self.query_one("#fork-at", Input).value.strip()
        if not raw.isdigit() or not 0 <= int(raw) <= self.total:
            self.complain(f"Fork after a turn from 0 (before the first) to {self.total}.")
            return
        self.dismiss(ForkAnswer(int(raw), self.query_one("#fork-remark", Input).value.strip(),
                                self.query_one("#fork-model", Input).value.strip(),
                                str(self.query_one("#fork-agent", Select).value)))
