"""The report screen: the Markdown report, and the text with its located errors highlighted.

The errors table and the text are linked: selecting a row scrolls the text
to that error and marks it. Export writes a file; copy puts the Markdown on
the clipboard (pyperclip, else OSC 52) and says which was used.

The screen draws at once and fills in as the report is built: a long debate's
report (its Markdown, the passages quoted, the text's lines) took seconds to
build, and the screen stayed on the last one meanwhile, so `r` got pressed
twice. The building runs in a thread; the keys answer all along.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import cached_property

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from debate_tui.domain import ErrorSpan, Session
from debate_tui.protocols.common import counted
from debate_tui.report.facts import deduction, explained, location
from debate_tui.report.markdown import render
from debate_tui.report.quotes import QUOTE_TYPE, quoted_passages
from debate_tui.ui.clipboard import copy_text, describe
from debate_tui.ui.export import start_export
from debate_tui.ui.host import tui
from debate_tui.ui.literal import cell, literal, one_line
from debate_tui.ui.screens.base import BaseScreen
from debate_tui.ui.trimmed import trimmed
from debate_tui.ui.widgets.footer import AppFooter
from debate_tui.ui.widgets.highlighted_text import HighlightedText, legend, type_colours
from debate_tui.ui.widgets.safe_markdown import SafeMarkdown

NARROW = (("#", 3), ("Type", 6), ("Where", 8), ("Points", 8), ("Quote", 14))
"""The errors table's columns before the explanation, with their widths: the explanation takes the rest of the
screen's width and wraps (cut at the edge, at 80 columns it showed a few words)."""
EXPLANATION_MIN = 24


@dataclass(frozen=True)
class Built:
    """The report as the screen shows it, made off the event loop."""

    markdown: str
    errors: list[ErrorSpan]
    rows: list[tuple[str, str, str, str, str, str]]
    """Per error: type, where, points, quote, explanation, who raised it."""


