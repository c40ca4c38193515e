"""The sessions list: past runs and the shipped examples, to read, replay, resume, delete or compare.

A trust ladder that no tier trusted waits for a person: opening or resuming it
asks for the decision (the ladder's dialog), which becomes its result.

Listing reads an index (see `SessionStore.list`): about 30 ms for a thousand
sessions, done on the event loop, since in a thread its thousand `stat` calls
queued for the interpreter lock behind the busy UI and took ten times as long.
Loading a session parses a whole file, in a thread. The newest screenful is
listed and drawn first, the rest a chunk a frame. Delete asks first, and
never touches examples. Two sessions marked (m or space; the mark column says
which is A and which B) are compared side by side with c (`CompareScreen`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Input, Static

from debate_tui.domain import Session
from debate_tui.inputs import InputError
from debate_tui.meta.climb import decide, waiting
from debate_tui.safefile import SessionLock
from debate_tui.store import SessionFileError, SessionStore, SessionSummary, read_session, write_session
from debate_tui.ui.host import tui
from debate_tui.ui.literal import cell, literal, one_line
from debate_tui.ui.screens.base import BaseScreen
from debate_tui.ui.screens.dialogs import ConfirmDialog
from debate_tui.ui.widgets.footer import AppFooter

RESUMABLE = {"running", "needs_human", "failed", "cancelled", "pending"}
STOPPED = {"interrupted": "was interrupted: the process running it is gone",
           "cancelled": "was stopped before its end (ctrl+q, Stop, or a limit)"}
"""The statuses whose opening offers to resume first (u resumes any of RESUMABLE), and how to say them."""
MARKS = ("A", "B")
"""At most two sessions are marked for comparing: the first marked is A, the second B."""
MARK_COLUMN = "mark"
CHUNK_ROWS = 250
"""Rows added per frame after the first screenful. Each chunk costs about 0.3 ms a row plus one
redraw of the visible rows (DataTable drops its render cache on every added row), about 60 ms on
a busy 2-core machine: 100-row chunks doubled the time to fill 1,000 rows, 250 keeps a
keypress waiting at most about a tenth of a second while the list fills."""


@dataclass(frozen=True)
class Row:
    summary: SessionSummary
    example: bool

    @property
    def kind(self) -> str:
        if self.example:
            return "example"
        return "batch" if self.summary.batch else "fork" if self.summary.forked_from else "live"

    def matches(self, words: list[str]) -> bool:
        """Every word is in the row's kind, protocol, status, model, criteria or text (the filter box)."""
        s = self.summary
        haystack = " ".join((self.kind, s.protocol, s.shown_status, s.result, s.model, *s.criteria,
                             s.snippet)).lower()
        return all(word in haystack for word in words)


def list_rows(store: SessionStore, examples: Path | None) -> list[Row]:
    """The user's sessions, newest first, then the examples."""
    rows = [Row(s, False) for s in store.list()]
    if examples is not None and examples.is_dir() and examples.resolve() != store.root.resolve():
        rows += [Row(s, True) for s in SessionStore(examples).list()]
    return rows


def mark_cell(marked: list[str], key: str) -> Text:
    """A marked row says so in letters, not only in colour: ✓A or ✓B."""
    return cell(f"✓{MARKS[marked.index(key)]}" if key in marked else "", "bold")


COLUMNS = ("Date", "Text", "Model", "Protocol", "Status", "Kind", "Result", "Criteria")
"""After the mark: the text and the model first, what tells two runs apart, so they stay in view on a narrow
screen (the Text column alone once took the last 10-14 columns of 120 and every row read the same), then the
kind (live, fork, batch, example), short, before the longer result and criteria."""
FIXED_WIDTH = 2 + 16 + 24 + 9 + 11 + 7 + 2 * len(COLUMNS)
"""The mark, date, model, protocol, status and kind columns, with each column's padding: what Text's width leaves."""


