"""What every screen shares: a failed background job is said out loud, never swallowed.

Workers run with `exit_on_error=False` so that one failed file read cannot
close the app (and lose a live debate); this base turns their failure into a
visible error notification instead.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState

ResultType = TypeVar("ResultType")


class BaseScreen(Screen[ResultType], Generic[ResultType]):
    BINDINGS = [
        Binding("f1,question_mark", "app.help", "Help", id="app.help",
                tooltip="Every key of this screen with its id (what config.toml's keymap table remaps), "
                        "and the protocols"),
    ]
    """Help first: it comes before each screen's own keys in the footer, so a narrow terminal keeps it."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            worker = event.worker
            self.notify(f"{worker.description or worker.name} failed: {type(worker.error).__name__}: {worker.error}",
                        severity="error", markup=False, timeout=10)
