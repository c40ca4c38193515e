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
from typing import Any, NamedTuple

from markdown_it import MarkdownIt
from rich.cells import cell_len
from rich.console import RenderableType
from rich.markdown import Markdown
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.color import Color
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.selection import Selection
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
    """Model text as Markdown: control characters shown, links printed but never made clickable, and each
    single newline kept as a line break (Markdown would join the lines of a report such as MATEval's
    "Q: ... / A: ... / Location: ... / Deduction: ..." into one run-on paragraph).

    Rich builds a markdown-it parser for every document, which costs more than parsing a
    paragraph; the live tail is parsed several times a second, so one parser (configured as
    Rich configures its own) serves every document.
    """
    document, parser = _blank_markdown()
    document = copy(document)
    document.markup = inert(text)
    document.parsed = parser.parse(document.markup)
    for token in document.parsed:
        for child in token.children or ():
            if child.type == "softbreak":  # a model's single newline ends its line ("Score: 3" under its reason)
                child.type = "hardbreak"
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
    drawn_for: Look | None = None
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
    styles: dict[str, Style]
    """The component classes' styles."""


class TurnLog(ScrollView, can_focus=False):
    """Finished turns, then the live one, as strips; follows the newest text while scrolled to the end.

    A Line API widget (`render_line`): each row is the margin, a line of text and the log's own
    one-column scroll bar. Textual's bar (a widget beside the text, drawn again with every repainted
    row) was a quarter of the screen's cost while five panes streamed. Textual's scrolling stays without
    its bar (`allow_vertical_scroll`), so the mouse wheel and `scroll_to` work, and no bar coming and
    going lays out the screen at a turn's start or end. A click on the drawn bar scrolls to that place.
    Text is selectable with the mouse (Textual's `get_selection` hook; ctrl+c copies it): each line
    carries its offsets, the margin and bar none.
    """

    COMPONENT_CLASSES = {"turn-log--heading", "turn-log--error", "turn-log--note", "turn-log--track",
                         "turn-log--thumb"}
    DEFAULT_CSS = """
    TurnLog { overflow-x: hidden; overflow-y: hidden; padding: 0; }
    TurnLog > .turn-log--track { background: $scrollbar-background; }
    TurnLog > .turn-log--thumb { background: $scrollbar; }
    TurnLog > .turn-log--heading { color: $primary; text-style: bold; }
    TurnLog > .turn-log--error { color: $error; }
    TurnLog > .turn-log--note { color: $text-muted; text-style: italic; }
    """

    def __init__(self, *, keep: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.keep = keep
        """How many finished turns stay in the log; older ones are counted, the report has them."""
        self.dropped = 0
        self.entries: list[TurnView] = []
        self.live: TurnView | None = None
        self._note: list[Part] = []
        """Says how many turns were dropped, once there are any."""
        self._finished: list[Strip] = []
        self._lines: list[Strip] = []
        self._drawn_for: Look | None = None
        self._look_cache: Look | None = None
        self._blank: Strip | None = None
        self._rows: dict[tuple[int, int, bool], tuple[Strip, Strip]] = {}
        """Each line as a row (margin, line with its offsets, gutter, track or thumb), by the line's id, its
        index and the thumb: a line keeps its row however often it is drawn or moved."""
        self._styled: dict[int, tuple[Strip, Strip]] = {}
        """Each row with the app's line filters applied, by the row's id (see `render_lines`)."""
        self._styled_for: tuple[object, ...] = ()
        """The line filters `_styled` holds rows for."""
        self._top = 0
        """Where `_place` left the view: a different scroll position means the reader scrolled."""
        self._following = True
        self._thumb_drawn = (0, 0)
        """The rows of the view the scroll thumb was last drawn on (`_thumb` is where it belongs now)."""
        self._thumb_top = 0
        """The scroll position `_thumb_drawn` was drawn for: a scroll repaints the view, thumb included."""
        self._thumb_moved = 0.0
        """When streamed text last let the thumb move (`time.monotonic`)."""
        self._selection: Selection | None = None
        """The text selected in the log, if any (lines by index, characters by offset)."""

    @property
    def allow_vertical_scroll(self) -> bool:
        """Scrolls with no Textual scroll bar (`overflow-y: hidden`). A bar of no width, always on, was
        still a widget off the screen's map: each move of the view moved it, that invalidated the map,
        and the next repaint arranged every widget on the screen again (85 times in a 10 s debate)."""
        return not self.is_disabled

    # ----- what the pane tells it ---------------------------------------------------

    def add_turn(self, heading: str, content: str, error: str | None = None) -> None:
        """A finished turn (heading, the reply as Markdown, the error if any), in place of the live one.

        One step, not two: the log never shrinks in between, so the view does not jump. When the reply
        continues what was streamed, the turn keeps the blocks already rendered and renders only the
        rest: the panes' turns often end together, and rendering five replies in one go held a key
        press for a tenth of a second.
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

    def line_text(self, index: int) -> str:
        """Line `index` of the log as shown, without the margin and bar ("" past the end)."""
        return self._lines[index].text.rstrip() if 0 <= index < len(self._lines) else ""

    @property
    def line_count(self) -> int:
        return len(self._lines)

    # ----- rendering --------------------------------------------------------------

    def _heading(self, heading: str) -> Text:
        return Text(inert(heading), style=self.get_component_rich_style("turn-log--heading"))

    def _look(self) -> Look:
        """Kept until the size or the styles change: reading the styles cost more than a flush's new text."""
        if self._look_cache is None:
            self._look_cache = Look(self.scrollable_content_region.width - MARGIN - GUTTER, self.rich_style,
                                    {name: self.get_component_rich_style(name) for name in self.COMPONENT_CLASSES})
        return self._look_cache

    def _strips(self, part: Part, look: Look) -> list[Strip]:
        if part.drawn_for != look:
            part.drawn_for, part.lines = look, self._draw(part.build(), look, part.trim)
        return part.lines

    def _draw(self, renderable: RenderableType, look: Look, trim: bool = False) -> list[Strip]:
        """A renderable as lines of the log's width (`trim`: without blank lines around it)."""
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
            lines.extend(self._draw(markdown(tail), look, trim=True))
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
        old, restyled = self._lines, self._drawn_for not in (None, look)
        self._drawn_for = look
        self._lines = self._finished + (self._turn_lines(self.live, look) if self.live else [])
        if len(self._rows) > 2 * len(self._lines) + 64:  # forget the rows of lines gone
            kept = {id(line) for line in self._lines} | {id(self._blank_line())}
            self._rows = {key: row for key, row in self._rows.items() if key[0] in kept}
            self._forget_styled()
        if restyled:  # a new theme or width: every line is drawn anew, with the same text
            self._place(settle=not live_only)
            self.refresh()
        elif not self._place(settle=not live_only):
            pairs = enumerate(zip(old, self._lines, strict=False))
            changed = (y for y, (a, b) in pairs if a is not b and a.text != b.text)
            first = next(changed, min(len(old), len(self._lines)))
            first = max(first, self.scroll_offset.y)  # lines above the view need no repaint
            self.refresh_lines(first, max(len(old), len(self._lines)) - first)
        now = time.monotonic()
        if not live_only or now - self._thumb_moved >= THUMB_S:
            self._thumb_moved = now
            self._sync_thumb()

    def _place(self, settle: bool) -> bool:
        """Size the scrollable area and move the view for the new lines; whether the view moved.

        While a turn streams, a log that follows its end jumps half a pane when the text reaches the
        bottom, rather than scrolling a line at a time: between jumps a flush repaints only the lines
        that changed, not the whole pane. When the turn ends (`settle`) the newest line goes to the bottom.
        """
        rows, view = len(self._lines), self.scrollable_content_region.height
        top = self.scroll_offset.y
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
        size = Size(self.scrollable_content_region.width, height)
        if size != self.virtual_size:
            # Set without the layout a `virtual_size` change asks for (a fifth of the UI's time with five
            # panes streaming): the log's size comes from the grid, never from its lines, and the scroll
            # range (`max_scroll_y`) is read from `virtual_size` itself. Textual's bar, which a layout
            # would resize, is always on and has no width.
            self.set_reactive(TurnLog.virtual_size, size)
        if top == self.scroll_offset.y:
            return False
        self.scroll_to(y=top, animate=False)  # the whole view is repainted
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

    def render_line(self, y: int) -> Strip:
        """Row `y` of the view: the margin, the line with its offsets (for selection), the gutter and bar."""
        top = self.scroll_offset.y
        if top != self._thumb_top:  # scrolled: Textual repaints the whole view, so the thumb moves now
            self._thumb_top, self._thumb_drawn = top, self._thumb()
        index = top + y
        start, end = self._thumb_drawn
        thumb = start <= y < end
        if index >= len(self._lines):  # below the text: a blank row, never selected
            line, index = self._blank_line(), -1
        else:
            line = self._lines[index]
            span = self._selection.get_span(index) if self._selection is not None else None
            if span is not None:
                return self._row(self._selected(line, span).apply_offsets(0, index), thumb)
        key = (id(line), index, thumb)
        row = self._rows.get(key)
        if row is None or row[0] is not line:
            row = self._rows[key] = (line, self._row(line if index < 0 else line.apply_offsets(0, index), thumb))
        return row[1]

    def render_lines(self, crop: Region) -> list[Strip]:
        """The view's rows as they are drawn, each row's kept while it lives.

        A row is whole (margin, text, gutter, bar, all in the log's styles) and the log sets no
        border, padding, tint or opacity, so Textual's styling pass would hand it over unchanged
        (a test holds the two equal): the log hands its rows over itself, with the app's line
        filters applied. Textual keeps styled rows by their place in the view, so a jump of half
        a pane, or a turn's end, sent every row of the view through that pass again although most
        rows had only moved; here a row that moved is the row it was.
        """
        filters = tuple(self.get_line_filters())
        if filters != self._styled_for:
            self._styled_for, self._styled = filters, {}
        if len(self._styled) > 2 * len(self._rows) + 64:  # selected rows are made afresh with every repaint
            self._forget_styled()
        background: Color | None = None
        lines = []
        for y in crop.line_range:
            row = self.render_line(y)
            kept = self._styled.get(id(row))
            if kept is None or kept[0] is not row:
                styled = row
                background = background or self.background_colors[1]
                for line_filter in filters:
                    styled = styled.apply_filter(line_filter, background)
                kept = self._styled[id(row)] = (row, styled)
            lines.append(kept[1])
        if crop.column_span != (0, self.outer_size.width):
            lines = [line.crop(*crop.column_span) for line in lines]
        return lines

    def _forget_styled(self) -> None:
        """Drop the styled rows of rows no longer kept."""
        rows = {id(row) for _, row in self._rows.values()}
        self._styled = {key: styled for key, styled in self._styled.items() if key in rows}

    def selection_updated(self, selection: Selection | None) -> None:
        """Kept for `render_line` (asking the screen for it walks up the DOM, once a row)."""
        self._selection = selection
        super().selection_updated(selection)

    def _selected(self, line: Strip, span: tuple[int, int]) -> Strip:
        """`line` with the characters in `span` (an end of -1: to the line's end) in the selection's style."""
        text = line.text
        start, end = span
        cuts = [cell_len(text[:start]), line.cell_length if end == -1 else cell_len(text[:end])]
        before, selected, after = line.divide([*cuts, line.cell_length])
        blended = self.screen.get_component_rich_style("screen--selection")
        declared = self.screen.get_component_rich_style("screen--selection", partial=True)
        style = Style(bgcolor=blended.bgcolor, color=declared.color)  # a transparent foreground keeps the text's
        return Strip.join([before, Strip(Segment.apply_style(selected, post_style=style), selected.cell_length), after])

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

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text as shown, line by line (trailing blanks dropped): what ctrl+c copies."""
        return selection.extract("\n".join(line.text.rstrip() for line in self._lines)), "\n"

    def on_resize(self) -> None:
        self._look_cache = None
        self._rebuild()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._look_cache = self._blank = None
        self._rows.clear()
        self._styled.clear()
        self.call_after_refresh(self._restyle)

    def _restyle(self) -> None:
        if self._look() != self._drawn_for:  # a new theme: lines drawn in the old one are drawn again
            self._rebuild()
