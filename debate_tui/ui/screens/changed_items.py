"""`compare A.jsonl B.jsonl --tui`: the items that changed between two results files, one a row.

The rows are the table `compare` prints (`meta.compare_text.changed_row`). Enter on one opens the two
sessions its lines name side by side (`CompareScreen`); results this product wrote carry a `session` on
every line, other files may not, and then it says so on one line.
"""

from __future__ import annotations

import asyncio

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import DataTable, Static

from debate_tui.meta.compare import Changed
from debate_tui.meta.compare_text import HEAD, changed_row
from debate_tui.store import SessionFileError, SessionStore
from debate_tui.ui.literal import cell, literal
from debate_tui.ui.screens.base import BaseScreen
from debate_tui.ui.widgets.footer import AppFooter


def missing_sessions(item: Changed) -> str | None:
    """Why this item's debates cannot be shown, or None when both lines name a session."""
    data = item.data()
    sides = [side for side in ("A", "B") if data[f"session_{side.lower()}"] is None]
    if not sides:
        return None
    return (f"Item {data['id']!r}: the line in {' and '.join(sides)} names no session (results written by "
            "debate-tui batch or escalate do), so there is no debate to show.")


class ChangedItemsScreen(BaseScreen[None]):
    help_name = "changed items"
    AUTO_FOCUS = "#changed-table"
    DEFAULT_CSS = """
    #changed-title { padding: 0 1; background: $panel; }
    #changed-table { height: 1fr; }
    #changed-empty { padding: 1 2; color: $text-muted; }
    """
    BINDINGS = [
        Binding("enter", "open", "Debates", id="changed.open",
                tooltip="Open the two sessions of the item side by side (needs both lines to name a session)"),
        Binding("escape", "back", "Back", id="changed.back", tooltip="Close the list"),
    ]

    def __init__(self, title: str, changed: list[Changed], store: SessionStore) -> None:
        super().__init__()
        self.title_text = title
        self.changed = changed
        self.store = store

    def compose(self) -> ComposeResult:
        yield Static(Content.assemble(literal(self.title_text, "bold"), "\n",
                                      ("Enter on an item: its two sessions side by side", "dim")), id="changed-title")
        yield DataTable(id="changed-table", cursor_type="row", zebra_stripes=True)
        yield Static("No item changed by more than the tolerance, and no verdict flipped.", id="changed-empty")
        yield AppFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*HEAD)
        for number, item in enumerate(self.changed):
            table.add_row(*(cell(text) for text in changed_row(item)), key=str(number))
        table.display = bool(self.changed)
        self.query_one("#changed-empty").display = not self.changed

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.open_item(self.changed[int(str(event.row_key.value))])

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if self.changed and table.cursor_row >= 0:
            self.open_item(self.changed[table.cursor_row])

    @work(group="changed-open", exclusive=True, exit_on_error=False, description="load the two sessions")
    async def open_item(self, item: Changed) -> None:
        from debate_tui.report.compare import compare_sessions
        from debate_tui.ui.screens.compare import CompareScreen

        if (problem := missing_sessions(item)) is not None:
            self.notify(problem, severity="warning", markup=False)
            return
        data = item.data()
        try:
            a, b = [await asyncio.to_thread(self.store.load, data[f"session_{side}"]) for side in "ab"]
        except SessionFileError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        self.app.push_screen(CompareScreen(compare_sessions(a, b)))

    def action_back(self) -> None:
        self.dismiss()
