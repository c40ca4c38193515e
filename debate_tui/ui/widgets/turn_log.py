"""An agent's turns as lines: every finished turn rendered once, the live turn growing by its last block.

A pane's turns used to be widgets (a Markdown tree for the live turn, a Static
per finished turn). Each append then re-measured Rich Markdown and reflowed
the whole screen, so five streaming panes kept the event loop busy and a key
press waited for the next frame. Here a pane's turns are one Line API widget
of fixed size: text is rendered to strips once per width, growth touches only
the lines that changed, and nothing outside the pane is laid out again.

A turn is Markdown rendered block by block: a block is settled once a blank
line or a new list item (outside a code fence) follows it, and rendered once;
only the unsettled tail of the live turn is rendered again as text arrives.
Finished turns are rendered the same way, so a turn that ends keeps the lines
it streamed (nothing moves, nothing is rendered twice). Rich spaces a few
constructs differently when it renders a reply whole (a list right after a
paragraph, a fence): the review report shows replies whole.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from copy import copy
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple

from markdown_it import MarkdownIt
from rich.console import RenderableType
from rich.markdown import Markdown
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.color import Color
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from debate_tui.textsafe import inert

FENCES = ("```", "~~~")
THUMB_S = 1.0
"""How often a growing log's scroll thumb may move: its rows are repainted when it does."""
MARGIN = 1
"""Columns left of the text: a blank one."""
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


def boundaries(text: str, start: int) -> Iterator[tuple[int, bool]]:
    """Each block end in `text[start:]` outside a code fence, in order: where the next block starts,
    and whether a blank line separates them. `start` must be outside a fence."""
    fence_lines, scanned = 0, start
    for match in BOUNDARY.finditer(text, start):
        fence_lines += sum(line.lstrip().startswith(FENCES) for line in text[scanned:match.start()].split("\n"))
        scanned = match.start()
        if fence_lines % 2 == 0:
            yield match.end(), len(match.group()) > 1


@dataclass
class Part:
    """Something shown in the log, rendered to strips at most once per width and theme."""

    build: Callable[[], RenderableType]
    """Makes the renderable when it is drawn, so theme styles are read then, not when the text arrived."""
    trim: bool = False
    """Drop blank lines around it: a block of a turn, spaced by the log rather than by Rich."""
    drawn_for: tuple = ()
    """The look `lines` were rendered for."""
    lines: list[Strip] = field(default_factory=list)


@dataclass
class TurnView:
    """A turn as shown: its heading, its settled blocks (each rendered once), the tail, an error."""

    heading: Part
    slot: int | None = None
    """The engine's slot of the live turn."""
    source: str = ""
    settled: int = 0
    """`source[:settled]` is in `blocks`; the rest is the tail."""
    blocks: list[tuple[Part, bool]] = field(default_factory=list)
    """Each settled block, and whether a blank line precedes it."""
    gap: bool = False
    """Whether a blank line precedes the tail."""
    error: Part | None = None

    def settle(self, final: bool = False) -> None:
        """Move the blocks a boundary closed out of the tail; when the turn is over (`final`), the tail too."""
        for end, blank in boundaries(self.source, self.settled):
            self._add_block(end)
            self.gap = blank or self.gap
        if final:
            self._add_block(len(self.source))

    def _add_block(self, end: int) -> None:
        block = self.source[self.settled:end].strip("\n")
        if block:
            self.blocks.append((Part(lambda: markdown(block), trim=True), self.gap))
            self.gap = False
        self.settled = end


class Look(NamedTuple):
    """What rendered lines depend on besides their text."""

    width: int
    base: Style
    background: Color
    """The log's background, which the app's line filters are given."""
    styles: dict[str, Style]
    """The component classes' styles."""