def text_width(screen_width: int) -> int:
    """The Text column takes what the screen leaves after the columns before Result, between 20 and the 60
    characters a summary keeps."""
    return max(20, min(60, screen_width - FIXED_WIDTH))


def described(summary: SessionSummary) -> str:
    """A session as its row shows it, for a question about it: its date, protocol, model and text."""
    date = f"{summary.created_at:%Y-%m-%d %H:%M}" if summary.created_at else "of an unknown date"
    if summary.problem:
        return f"the unreadable file {summary.path.name}"
    return (f"the {summary.protocol} session of {date} ({summary.model or 'no model'}) on "
            f"\"{one_line(summary.snippet, 40)}\"")


def sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def add_rows(table: DataTable, rows: list[tuple[str, Row]], marked: list[str], width: int = 80) -> None:
    """Append rows keyed by path; text from a file goes through `cell`, so it is never markup. `width`: the
    screen's, which the Text column uses."""
    for key, row in rows:
        s = row.summary
        date = f"{s.created_at:%Y-%m-%d %H:%M}" if s.created_at else "?"
        status = "unreadable" if s.problem else s.shown_status
        text = s.problem.replace(str(s.path), s.path.name) if s.problem else s.snippet
        table.add_row(
            mark_cell(marked, key), date, cell(one_line(text, text_width(width))), cell(one_line(s.model, 24)),
            cell(s.protocol), cell(status), cell(row.kind), cell(one_line(s.result, 28)),
            cell(one_line(", ".join(s.criteria), 24)), key=key,
        )


async def add_and_draw(table: DataTable, rows: list[tuple[str, Row]], marked: list[str], width: int) -> None:
    """Add rows and return once a frame shows them.

    DataTable lays new rows out when it is next idle, which can come after the next
    refresh: waiting for one refresh let the next chunk in before the first was drawn.
    Its height counts the header and every row (one line each) once they are laid out.
    """
    add_rows(table, rows, marked, width)
    while table.virtual_size.height < table.row_count + (table.header_height if table.show_header else 0):
        await table.wait_for_refresh()
    await table.wait_for_refresh()


class SessionTable(DataTable):
    """Home and End go to the first and last session; DataTable's own scroll sideways, which these rows never need."""

    BINDINGS = [
        Binding("home", "scroll_top", "First", show=False),
        Binding("end", "scroll_bottom", "Last", show=False),
    ]


