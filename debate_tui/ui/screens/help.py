"""The help screen (F1 or ?): every key of the screen below it with its binding id, and the protocols.

The ids are what the `[keymap]` table of config.toml remaps, so the list doubles as
the reference for it. Nothing here is written by hand: the bindings are read from
the screen the person was on, the protocols from the registry.
"""

from __future__ import annotations

from itertools import zip_longest
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Label, Static

from debate_tui.locations import config_dir
from debate_tui.protocols import PROTOCOLS
from debate_tui.ui.literal import literal

KEYMAP_EXAMPLE = '[keymap]\n"debate.pause" = "ctrl+space"'
COPYING = ("Drag with the mouse over a pane's or the report's text to select it, then ctrl+c copies it: to the "
           "system clipboard where there is one, else through the terminal (OSC 52). Dragging with shift held "
           "down uses the terminal's own selection instead.")


def screen_keys(screen: Screen) -> list[tuple[str, str, str, str]]:
    """(keys, what, id, tooltip) for every binding with an id active on `screen`, the screen's own first."""
    app = screen.app
    found: dict[str, tuple[list[str], Binding]] = {}
    for active in screen.active_bindings.values():
        binding = active.binding
        if binding.id:
            found.setdefault(binding.id, ([], binding))[0].append(app.get_key_display(binding))
    rows = [(" ".join(dict.fromkeys(keys)), binding.description or binding.action, binding_id, binding.tooltip)
            for binding_id, (keys, binding) in found.items()]
    return sorted(rows, key=lambda row: row[2].startswith("app."))


def screen_name(screen: Screen) -> str:
    return getattr(screen, "help_name", "") or type(screen).__name__.removesuffix("Screen").lower()


class HelpScreen(ModalScreen[None]):
    """Escape, F1 or ? closes it."""

    DEFAULT_CLASSES = "dialog"
    BINDINGS = [Binding("escape,f1,question_mark,q", "dismiss", "Close", id="help.close", tooltip="Close the help")]

    def __init__(self, below: Screen) -> None:
        super().__init__()
        self.keys = screen_keys(below)
        self.name_below = screen_name(below)

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog-box help-box"):
            yield Label(literal(f"Keys on the {self.name_below} screen", "bold"), classes="dialog-title")
            yield KeyRows([(keys, Content.assemble(literal(what, "bold"), (f"  {binding_id}", "dim"), "\n",
                                                   literal(tooltip)))
                           for keys, what, binding_id, tooltip in self.keys])
            yield Static(literal("Remap any key by its id in config.toml:\n" + KEYMAP_EXAMPLE, "italic"),
                         classes="help-note")
            yield Label(literal("Mouse and colours", "bold"), classes="dialog-title")
            yield KeyRows([("drag", literal(COPYING)), ("theme", literal(themes_line(self.app.theme)))])
            yield Label(literal("Protocols", "bold"), classes="dialog-title")
            yield KeyRows([(name, literal(line)) for name, line in PROTOCOLS.items()])
            yield Label("Escape, F1 or ? closes this; ctrl+p lists every command", classes="dialog-help")


class KeyRows(Widget):
    """Keys in a column of their own, each text beside its key: a long text wraps under itself (a hanging
    indent), not back under the keys.

    One widget drawing its rows as lines. A grid of two Statics a row (44 widgets on the debate screen's
    help) spent most of F1's time before the first frame creating, styling and arranging them."""

    DEFAULT_CSS = "KeyRows { height: auto; }"
    KEYS = 11
    """The keys' column, in cells: the texts start after it and a blank one."""

    def __init__(self, rows: list[tuple[str, Content]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows = rows
        self._wrapped: tuple[int, list[Content]] = (-1, [])
        """The lines at one width: the layout measures them and the frame draws them, at the same width."""

    def lines(self, width: int) -> list[Content]:
        """The rows at `width`: each key right-aligned in its column, its text wrapped beside it."""
        if self._wrapped[0] != width:
            self._wrapped = (width, self._wrap(width))
        return self._wrapped[1]

    def _wrap(self, width: int) -> list[Content]:
        lines, indent = [], Content(" " * (self.KEYS + 1))
        for key, text in self.rows:
            keys = Content.styled(key, "bold $accent").wrap(self.KEYS, align="right")
            texts = text.wrap(max(1, width - self.KEYS - 1))
            for key_line, text_line in zip_longest(keys, texts):
                lines.append((indent if key_line is None else key_line.right(self.KEYS) + " ")
                             + (text_line or Content("")))
        return lines

    def render(self) -> Content:
        return Content("\n").join(self.lines(self.size.width))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines(width))


def themes_line(current: str) -> str:
    return (f"The colours are the {current} theme. ctrl+p, then \"Switch theme\", picks another (debate-dark, "
            "debate-paper or Textual's own), and it is remembered; theme = \"NAME\" in config.toml, or "
            f"DEBATE_TUI_THEME, wins over it. Your own themes go in {config_dir() / 'themes'}.")
