"""The footer every screen shares: compact on a narrow terminal, so the keys that matter stay in view.

At 80 columns the standard footer cut the debate screen's keys after Export (Stop, Quit and
Help fell off). Below `WIDE` columns it drops its padding and the command palette's hint
(ctrl+p still works, and the help screen says so); Help comes first (`BaseScreen`), then
each screen's keys, most used first, then the app's (quit, sessions, new).
"""

from __future__ import annotations

from textual import events
from textual.widgets import Footer

from debate_tui.ui.widgets.kept_lines import KeptLines

WIDE = 140
"""The debate screen's keys with the standard padding and the palette's hint need about 125 columns."""


class AppFooter(Footer, KeptLines):
    """Docked, so Textual draws it again with every screen update however far away: it keeps its line."""

    def on_mount(self) -> None:
        self._fit()

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self) -> None:
        narrow = self.app.size.width < WIDE
        self.compact = narrow
        self.show_command_palette = not narrow
