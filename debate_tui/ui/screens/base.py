"""What every screen shares: a failed background job is said out loud, never swallowed.

Workers run with `exit_on_error=False` so that one failed file read cannot
close the app (and lose a live debate); this base turns their failure into a
visible error notification instead.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from textual.actions import SkipAction
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from debate_tui.ui.clipboard import copy_text, describe

ResultType = TypeVar("ResultType")


class BaseScreen(Screen[ResultType], Generic[ResultType]):
    BINDINGS = [
        Binding("f1,question_mark", "app.help", "Help", id="app.help",
                tooltip="Every key of this screen with its id (what config.toml's keymap table remaps), "
                        "and the protocols"),
    ]
    """Help first: it comes before each screen's own keys in the footer, so a narrow terminal keeps it."""

    def action_copy_text(self) -> None:
        """ctrl+c with text selected: the system clipboard where there is one, and a word on where it went."""
        selected = self.get_selected_text()
        if selected is None:
            raise SkipAction()  # nothing selected: ctrl+c means what it means elsewhere
        self.run_worker(self._copy_selection(selected), description="Copying the selection", exit_on_error=False)

    async def _copy_selection(self, selected: str) -> None:
        method = await copy_text(self.app, selected)
        lines = selected.count("\n") + 1
        self.notify(describe(method, f"{lines} line{'s' if lines > 1 else ''} ({len(selected)} characters) "),
                    markup=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            worker = event.worker
            self.notify(f"{worker.description or worker.name} failed: {type(worker.error).__name__}: {worker.error}",
                        severity="error", markup=False, timeout=10)
