"""The report screen: the Markdown report, and the text with its located errors highlighted.

The errors table and the text are linked: selecting a row scrolls the text
to that error and marks it. Export writes a file; copy puts the Markdown on
the clipboard (pyperclip, else OSC 52) and says which was used.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from debate_tui.domain import Session
from debate_tui.report.errors_text import line_col
from debate_tui.report.markdown import render
from debate_tui.report.quotes import quoted_passages
from debate_tui.ui.clipboard import copy_text, describe
from debate_tui.ui.export import start_export
from debate_tui.ui.host import tui
from debate_tui.ui.literal import cell, literal, one_line
from debate_tui.ui.screens.base import BaseScreen
from debate_tui.ui.trimmed import trimmed
from debate_tui.ui.widgets.footer import AppFooter
from debate_tui.ui.widgets.highlighted_text import HighlightedText, legend, type_colours
from debate_tui.ui.widgets.safe_markdown import SafeMarkdown


class ReportScreen(BaseScreen[None]):
    BINDINGS = [
        Binding("1", "tab('report')", "Report", id="report.tab_report", tooltip="Show the Markdown report"),
        Binding("2", "tab('errors')", "Errors", id="report.tab_errors",
                tooltip="Show the text with its located errors highlighted"),
        Binding("e,enter", "export", "Export", id="report.export",
                tooltip="Write the report to a Markdown, HTML or JSON file"),
        Binding("c", "copy", "Copy", id="report.copy", tooltip="Copy the Markdown report to the clipboard"),
        Binding("escape", "back", "Back", id="report.back", tooltip="Return to the previous screen"),
        Binding("j", "line('down')", "Down", id="report.down", show=False,
                tooltip="Scroll down a line (on the errors tab: the next error), as the down arrow"),
        Binding("k", "line('up')", "Up", id="report.up", show=False,
                tooltip="Scroll up a line (on the errors tab: the previous error), as the up arrow"),
    ]

    def __init__(self, session: Session) -> None:
        """`session` is exported whole; the screen shows it `trimmed` (a huge turn cut, with the way to all of it)."""
        super().__init__()
        self.session = session
        shown = trimmed(session)
        self.markdown = render(shown)
        self.errors = (list(session.outcome.errors) if session.outcome else []) + quoted_passages(shown)
        self.colours = type_colours(self.errors)

    def compose(self) -> ComposeResult:
        task = self.session.task
        numbered = list(enumerate(self.errors))
        with TabbedContent(initial="report"):
            with TabPane("Report", id="report"), VerticalScroll(id="report-scroll"):
                yield SafeMarkdown(self.markdown, id="report-markdown")
            with TabPane(f"Text & errors ({len(self.errors)})", id="errors"):
                yield Static(legend(self.errors, self.colours), id="legend")
                yield DataTable(id="error-table", cursor_type="row", zebra_stripes=True)
                yield HighlightedText(task.text, [(i, e) for i, e in numbered if e.which == "a"],
                                      self.colours, id="text-a", classes="highlighted")
                if task.text_b is not None:
                    yield Static(literal("Text 2", "bold"), classes="text-title")
                    yield HighlightedText(task.text_b, [(i, e) for i, e in numbered if e.which == "b"],
                                          self.colours, id="text-b", classes="highlighted")
        yield AppFooter()

    def on_mount(self) -> None:
        self.query_one("#report-scroll").focus()  # the arrows and page keys scroll the report; enter exports
        table = self.query_one("#error-table", DataTable)
        table.add_columns("#", "Type", "Where", "Deduction", "Quote", "Explanation")
        for number, error in enumerate(self.errors):
            text = self.session.task.text_b if error.which == "b" else self.session.task.text
            where = "unlocated"
            if error.start is not None and text is not None:
                line, col = line_col(text, error.start)
                where = f"{line}:{col}" + (" (2)" if error.which == "b" else "")
            table.add_row(
                str(number + 1), cell(error.type, f"bold {self.colours[error.type]}"), where,
                f"-{error.deduction:g}" if error.deduction else "none",
                cell(one_line(error.quote, 40)), cell(one_line(error.explanation, 60)),
                key=str(number),
            )
        table.display = bool(self.errors)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.show_error(int(str(event.row_key.value)))

    def show_error(self, index: int) -> None:
        """Scroll the right text to error `index` and mark it there."""
        error = self.errors[index]
        view = self.query_one("#text-b" if error.which == "b" else "#text-a", HighlightedText)
        if not view.show(index):
            self.notify("This error's quote was not found in the text, so it has no place to show.",
                        severity="warning")

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def action_line(self, direction: str) -> None:
        """j and k, as a pager has them: what the arrows do to the focused table or text."""
        focused = self.focused
        if isinstance(focused, DataTable):
            focused.action_cursor_down() if direction == "down" else focused.action_cursor_up()
        elif focused is not None:
            focused.scroll_down() if direction == "down" else focused.scroll_up()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """The tab on show takes the focus (by key or click), so the arrows and page keys scroll what is seen:
        the focus left behind in a hidden tab answered nothing."""
        if event.pane.id == "report":
            self.query_one("#report-scroll").focus()
        else:
            table = self.query_one("#error-table", DataTable)
            (table if table.row_count else self.query_one("#text-a")).focus()

    def action_export(self) -> None:
        start_export(self, self.session)

    def action_copy(self) -> None:
        self.run_worker(self._copy(), group="clipboard", exclusive=True, description="copy the report")

    async def _copy(self) -> None:
        method = await copy_text(self.app, self.markdown)
        self.notify(describe(method))

    def action_back(self) -> None:
        tui(self).go_back()
