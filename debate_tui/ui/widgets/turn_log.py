"""An agent's turns as lines: every finished turn rendered once, the live turn growing by its last block.

A pane's turns used to be widgets (a Markdown tree for the live turn, a Static
per finished turn). Each append then re-measured Rich Markdown and reflowed
the whole screen, so five streaming panes kept the event loop busy and a key
press waited for the next frame. Here a pane's turns are one Line API widget
of fixed size: text is rendered to strips once per width, growth touches only
the lines that changed, and nothing outside the pane is laid out again.

The live turn is Markdown too, rendered block by block: a block is settled
once a blank line or a new list item (outside a code fence) follows it, and
rendered once; only the unsettled tail is rendered again as text arrives.
When the turn ends it is rendered whole, once and a moment later, so spacing
comes out exactly as in the report.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from copy import copy
from dataclasses import dataclass, field
from functools import cache

from markdown_it import MarkdownIt
from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from debate_tui.textsafe import inert

FENCES = ("```", "~~~")
THUMB_S = 1.0
"""How often a growing log's scroll thumb may move: its rows are repainted when it does."""
GUTTER = 2
"""Columns right of the text: a blank one, then the log's own scroll bar."""


@cache
def _blank_markdown() -> tuple[Markdown, MarkdownIt]:
    return Markdown("", hyperlinks=False), MarkdownIt().enable("strikethrough").enable("table")


def markdown(text: str) -> Markdown:
    """Model text as Markdown: control characters shown, links printed but never made clickable.

    Rich builds a markdown-it parser for every document, which costs more than parsing a
    paragraph; the live tail is parsed several times a second, so one parser (configured as
    Rich configures its own) serves every document.
    """
    document, parser = _blank_markdown()
    document = copy(document)
    document.markup = inert(text)
    document.parsed = parser.parse(document.markup)
    return document


BOUNDARY = re.compile(r"\n\n+|\n(?=(?:[-*+]|\d{1,9}[.)])[ \t])")
"""Where a block ends: at blank lines, or before a list item (so a growing list re-renders one item)."""


def last_boundary(text: str, start: int) -> tuple[int, bool] | None:
    """The last block end in `text[start:]` outside a code fence: where the next block starts, and
    whether a blank line separates them."""
    found, fence_lines, scanned = None, 0, start
    for match in BOUNDARY.finditer(text, start):
        fence_lines += sum(line.lstrip().startswith(FENCES) for line in text[scanned:match.start()].split("\n"))
        scanned = match.start()
        if fence_lines % 2 == 0:
            found = (match.end(), len(match.group()) > 1)
    return found


@dataclass
class Entry:
    """Something shown in the log, rendered to strips at most once per width and theme."""

    build: Callable[[], RenderableType]
    """Makes the renderable when it is drawn, so theme styles are read then, not when the text arrived."""
    trim: bool = False
    """Drop blank lines around it: a block of a live turn, spaced by the log rather than by Rich."""
    drawn_for: tuple = ()
    """The width and styles `lines` were rendered for."""
    lines: list[Strip] = field(default_factory=list)


@dataclass
class LiveTurn:
    """The turn being spoken: its heading, its settled blocks (each rendered once) and the tail."""

    slot: int
    heading: Entry
    source: str = ""
    settled: int = 0
    """`source[:settled]` is in `blocks`; the rest is the tail."""
    blocks: list[tuple[Entry, bool]] = field(default_factory=list)
    """Each settled block, and whether a blank line precedes it."""
    gap: bool = False
    """Whether a blank line precedes the tail."""


