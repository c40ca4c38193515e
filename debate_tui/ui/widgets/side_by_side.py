"""Two columns of turns, each beside its twin, with full-width labels between them: the compare view's debates.

A Line API widget: the rows are rendered to lines once per width, and Textual asks only for the lines
on screen. As widgets (a Static per turn in a row per pair) two 300-turn debates took 11.6 s to show
on this 2-core machine, and the screen answered no key meanwhile. Text is rendered as Rich `Text`
after `inert`, so a model's reply is never markup and never reaches the terminal as a control sequence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from debate_tui.textsafe import inert

GAP = 2
"""Blank columns between the two sides."""
NONE = "(no turn here)"


@dataclass(frozen=True)
class Cell:
    """One side of a row: a heading line, then the text exactly as written."""

    heading: str
    body: str = ""


@dataclass(frozen=True)
class Pair:
    """A row: A's cell on the left, B's on the right (None: that side has nothing here)."""

    a: Cell | None
    b: Cell | None


@dataclass(frozen=True)
class Label:
    """A full-width line between rows: a round's number, or where the debates part (`kind` "parts")."""

    text: str
    kind: str = "round"


Row = Pair | Label


class SideBySide(Widget):
    COMPONENT_CLASSES = {"side-by-side--heading", "side-by-side--round", "side-by-side--parts", "side-by-side--none"}
    DEFAULT_CSS = """
    SideBySide { height: auto; padding: 0 1; }
    SideBySide > .side-by-side--heading { color: $accent; text-style: bold; }
    SideBySide > .side-by-side--round { color: $text-muted; }
    SideBySide > .side-by-side--parts { color: $warning; text-style: bold; }
    SideBySide > .side-by-side--none { color: $text-muted; text-style: italic; }
    """

    def __init__(self, rows: list[Row], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows = rows
        self._width = -1
        self._lines: list[Strip] = []
        self._starts: list[int] = []
        """The first line of each row, for the width drawn."""

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._width = -1  # a new theme: draw again with its styles

    def lines(self, width: int) -> list[Strip]:
        """Every line at `width` (the content's), rendered once per width."""
        if width != self._width:
            self._width, self._lines, self._starts = width, *self._draw(max(width, 2 + GAP))
        return self._lines

    def row_line(self, index: int) -> int:
        """The line where row `index` starts (as last drawn)."""
        self.lines(self.content_region.width)
        return self._starts[index]

    def text_lines(self) -> list[str]:
        """The lines as a person reads them, at the width shown (for tests and the curious)."""
        return [strip.text.rstrip() for strip in self.lines(self.content_region.width)]

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"side-by-side--{name}")

    def _lines_of(self, text: Text, width: int) -> list[Strip]:
        options = self.app.console_options.update(highlight=False, width=width, height=None)
        return [Strip(line, width).extend_cell_length(width) for line in
                self.app.console.render_lines(text, options, style=self.rich_style, new_lines=False)]

    def _cell(self, cell: Cell | None, width: int) -> list[Strip]:
        if cell is None:
            return self._lines_of(Text(NONE, style=self._style("none")), width)
        text = Text(inert(cell.heading), style=self._style("heading"))
        if cell.body:
            text.append("\n" + inert(cell.body))
        return self._lines_of(text, width)

    def _draw(self, width: int) -> tuple[list[Strip], list[int]]:
        column = (width - GAP) // 2
        gap, blank = Strip.blank(GAP), Strip.blank(width)
        lines: list[Strip] = []
        starts: list[int] = []
        for row in self.rows:
            starts.append(len(lines))
            if isinstance(row, Label):
                lines += self._lines_of(Text(inert(row.text), style=self._style(row.kind)), width)
                continue
            left, right = self._cell(row.a, column), self._cell(row.b, column)
            for index in range(max(len(left), len(right))):
                pieces = [left[index] if index < len(left) else Strip.blank(column), gap,
                          right[index] if index < len(right) else Strip.blank(column)]
                lines.append(Strip.join(pieces).extend_cell_length(width))
            lines.append(blank)
        return lines, starts

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines(width))

    def render_line(self, y: int) -> Strip:
        lines = self.lines(self.content_region.width)
        return lines[y] if 0 <= y < len(lines) else Strip.blank(self.content_region.width)
