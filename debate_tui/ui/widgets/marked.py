"""A checkbox and a selection list whose box is marked only when ticked.

Textual draws the same "X" in every box, ticked or not, and tells them apart
by colour alone: on a monochrome terminal, to a colour-blind reader, or in a
copied screen every criterion looked selected. Here a box left empty means
not ticked, whatever the theme.
"""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import Checkbox, SelectionList
from textual.widgets.option_list import OptionDoesNotExist
from textual.widgets.selection_list import SelectionType

TICKED = "X"
UNTICKED = " "


class MarkedCheckbox(Checkbox):
    """A Checkbox whose box holds its mark only while it is on."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.BUTTON_INNER = TICKED if self.value else UNTICKED

    def watch_value(self) -> None:
        self.BUTTON_INNER = TICKED if self.value else UNTICKED
        super().watch_value()


class MarkedSelectionList(SelectionList[SelectionType]):
    """A SelectionList whose boxes hold a mark only for the selected entries."""

    def render_line(self, y: int) -> Strip:
        line = super().render_line(y)
        try:  # the line's entry, found as SelectionList finds it to draw the box
            selection = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return line
        segments = list(line)
        if selection.value in self.selected or len(segments) < 2 or segments[1].text != TICKED:
            return line
        segments[1] = Segment(UNTICKED, segments[1].style)
        return Strip(segments, line.cell_length)