class TurnLog(ScrollView, can_focus=False):
    """Finished turns, then the live one, as strips; follows the newest text while scrolled to the end.

    It draws its own rows, margin and scroll bar included (`render_lines`). Textual's bar (a widget
    beside the text, drawn line by line with every repaint, and cutting each screen row in two more
    places) was a quarter of the screen's cost while five panes streamed, and its per-row styling
    pass (padding, borders, tint) cost 40 us a row, a whole pane of rows after each jump. Textual's
    scrolling stays: its bar has no width (`scrollbar-size-vertical: 0`) but is always on
    (`overflow-y: scroll`), so the mouse wheel scrolls, and no bar coming and going lays out the
    screen at a turn's start or end. A click on the drawn bar scrolls to that place.
    """

    COMPONENT_CLASSES = {"turn-log--heading", "turn-log--error", "turn-log--note", "turn-log--track",
                         "turn-log--thumb"}
    DEFAULT_CSS = """
    TurnLog { overflow-x: hidden; overflow-y: scroll; scrollbar-size-vertical: 0; padding: 0; }
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
        self._note: list[Part] = []
        """Says how many turns were dropped, once there are any."""
        self.entries: list[TurnView] = []
        self.live: TurnView | None = None
        self._finished: list[Strip] = []
        self._lines: list[Strip] = []
        self._drawn_for: Look | None = None
        self._look_cache: Look | None = None
        self._blank: Strip | None = None
        self._rows: dict[tuple[int, bool], tuple[Strip, Strip]] = {}
        """Each line as a row (margin, line, gutter with track or thumb), by the line's id and the thumb:
        a line keeps its row, and the row its filtered copies, however often it is drawn or moved."""
        self._top = 0
        """Where `_place` left the view: a different `scroll_y` means the reader scrolled."""
        self._following = True
        self._thumb_drawn = (0, 0)
        """The rows of the view the scroll thumb was last drawn on (`_thumb` is where it belongs now)."""
        self._thumb_moved = 0.0
        """When streamed text last let the thumb move (`time.monotonic`)."""

    # ----- what the pane tells it ---------------------------------------------------

    def add_turn(self, heading: str, content: str, error: str | None = None) -> None:
        """A finished turn (heading, the reply as Markdown, the error if any), in place of the live one.

        One step, not two: the log never shrinks in between, so its scroll bar does not blink out and back.
        When the reply continues what was streamed, the turn keeps the blocks already rendered and
        renders only the rest: the panes' turns often end together, and rendering five replies in
        one go held a key press for a tenth of a second.
        """
        text, live, title = inert(content), self.live, Part(lambda: self._heading(heading))
        turn = live if live is not None and text.startswith(live.source) else TurnView(title)
        turn.heading, turn.source, turn.slot = title, text, None
        turn.settle(final=True)
        if error:
            turn.error = Part(lambda: Text(inert(error), style=self.get_component_rich_style("turn-log--error")))
        self.entries.append(turn)
        if len(self.entries) > self.keep:
            del self.entries[0]
            self.dropped += 1
            note = f"… {self.dropped} earlier turn(s) hidden; the report has them all"
            self._note = [Part(lambda: Text(note, style=self.get_component_rich_style("turn-log--note")))]
        self.live = None
        self._rebuild()

    def begin(self, slot: int, heading: str) -> None:
        self.live = TurnView(Part(lambda: self._heading(heading)), slot)
        self._rebuild()

    def end(self) -> None:
        """Drop the live turn, leaving nothing in its place."""
        self.live = None
        self._rebuild()

    def append(self, text: str) -> None:
        """More of the live turn: settle the blocks a boundary closed, re-render only the tail."""
        live = self.live
        if live is None or not text:
            return
        live.source += inert(text)
        live.settle()
        self._rebuild(live_only=True)

    # ----- rendering --------------------------------------------------------------

    def _heading(self, heading: str) -> Text:
        return Text(inert(heading), style=self.get_component_rich_style("turn-log--heading"))

    def _look(self) -> Look:
        """Kept until the size or the styles change: reading the styles cost more than a flush's new text."""
        if self._look_cache is None:
            self._look_cache = Look(self.scrollable_content_region.width - MARGIN - GUTTER, self.rich_style,
                                    self.background_colors[1],
                                    {name: self.get_component_rich_style(name) for name in self.COMPONENT_CLASSES})
        return self._look_cache

    def _strips(self, part: Part, look: Look) -> list[Strip]:
        if part.drawn_for != look:
            part.drawn_for, part.lines = look, self._render(part.build(), look, part.trim)
        return part.lines

    def _render(self, renderable: RenderableType, look: Look, trim: bool = False) -> list[Strip]:
        options = self.app.console_options.update(highlight=False, width=look.width, height=None)
        lines = [Strip(line, look.width) for line in
                 self.app.console.render_lines(renderable, options, style=look.base, new_lines=False)]
        if trim:
            filled = [index for index, line in enumerate(lines) if line.text.strip()]
            lines = lines[filled[0]:filled[-1] + 1] if filled else []
        return lines

    def _turn_lines(self, turn: TurnView, look: Look) -> list[Strip]:
        """A turn under its heading: the settled blocks as rendered once, the tail rendered now."""
        gap = self._blank_line()
        lines = [*self._strips(turn.heading, look)]
        for index, (block, gap_before) in enumerate(turn.blocks):
            if index and gap_before:
                lines.append(gap)
            lines.extend(self._strips(block, look))
        tail = turn.source[turn.settled:].strip("\n")
        if tail:
            if turn.blocks and turn.gap:
                lines.append(gap)
            lines.extend(self._render(markdown(tail), look, trim=True))
        if turn.error is not None:
            lines.extend(self._strips(turn.error, look))
        return lines

    def _rebuild(self, live_only: bool = False) -> None:
        """Recompute the lines; repaint only those that changed, lay out only when the height did."""
        look = self._look()
        if look.width <= 0:
            return
        if not live_only or look != self._drawn_for:
            notes = [line for part in self._note for line in self._strips(part, look)]
            self._finished = notes + [line for turn in self.entries
                                      for line in (*self._turn_lines(turn, look), self._blank_line())]
        old = self._lines
        self._drawn_for = look
        self._lines = self._finished + (self._turn_lines(self.live, look) if self.live else [])
        if len(self._rows) > 2 * len(self._lines) + 64:  # forget the rows of lines gone
            kept = {id(line) for line in self._lines}
            self._rows = {key: row for key, row in self._rows.items() if key[0] in kept}
        if self._place(settle=not live_only):
            self.refresh()
        else:
            first = next((y for y, (a, b) in enumerate(zip(old, self._lines)) if a is not b and a.text != b.text),
                         min(len(old), len(self._lines)))
            first = max(first, int(self.scroll_y))  # lines above the view need no repaint
            self.refresh_lines(first, max(len(old), len(self._lines)) - first)
        now = time.monotonic()
        if not live_only or now - self._thumb_moved >= THUMB_S:
            self._thumb_moved = now
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
        size = Size(self._drawn_for.width if self._drawn_for else 0, height)
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
            self.refresh(*(Region(self._bar_x, y, 1, 1) for y in set(range(*old)) ^ set(range(*new))))

    def on_click(self, event: events.Click) -> None:
        """A click on the scroll bar scrolls there (the thumb is drawn, not a widget: it cannot be dragged)."""
        at = event.get_content_offset(self)
        if at is not None and at.x == self._bar_x:
            event.stop()
            view = self.scrollable_content_region.height
            self.scroll_to(y=self.max_scroll_y * at.y / max(1, view - 1), animate=False)

    @property
    def _bar_x(self) -> int:
        """The scroll bar's column: the last of every row."""
        return self.scrollable_content_region.width - 1

    def watch_scroll_y(self, old: float, new: float) -> None:
        """The reader scrolled (the log's own moves are quiet): the whole view, thumb included, is redrawn."""
        super().watch_scroll_y(old, new)
        self._thumb_drawn = self._thumb()

    def render_lines(self, crop: Region) -> list[Strip]:
        """The rows in `crop`, with the app's line filters (as Textual's styling pass would apply them)."""
        background = self._look().background
        rows = [self.render_line(y) for y in crop.line_range]
        for line_filter in self.app.get_line_filters():
            rows = [row.apply_filter(line_filter, background) for row in rows]
        if crop.x or crop.width != self.size.width:
            rows = [row.crop(crop.x, crop.right) for row in rows]
        return rows

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_y) + y
        line = self._lines[index] if index < len(self._lines) else self._blank_line()
        start, end = self._thumb_drawn
        key = (id(line), start <= y < end)
        row = self._rows.get(key)
        if row is None or row[0] is not line:
            row = self._rows[key] = (line, self._row(line, key[1]))
        return row[1]

    def _row(self, line: Strip, thumb: bool) -> Strip:
        """A line as drawn: the margin, the text, the gap and the scroll bar's cell (track or thumb)."""
        look = self._look()
        bar = look.base + look.styles["turn-log--thumb" if thumb else "turn-log--track"]
        return Strip([Segment(" " * MARGIN, look.base), *line, Segment(" " * (GUTTER - 1), look.base),
                      Segment(" ", bar)], MARGIN + line.cell_length + GUTTER)

    def _blank_line(self) -> Strip:
        """An empty line in the current look, made once (half a pane of them follow a jump)."""
        look = self._look()
        if self._blank is None or self._blank.cell_length != look.width:
            self._blank = Strip.blank(look.width, look.base)
        return self._blank

    def on_resize(self) -> None:
        self._look_cache = None
        self._rebuild()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._look_cache = self._blank = None
        self._rows.clear()
        self.call_after_refresh(self._restyle)

    def _restyle(self) -> None:
        if self._look() != self._drawn_for:  # a new theme: lines drawn in the old one are drawn again
            self._rebuild()
