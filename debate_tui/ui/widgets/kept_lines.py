"""Widgets that hand the compositor the lines they last drew until something about them changes."""

from __future__ import annotations

from typing import Any

from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget


class KeptLines(Widget):
    """Base for widgets that change seldom, next to ones that change often.

    Textual's compositor draws again every widget in the container of a repainted area, changed
    or not: while five panes streamed, each repaint drew every pane's border, header and score
    trail again, line by line through the styling pass and the app's line filters (a third of the
    screen's cost). Whatever changes what a widget shows (new content, a class, a theme, a size)
    goes through `refresh` or a style update, and those drop the kept lines.

    Name it second, after the widget class (`class ScoreTrail(Static, KeptLines)`): Textual takes
    a widget's CSS type names and default CSS along the first base classes.
    """

    _kept: tuple[tuple, list[Strip]] | None = None

    def render_lines(self, crop: Region) -> list[Strip]:
        # `outer_size`, not `size`: `size` asks the compositor for the widget's region, and after a pane
        # scrolled that rebuilt the map of every widget on the screen (a twentieth of the UI's time).
        key = (crop, self.outer_size, tuple(self.app.get_line_filters()))
        if self._kept is None or self._kept[0] != key:
            self._kept = (key, super().render_lines(crop))
        return self._kept[1]

    def refresh(self, *regions: Region, **kwargs: Any) -> KeptLines:
        self._kept = None
        return super().refresh(*regions, **kwargs)

    def notify_style_update(self) -> None:
        self._kept = None
        super().notify_style_update()
