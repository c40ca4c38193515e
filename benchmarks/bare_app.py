"""The start-up baseline: a bare Textual app with a line of text and a footer, nothing else."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Footer, Static

MARKER = "bare-app-ready"


class BareApp(App[None]):
    BINDINGS = [("ctrl+q", "quit", "Quit")]

    def compose(self) -> ComposeResult:
        yield Static(MARKER)
        yield Footer()


if __name__ == "__main__":
    BareApp().run()
