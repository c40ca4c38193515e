"""The footer every screen shares: on a narrow terminal it keeps the keys a person needs most, each whole.

At 80 columns the standard footer cut a screen's keys at the edge: the debate screen lost Stop,
Quit and Help, the sessions screen ended mid-word ("^q Quit f"). Below `WIDE` columns it drops
its padding and the command palette's hint (ctrl+p still works, and the help screen says so).
When the keys still do not fit, the footer keeps them by rank (`rank`): Help, then Quit, then
the screen's way out (escape: Stop, Back), then the screen's own keys as the screen declares
them (most used first), then the app's others (Sessions, New). A key that does not fit is left
out whole, and a shorter one further down may take its room; the kept keys stay in the order
the screen shows them. Every key is still in the help screen (F1) and the palette (ctrl+p).
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Footer

from debate_tui.ui.widgets.kept_lines import KeptLines

WIDE = 140
"""The debate screen's keys with the standard padding and the palette's hint need about 125 columns."""
FIRST = ("app.help", "app.quit")
"""Kept before anything else: how to find every other key, and how to leave."""
LAST = ("app.sessions", "app.setup")
"""The app's keys a screen can do without on a narrow terminal (F2 and F3 still work)."""
PALETTE_ROOM = 14
"""The command palette's hint, docked right on a wide footer ("^p palette" with its padding and border)."""


def rank(binding: Binding, position: int) -> tuple[int, int]:
    """Lower is kept first; `position` is the binding's place on the footer (the screen's declared order)."""
    if binding.id in FIRST:
        return 0, FIRST.index(binding.id)
    if binding.id in LAST:
        return 3, LAST.index(binding.id)
    if "escape" in binding.key.split(","):
        return 1, position
    return 2, position


def key_width(key_display: str, description: str, compact: bool) -> int:
    """The cells one key takes with the space after it: "^q Quit " compact, " ^q Quit " otherwise."""
    return cell_len(key_display) + cell_len(description) + (2 if compact else 3)


def kept(keys: list[tuple[Binding, int]], room: int) -> set[int]:
    """The positions of the keys (binding, width) that fit in `room` cells, taken by `rank`."""
    chosen: set[int] = set()
    for position in sorted(range(len(keys)), key=lambda at: rank(keys[at][0], at)):
        width = keys[position][1]
        if width <= room:
            chosen.add(position)
            room -= width
    return chosen


class AppFooter(Footer, KeptLines):
    """Docked, so Textual draws it again with every screen update however far away: it keeps its line."""

    def on_mount(self) -> None:
        self._fit()

    def on_resize(self, event: events.Resize) -> None:
        width = self.app.size.width
        if getattr(self, "_composed_for", width) != width:
            self.call_after_refresh(self.recompose)  # another width keeps other keys
        self._fit()

    def _fit(self) -> None:
        narrow = self.app.size.width < WIDE
        self.compact = narrow
        self.show_command_palette = not narrow

    def compose(self) -> ComposeResult:
        """Textual's keys, less those that do not fit (this screen's keys never come in groups)."""
        width = self.app.size.width
        self._composed_for = width
        yield from self._fitting(list(super().compose()), width)

    def _fitting(self, widgets: list[Widget], width: int) -> Iterable[Widget]:
        """`widgets` less the keys that do not fit `width`; the palette's hint has its own room."""
        by_action = {active.binding.action: active.binding for active in self.screen.active_bindings.values()}
        compact = width < WIDE
        keys = [(widget, binding) for widget in widgets if not widget.has_class("-command-palette")
                and (binding := by_action.get(str(getattr(widget, "action", "")))) is not None]
        sizes = [(binding, key_width(str(getattr(widget, "key_display", "")), str(getattr(widget, "description", "")),
                                     compact)) for widget, binding in keys]
        room = width + 1 - (0 if compact else PALETTE_ROOM)  # the last key needs no space after it
        dropped = {id(keys[at][0]) for at in set(range(len(keys))) - kept(sizes, room)}
        return [widget for widget in widgets if id(widget) not in dropped]