class SessionsScreen(BaseScreen[None]):
    AUTO_FOCUS = "#sessions-table"
    BINDINGS = [
        Binding("o", "open", "Read", id="sessions.open", tooltip="Open the session's report (enter works too)"),
        Binding("r", "replay", "Replay", id="sessions.replay", tooltip="Replay the debate turn by turn"),
        Binding("u", "resume", "Resume", id="sessions.resume",
                tooltip="Carry on an interrupted run from its last completed turn"),
        Binding("m,space", "mark", "Mark", id="sessions.mark",
                tooltip="Mark the session to compare (the first marked is A, the second B; again: unmark)"),
        Binding("c", "compare", "Compare", id="sessions.compare",
                tooltip="Compare the two marked sessions side by side: scores, errors, the rounds aligned"),
        Binding("d", "delete", "Delete", id="sessions.delete", tooltip="Delete the session file (asks first)"),
        Binding("f5", "refresh", "Refresh", id="sessions.refresh", tooltip="Read the sessions directory again"),
        Binding("slash", "filter", "Filter", id="sessions.filter",
                tooltip="Show only the sessions whose kind (live, fork, batch, example), protocol, status, criteria or "
                        "text hold every word typed"),
        Binding("escape", "back", "Back", id="sessions.back", tooltip="Return to the previous screen"),
    ]

    def __init__(self, store: SessionStore, examples: Path | None) -> None:
        super().__init__()
        self.store = store
        self.examples = examples
        self.rows: dict[str, Row] = {}
        self.words: list[str] = []
        """The filter box's words, lower case: a row is shown when it has them all."""
        self.marked: list[str] = []
        """The keys (paths) of the rows marked for comparing, A first."""

    def compose(self) -> ComposeResult:
        yield Static(literal(f"Sessions in {self.store.root}", "bold"), id="sessions-title")
        yield Input(placeholder="/ filter: live, batch, example, a protocol, a status (interrupted…), any word",
                    id="sessions-filter")
        yield SessionTable(id="sessions-table", cursor_type="row", zebra_stripes=True)
        yield Static("Loading…", id="sessions-empty")
        yield AppFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("✓", width=2, key=MARK_COLUMN)
        table.add_columns(*COLUMNS)
        self.action_refresh()

    def action_refresh(self) -> None:
        self.load_rows()

    @work(group="sessions-list", exclusive=True, exit_on_error=False, description="list sessions")
    async def load_rows(self) -> None:
        """The newest screenful first, then everything else (examples last) a chunk a frame.

        The first screenful is listed and drawn before the other sessions are even looked at:
        listing a thousand took about 30 ms, adding a thousand rows at once kept the screen blank
        for a third of a second. A refresh (this worker group is exclusive) cancels a fill under way.
        """
        table = self.query_one(DataTable)
        table.clear()
        self.rows = {}
        empty = self.query_one("#sessions-empty", Static)
        await self._show(table, [Row(s, False) for s in self.store.list(newest=self.app.size.height)])
        empty.display = not self.rows
        shown = set(self.rows)
        rest = [row for row in list_rows(self.store, self.examples) if str(row.summary.path) not in shown]
        for start in range(0, len(rest), CHUNK_ROWS):
            await self._show(table, rest[start:start + CHUNK_ROWS])
        empty.update("No sessions yet: start one from the setup screen (Escape).")
        empty.display = not self.rows

    async def _show(self, table: DataTable, rows: list[Row]) -> None:
        keyed = [(str(row.summary.path), row) for row in rows if row.matches(self.words)]
        self.rows.update(keyed)
        if keyed:
            await add_and_draw(table, keyed, self.marked, self.app.size.width)

    def _selected(self, readable: bool = True) -> Row | None:
        """The row under the cursor; an unreadable file is only good for deleting."""
        table = self.query_one(DataTable)
        if not self.rows or table.cursor_row < 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        row = self.rows.get(str(key))
        if readable and row is not None and row.summary.problem:
            self.notify(row.summary.problem, severity="error", markup=False)
            return None
        return row

    @work(group="sessions-open", exclusive=True, exit_on_error=False, description="load a session")
    async def open_session(self, row: Row, how: str) -> None:
        try:
            session: Session = await asyncio.to_thread(read_session, row.summary.path)
        except SessionFileError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        if how != "replay" and waiting(session):  # a trust ladder no tier trusted: its person decides here
            self._decide(session, row.summary.path)
        elif how == "read":
            tui(self).open_report(session)
        elif how == "replay":
            tui(self).replay(session)
        else:
            tui(self).resume(session, row.summary.path)

    def action_mark(self) -> None:
        """Mark or unmark the session under the cursor; a third mark is refused, naming the two marked."""
        row = self._selected()
        if row is None:
            return
        key = str(row.summary.path)
        before = list(self.marked)
        if key in self.marked:
            self.marked.remove(key)
        elif len(self.marked) == len(MARKS):
            names = " and ".join(f"{mark} = {self._marked_id(k)}" for mark, k in zip(MARKS, self.marked, strict=True))
            self.notify(f"Two sessions are marked already ({names}): unmark one (m) first.", severity="warning",
                        markup=False)
            return
        else:
            self.marked.append(key)
        self._draw_marks({key, *before})

    def _marked_id(self, key: str) -> str:
        row = self.rows.get(key)
        return row.summary.id if row is not None else Path(key).stem

    def _draw_marks(self, keys: set[str]) -> None:
        """Redraw the mark of `keys` (the rows whose mark may have changed: B becomes A when A is unmarked)."""
        table = self.query_one(DataTable)
        for key in keys & self.rows.keys():
            table.update_cell(key, MARK_COLUMN, mark_cell(self.marked, key))

    def action_compare(self) -> None:
        if len(self.marked) != len(MARKS):
            self.notify(f"Mark two sessions with m (or space), then press c: {len(self.marked)} marked.",
                        severity="warning")
            return
        self.compare_marked([Path(key) for key in self.marked])

    @work(group="sessions-open", exclusive=True, exit_on_error=False, description="compare two sessions")
    async def compare_marked(self, paths: list[Path]) -> None:
        """Both marked sessions read (in a thread), compared, and shown side by side."""
        from debate_tui.report.compare import compare_sessions

        try:
            a, b = [await asyncio.to_thread(read_session, path) for path in paths]
        except SessionFileError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        tui(self).compare(compare_sessions(a, b))
    def _decide(self, session: Session, path: Path) -> None:
        """The ladder's decision dialog; the answer is saved under the session's lock, and the list redrawn."""
        from debate_tui.ui.ladder_play import ask_decision

        def done(answers: dict[str, float | str] | None) -> None:
            if answers is None:
                return
            try:
                lock = SessionLock(path, session.id).acquire()
            except InputError as exc:  # another process holds it
                self.notify(str(exc), severity="error", markup=False)
                return
            try:
                who = decide(session, answers, tui(self).user, "TUI sessions screen")
                write_session(path, session)
            except OSError as exc:
                self.notify(f"cannot save the decision: {exc.strerror or exc}", severity="error", markup=False)
                return
            finally:
                lock.release()
            self.notify(f"decided by {who}", title="Trust ladder", markup=False)
            self.action_refresh()

        ask_decision(tui(self), session, done)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.words = event.value.lower().split()
        self.action_refresh()

    def on_input_submitted(self) -> None:
        self.query_one(DataTable).focus()

    def action_filter(self) -> None:
        self.query_one("#sessions-filter", Input).focus()

    def on_data_table_row_selected(self) -> None:
        self.action_open()

    def action_open(self) -> None:
        row = self._selected()
        if row is None:
            return
        how = STOPPED.get(row.summary.shown_status)
        if row.example or how is None:
            self.open_session(row, "read")
            return

        def done(yes: bool | None) -> None:
            self.open_session(row, "resume" if yes else "read")

        self.app.push_screen(ConfirmDialog(f"{sentence(described(row.summary))} {how}. Resume it from its last "
                                           "completed turn (y), or read it (n)?"), done)

    def action_replay(self) -> None:
        if row := self._selected():
            self.open_session(row, "replay")

    def action_resume(self) -> None:
        row = self._selected()
        if row is None:
            return
        if row.example:
            self.notify("Examples are read-only: replay them instead (r).", severity="warning")
        elif row.summary.status not in RESUMABLE:
            self.notify(f"This session is {row.summary.status}: nothing to resume. Replay it with r.",
                        severity="warning")
        else:
            self.open_session(row, "resume")

    def action_delete(self) -> None:
        row = self._selected(readable=False)
        if row is None:
            return
        if row.example:
            self.notify("Examples ship with debate-tui and are not deleted.", severity="warning")
            return

        def done(yes: bool | None) -> None:
            if yes:
                self.delete_file(row.summary.path)

        self.app.push_screen(ConfirmDialog(f"Delete {described(row.summary)}? Its file {row.summary.path.name} "
                                           "is removed; this cannot be undone."), done)

    @work(group="sessions-delete", exit_on_error=False, description="delete a session")
    async def delete_file(self, path: Path) -> None:
        try:
            await asyncio.to_thread(path.unlink)
        except OSError as exc:
            self.notify(f"Could not delete {path}: {exc}", severity="error", markup=False)
            return
        if str(path) in self.marked:
            self.marked.remove(str(path))
        self.notify(f"Deleted {path.name}", markup=False)
        self.action_refresh()

    def action_back(self) -> None:
        tui(self).go_back()
