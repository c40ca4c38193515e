"""The evaluated text with every located error painted in its type's colour, and a legend.

One Static per line of the text, so that jumping to an error is a
`scroll_to_widget` on its line, whatever the wrapping. Offsets are taken on
the raw text; control characters are made visible per segment, after the
spans are cut, so a highlight never drifts.
"""

from __future__ import annotations

import itertools
from bisect import bisect_right
from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from debate_tui.domain import ErrorSpan
from debate_tui.textsafe import inert

PALETTE = ("#E06C75", "#E5C07B", "#61AFEF", "#C678DD", "#56B6C2", "#98C379", "#D19A66", "#F0A0C0")


def type_colours(errors: list[ErrorSpan]) -> dict[str, str]:
    """One colour per error type, in order of first appearance (stable for a given report)."""
    colours: dict[str, str] = {}
    for error in errors:
        colours.setdefault(error.type, PALETTE[len(colours) % len(PALETTE)])
    return colours


def legend(errors: list[ErrorSpan], colours: dict[str, str]) -> Content:
    if not errors:
        return Content.styled("No located errors in this report.", "dim")
    parts: list[Content | tuple[str, str] | str] = [("Error types: ", "bold")]
    for kind, colour in colours.items():
        count = sum(1 for e in errors if e.type == kind)
        parts += [("  ", f"on {colour}"), " ", Content(inert(kind)), (f" ({count})", "dim"), "   "]
    unlocated = sum(1 for e in errors if not e.located)
    if unlocated:
        parts.append((f"{unlocated} unlocated (quote not found in the text)", "italic dim"))
    return Content.assemble(*parts)


def paint_line(line: str, offset: int, spans: list[tuple[int, int, str]], gutter: str = "") -> Content:
    """`line` starts at `offset` in the text; `spans` are (start, end, style) in text offsets; `gutter` (the
    line's number) goes before it, dim."""
    end_of_line = offset + len(line)
    cuts = {0, len(line)}
    for start, end, _ in spans:
        if start < end_of_line and end > offset:
            cuts.update((max(start, offset) - offset, min(end, end_of_line) - offset))
    points = sorted(cuts)
    parts: list[tuple[str, str]] = []
    for left, right in itertools.pairwise(points):
        style = ""
        for start, end, span_style in spans:
            if start <= offset + left and offset + right <= end:
                style = span_style
        parts.append((inert(line[left:right]), style))
    if gutter:
        parts.insert(0, (gutter, "dim"))
    return Content.assemble(*parts) if parts else Content(" ")


class HighlightedText(VerticalScroll):
    """Display only; `show(index)` scrolls to an error and marks it as the current one."""

    def __init__(self, text: str, errors: list[tuple[int, ErrorSpan]], colours: dict[str, str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.text = text
        self.errors = {index: error for index, error in errors if error.located}
        self.colours = colours
        self.current: int | None = None
        self.lines = text.split("\n")
        if len(self.lines) > 1 and not self.lines[-1]:
            self.lines.pop()  # the text's final newline ends its last line: no empty numbered line after it
        self.starts: list[int] = []
        position = 0
        for line in self.lines:
            self.starts.append(position)
            position += len(line) + 1

    def _spans(self) -> list[tuple[int, int, str]]:
        spans = []
        for index, error in self.errors.items():
            style = f"#000000 on {self.colours[error.type]}"
            if index == self.current:
                style += " bold underline reverse"
            spans.append((error.start or 0, error.end or 0, style))
        return spans

    def _gutter(self, number: int) -> str:
        """Line numbers as every location counts them (line:column, from 1)."""
        return f"{number + 1:>{len(str(len(self.lines)))}} │ "

    def _line_of(self, offset: int) -> int:
        return max(bisect_right(self.starts, offset) - 1, 0)

    def compose(self) -> ComposeResult:
        spans = self._spans()
        for number, (line, start) in enumerate(zip(self.lines, self.starts, strict=True)):
            yield Static(paint_line(line, start, spans, self._gutter(number)), classes="text-line",
                         id=f"line-{number}")

    def _repaint(self, error: ErrorSpan | None) -> None:
        if error is None:
            return
        spans = self._spans()
        for number in range(self._line_of(error.start or 0), self._line_of(max((error.end or 1) - 1, 0)) + 1):
            line = paint_line(self.lines[number], self.starts[number], spans, self._gutter(number))
            self.query_one(f"#line-{number}", Static).update(line)

    def show(self, index: int) -> bool:
        """Scroll to error `index` and emphasise it; False when it has no place in this text."""
        error = self.errors.get(index)
        if error is None:
            return False
        previous = self.errors.get(self.current) if self.current is not None else None
        self.current = index
        self._repaint(previous)
        self._repaint(error)
        self.scroll_to_widget(self.query_one(f"#line-{self._line_of(error.start or 0)}"), top=True, animate=False)
        return True