class ReportTabs(Vertical):
    """The report's tabs, mounted after the screen's first frame."""

    DEFAULT_CSS = "ReportTabs { height: 1fr; }"

    def __init__(self, initial: str) -> None:
        super().__init__()
        self.initial = initial

    def compose(self) -> ComposeResult:
        with TabbedContent(initial=self.initial):
            with TabPane("Report", id="report"), VerticalScroll(id="report-scroll"):
                yield SafeMarkdown(id="report-markdown")
            with TabPane("Text & errors", id="errors"):
                yield Static(literal("Locating the errors ...", "italic"), id="legend")
                yield DataTable(id="error-table", cursor_type="row", zebra_stripes=True)
                yield Vertical(id="texts")


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
        self._tab = "report"
        self._tabs_ready = False
        self.ready = False
        """Whether the report is built and shown whole (`built` is made in a thread after the first frame)."""

    @cached_property
    def built(self) -> Built:
        """The report as shown (what a person set reads "set by you" for the one who runs the program)."""
        shown = trimmed(self.session)
        errors = (list(shown.outcome.errors) if shown.outcome else []) + quoted_passages(shown)
        rows = []
        for error in errors:
            explanation, by = explained(shown, error)
            points = "none" if error.type == QUOTE_TYPE else deduction(shown, error)
            rows.append((error.type, location(shown, error), points, error.quote, explanation, by))
        return Built(render(shown), errors, rows)

    @property
    def markdown(self) -> str:
        return self.built.markdown

    @property
    def errors(self) -> list[ErrorSpan]:
        return self.built.errors

    def compose(self) -> ComposeResult:
        """The first frame: a notice and the keys. The tabs, the Markdown view and the errors table cost a
        first frame 80 ms of CPU more than an empty screen's; they are mounted right after it (`_fill`)."""
        turns = counted(len(self.session.turns), "turn")
        yield Static(literal(f"Building the report ({turns}) ...", "italic"), id="report-building")
        yield AppFooter()

    def on_mount(self) -> None:
        self.call_after_refresh(self._build)  # after the first frame: the thread would share the GIL with it

    def _build(self) -> None:
        self.run_worker(self._fill(), group="report", exclusive=True, exit_on_error=False,
                        description="build the report")

    async def _fill(self) -> None:
        """Build the report in a thread while the tabs are mounted, then show it: the Markdown (mounted in
        batches, the keys answering between them), the errors table and the text."""
        building = asyncio.ensure_future(asyncio.to_thread(lambda: self.built))
        await self.mount(ReportTabs(self._tab), after="#report-building")
        self.query_one("#error-table").display = False
        self.call_after_refresh(self._tabs_mounted)
        built = await building
        colours = type_colours(built.errors)
        self.query_one("#legend", Static).update(legend(built.errors, colours))
        self._fill_table(built, colours)
        task, numbered = self.session.task, list(enumerate(built.errors))

        def view(text: str, which: str) -> HighlightedText:
            return HighlightedText(text, [(i, e) for i, e in numbered if e.which == which], colours,
                                   id=f"text-{which}", classes="highlighted")

        texts: list[Static | HighlightedText] = [view(task.text, "a")]
        if task.text_b is not None:
            texts += [Static(literal("Text 2", "bold"), classes="text-title"), view(task.text_b, "b")]
        await self.query_one("#texts").mount_all(texts)
        self.query_one(TabbedContent).get_tab("errors").label = f"Text & errors ({len(built.errors)})"
        await self.query_one("#report-markdown", SafeMarkdown).update(built.markdown)
        await self.query_one("#report-building").remove()
        self.ready = True

    def _fill_table(self, built: Built, colours: dict[str, str]) -> None:
        table = self.query_one("#error-table", DataTable)
        used = sum(width for _, width in NARROW) + 2 * (len(NARROW) + 1) + 4  # cell padding, border, scroll bar
        for label, width in NARROW:
            table.add_column(label, width=width)
        table.add_column("Explanation", width=max(EXPLANATION_MIN, self.size.width - used))
        for number, (kind, where, points, quote, explanation, by) in enumerate(built.rows):
            said = cell(f"{explanation} — {by}")
            said.stylize("dim", len(explanation) + 1)
            table.add_row(str(number + 1), cell(kind, f"bold {colours[kind]}"), cell(where), points,
                          cell(one_line(quote, 60)), said, key=str(number), height=None)
        table.display = bool(built.rows)
        if table.display and self.query_one(TabbedContent).active == "errors":
            table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.show_error(int(str(event.row_key.value)))

    def show_error(self, index: int) -> None:
        """Scroll the right text to error `index` and mark it there."""
        if not self.ready:
            return
        error = self.errors[index]
        view = self.query_one("#text-b" if error.which == "b" else "#text-a", HighlightedText)
        if not view.show(index):
            self.notify("This error's quote was not found in the text, so it has no place to show.",
                        severity="warning")

    def _tabs_mounted(self) -> None:
        """The tab a key picked while they mounted (their first activation, of the initial tab, undid it)."""
        self._tabs_ready = True
        self.action_tab(self._tab)
        if self._tab == "report":  # the arrows and page keys scroll the report; enter exports
            self.query_one("#report-scroll").focus()

    def action_tab(self, tab: str) -> None:
        self._tab = tab  # a key pressed before the tabs are mounted picks the one they show
        if self._tabs_ready:
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
            texts = self.query("#text-a")
            (table if table.row_count or not texts else texts.first()).focus()

    def action_export(self) -> None:
        start_export(self, self.session)

    def action_copy(self) -> None:
        if not self.ready:
            self.notify("The report is still being built: copy it in a moment.", timeout=3)
            return
        self.run_worker(self._copy(), group="clipboard", exclusive=True, description="copy the report")

    async def _copy(self) -> None:
        method = await copy_text(self.app, self.markdown)
        self.notify(describe(method))

    def action_back(self) -> None:
        tui(self).go_back()