class TurnLog(ScrollView, can_focus=False):
    """Finished turns, then the live one, as strips; follows the newest text while scrolled to the end.

    It draws its own scroll bar, one column at the right of every line. Textual's (a widget beside
    the text, drawn line by line with every repaint, and cutting each screen row in two more places)
    was a quarter of the screen's cost while five panes streamed. Textual's scrolling stays: its
    bar has no width (`scrollbar-size-vertical: 0`) but is always on (`overflow-y: scroll`), so
    the mouse wheel scrolls, and no bar coming and going lays out the screen at a turn's start or end.
    A click on the drawn bar scrolls to that place.
    """

    COMPONENT_CLASSES = {"turn-log--heading", "turn-log--error", "turn-log--note", "turn-log--track",
                         "turn-log--thumb"}
    DEFAULT_CSS = """
    TurnLog { overflow-x: hidden; overflow-y: scroll; scrollbar-size-vertical: 0; padding: 0 0 0 1; }
    TurnLog > .turn-log--track { background: $scrollbar-background; }
    TurnLog > .turn-log--thumb { background: $scrollbar; }
    TurnLog > .turn-log--heading { color: $primary; text-style: bold; }
    TurnLog > .turn-log--error { color: $error; }
    TurnLog > .turn-log--note { color: $text-muted; text-style: italic; }
    """

    def __init__(self, *, keep: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.keep = keep
        """How many finished turns stay in the log; older ones are counted, the report has them."""
        self.dropped = 0
        self._note: list[Entry] = []
        """Says how many turns were dropped, once there are any."""
        self.entries: list[Entry] = []
        self.live: LiveTurn | None = None
        self._finished: list[Strip] = []
        self._lines: list[Strip] = []
        self._drawn_for: tuple = ()
        self._look_cache: tuple | None = None
        self._blank: Strip | None = None
        self._top = 0
        """Where `_place` left the view: a different `scroll_y` means the reader scrolled."""
        self._following = True
        self._thumb_drawn = (0, 0)
        """The rows of the view the scroll thumb was last drawn on (`_thumb` is where it belongs now)."""
        self._edges: tuple[Strip, Strip] | None = None

    # ----- what the pane tells it ---------------------------------------------------

    def add_turn(self, heading: str, content: str, error: str | None = None) -> None:
        """A finished turn (heading, the reply as Markdown, the error if any), in place of the live one.

        One step, not two: the log never shrinks in between, so its scroll bar does not blink out and back.
        When the reply is what was streamed, its streamed lines stand in until the whole reply is
        rendered, a moment later: the panes' turns often end together, and rendering five replies in
        one go held a key press for a tenth of a second.
        """

        def build() -> RenderableType:
            parts: list[RenderableType] = [self._heading(heading), markdown(content)]
            if error:
                parts.append(Text(inert(error), style=self.get_component_rich_style("turn-log--error")))
            return Group(*parts, Text(""))

        entry = Entry(build)
        live, look = self.live, self._drawn_for
        if live is not None and look and not error and live.source.strip() == inert(content).strip():
            entry.drawn_for = look
            entry.lines = [*self._render(self._heading(heading), look[0], look[1]), *self._live_body(live, look),
                           self._blank_line()]
            self.call_later(self._redraw, entry)
        self.entries.append(entry)
        if len(self.entries) > self.keep:
            del self.entries[0]
            self.dropped += 1
            note = f"… {self.dropped} earlier turn(s) hidden; the report has them all"
            self._note = [Entry(lambda: Text(note, style=self.get_component_rich_style("turn-log--note")))]
        self.live = None
        self._rebuild()

    def _redraw(self, entry: Entry) -> None:
        entry.drawn_for = ()
        self._rebuild()

    def begin(self, slot: int, heading: str) -> None:
        self.live = LiveTurn(slot, Entry(lambda: self._heading(heading)))
        self._rebuild()

    def end(self) -> None:
        """Drop the live turn, leaving nothing in its place."""
        self.live = None
        self._rebuild()

    def append(self, text: str) -> None:
        """More of the live turn: settle the blocks a blank line closed, re-render only the tail."""
        live = self.live
        if live is None or not text:
            return
        live.source += inert(text)
        boundary = last_boundary(live.source, live.settled)
        if boundary is not None:
            block = live.source[live.settled:boundary[0]].strip("\n")
            if block:
                live.blocks.append((Entry(lambda: markdown(block), trim=True), live.gap))
            live.settled, live.gap = boundary[0], boundary[1] or (live.gap and not block)
        self._rebuild(live_only=True)

    # ----- rendering --------------------------------------------------------------

    def _heading(self, heading: str) -> Text:
        return Text(inert(heading), style=self.get_component_rich_style("turn-log--heading"))

    def _look(self) -> tuple:
        """What cached lines depend on besides their text: the width and the theme's styles.

        Kept until the size or the styles change: reading the styles cost more than a flush's new text.
        """
        if self._look_cache is None:
            self._look_cache = (self.scrollable_content_region.width - GUTTER, self.rich_style,
                                *(self.get_component_rich_style(name) for name in sorted(self.COMPONENT_CLASSES)))
        return self._look_cache

    def _strips(self, entry: Entry, look: tuple) -> list[Strip]:
        if entry.drawn_for != look:
            entry.drawn_for, entry.lines = look, self._render(entry.build(), look[0], look[1], entry.trim)
        return entry.lines

    def _render(self, renderable: RenderableType, width: int, base: Style, trim: bool = False) -> list[Strip]:
        options = self.app.console_options.update(highlight=False, width=width, height=None)
        segments = self.app.console.render(renderable, options)
        lines = [Strip(line, width).apply_style(base) for line in
                 Segment.split_and_crop_lines(segments, width, include_new_lines=False, pad=True)]
        if trim:
            filled = [index for index, line in enumerate(lines) if line.text.strip()]
            lines = lines[filled[0]:filled[-1] + 1] if filled else []
        return lines

    def _live_lines(self, look: tuple) -> list[Strip]:
        live = self.live
        return [*self._strips(live.heading, look), *self._live_body(live, look)] if live else []

    def _live_body(self, live: LiveTurn, look: tuple) -> list[Strip]:
        """The live turn under its heading: the settled blocks as rendered once, the tail rendered now."""
        gap = self._blank_line()
        lines: list[Strip] = []
        for index, (block, gap_before) in enumerate(live.blocks):
            if index and gap_before:
                lines.append(gap)
            lines.extend(self._strips(block, look))
        tail = live.source[live.settled:].strip("\n")
        if tail:
            if live.blocks and live.gap:
                lines.append(gap)
            lines.extend(self._render(markdown(tail), look[0], look[1], trim=True))
        return lines

    def _rebuild(self, live_only: bool = False) -> None:
        """Recompute the lines; repaint only those that changed, lay out only when the height did."""
        look = self._look()
        width = look[0]
        if width <= 0:
            return
        if not live_only or look != self._drawn_for:
            self._finished = [line for entry in self._note + self.entries for line in self._strips(entry, look)]
        old = self._lines
        self._drawn_for = look
        self._lines = self._finished + self._live_lines(look)
        if self._place(settle=not live_only):
            self.refresh()
        else:
            first = next((y for y, (a, b) in enumerate(zip(old, self._lines)) if a is not b and a.text != b.text),
                         min(len(old), len(self._lines)))
            first = max(first, int(self.scroll_y))  # lines above the view need no repaint
            self.refresh_lines(first, max(len(old), len(self._lines)) - first)
        if not live_only:
            self._sync_thumb()

    def _place(self, settle: bool) -> bool:
        """Size the scrollable area and move the view for the new lines; whether the view moved.

        While a turn streams, a log that follows its end jumps half a pane when the text reaches the
        bottom, rather than scrolling a line at a time: between jumps a flush repaints only the lines
        that changed, not the whole pane. When the turn ends (`settle`) the newest line goes to the
        bottom. Setting `virtual_size` would lay out the whole screen: only a scroll bar appearing or
        going needs that, so otherwise the size is set quietly and the thumb follows within `THUMB_S`.
        """
        rows, view = len(self._lines), self.scrollable_content_region.height
        top = round(self.scroll_y)
        if top != self._top:  # scrolled by the reader since: follow only if they went to the end
            self._following = self.scroll_y >= self.max_scroll_y
        if self._following:
            if settle:
                top = max(0, rows - view)
            elif rows > top + view:
                top = rows - max(1, view // 2)
            height = max(rows, top + view)
        else:  # someone is reading further up: the ground under them stays
            height = max(rows, top + view) if settle else max(rows, self.virtual_size.height)
        self._top, self._following = top, top >= height - view
        size = Size(self._drawn_for[0], height)
        wants_bar = self.styles.overflow_y == "scroll" or height > view
        if wants_bar != self.show_vertical_scrollbar:
            self.virtual_size = size
            self._scroll_update(size)  # the layout skips this when its size and ours happen to agree
        elif size != self.virtual_size:
            self.set_reactive(TurnLog.virtual_size, size)
        if top == round(self.scroll_y):
            return False
        self.set_reactive(TurnLog.scroll_y, float(top))
        self.set_reactive(TurnLog.scroll_target_y, float(top))
        self._thumb_drawn = self._thumb()  # the whole view is repainted
        return True

    def _thumb(self) -> tuple[int, int]:
        """The rows of the view the scroll thumb belongs on: none when everything fits."""
        view = self.scrollable_content_region.height
        total = max(self.virtual_size.height, view)
        if total <= view:
            return (0, 0)
        size = max(1, round(view * view / total))
        start = min(view - size, round(self.scroll_y * view / total))
        return (start, start + size)

    def _sync_thumb(self) -> None:
        """Move the thumb where it belongs, repainting only the rows it left or reached."""
        old, new = self._thumb_drawn, self._thumb()
        if new != old:
            self._thumb_drawn = new
            x = self.scrollable_content_region.width - 1
            self.refresh(*(Region(x, y, 1, 1) for y in set(range(*old)) ^ set(range(*new))))

    def on_click(self, event: events.Click) -> None:
        """A click on the scroll bar scrolls there (the thumb is drawn, not a widget: it cannot be dragged)."""
        at, view = event.get_content_offset(self), self.scrollable_content_region
        if at is not None and at.x == view.width - 1:
            event.stop()
            self.scroll_to(y=self.max_scroll_y * at.y / max(1, view.height - 1), animate=False)

    def watch_scroll_y(self, old: float, new: float) -> None:
        """The reader scrolled (the log's own moves are quiet): the whole view, thumb included, is redrawn."""
        super().watch_scroll_y(old, new)
        self._thumb_drawn = self._thumb()

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_y) + y
        line = self._lines[index] if index < len(self._lines) else self._blank_line()
        start, end = self._thumb_drawn
        return Strip.join([line, self._edge(start <= y < end)])

    def _edge(self, thumb: bool) -> Strip:
        """The gap and the scroll bar's cell at the end of a line, made once per theme."""
        if self._edges is None:
            base = self._look()[1]
            track, thumb_cell = (Strip([Segment(" ", base), Segment(" ", base + self.get_component_rich_style(name))])
                                 for name in ("turn-log--track", "turn-log--thumb"))
            self._edges = (track, thumb_cell)
        return self._edges[thumb]

    def _blank_line(self) -> Strip:
        """An empty line in the current look, made once (half a pane of them follow a jump)."""
        look = self._look()
        if self._blank is None or self._blank.cell_length != look[0]:
            self._blank = Strip.blank(look[0], look[1])
        return self._blank

    def on_mount(self) -> None:
        self.set_interval(THUMB_S, self._sync_thumb)

    def on_resize(self) -> None:
        self._look_cache = None
        self._rebuild()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._look_cache = self._blank = self._edges = None
        self.call_after_refresh(self._restyle)

    def _restyle(self) -> None:
        if self._look() != self._drawn_for:  # a new theme: lines drawn in the old one are drawn again
            self._rebuild()
