"""The agent pane's turn log: live Markdown by blocks, following the end, leaving a reader alone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from textual import events
from textual.app import App, ComposeResult
from textual.geometry import Offset, Region
from textual.pilot import Pilot
from textual.selection import Selection
from textual.widget import Widget

from debate_tui.ui.widgets.turn_log import TurnLog, boundaries

WIDTH, VIEW = 30, 8
PARAGRAPH = "The summary keeps the main event and names the people, **but** it repeats one sentence. "


class LogApp(App):
    CSS = f"TurnLog {{ width: {WIDTH + 3}; height: {VIEW}; }}"  # a margin, a gap and a one-cell scroll bar

    def compose(self) -> ComposeResult:
        yield TurnLog(keep=3)


@asynccontextmanager
async def open_log() -> AsyncIterator[tuple[Pilot, TurnLog]]:
    """A mounted, sized log in a headless app."""
    app = LogApp()
    async with app.run_test(size=(60, 30)) as pilot:
        await pilot.pause()
        yield pilot, app.query_one(TurnLog)


def texts(log: TurnLog) -> list[str]:
    return [log.line_text(index) for index in range(log.line_count)]


def visible(log: TurnLog) -> list[str]:
    """The rows in view as drawn, margin cut off."""
    return [log.render_line(y).text[1:].rstrip() for y in range(VIEW)]


def test_blocks_end_at_blank_lines_and_list_items_but_never_inside_a_code_fence() -> None:
    assert list(boundaries("One.\n\nTwo", 0)) == [(6, True)]
    assert list(boundaries("- a\n- b\n- c", 0)) == [(4, False), (8, False)]
    assert list(boundaries("Intro\n1. first", 0)) == [(6, False)]
    assert list(boundaries("```\ncode\n\nmore\n```\n\nafter", 0)) == [(20, True)]
    assert list(boundaries("```\ncode\n\nstill code", 0)) == []
    assert list(boundaries("A paragraph\nstill the same one", 0)) == []
    assert list(boundaries("Done.\n\nNext", 6)) == [], "only what follows `start` is looked at"


REPLY = f"Intro line.\n\n{PARAGRAPH}\n\n- one {PARAGRAPH}\n- two\n- three\n\n```\nx = 1\n\ny = 2\n```\n\nScore: 4"


async def test_a_finished_turn_keeps_the_lines_it_streamed_rendered_block_by_block() -> None:
    async with open_log() as (pilot, log):
        log.begin(1, "round 1")
        for start in range(0, len(REPLY) - 3, 7):  # the last characters never reach the pane while it streams
            log.append(REPLY[start:start + 7])
        live = texts(log)
        assert log.live is not None
        settled = [part.lines for part, _ in log.live.blocks]
        assert len(settled) >= 6, "paragraphs, list items and the fence were settled one by one"
        log.add_turn("round 1 · score 4", REPLY)
        finished = texts(log)
        kept = [part.lines for part, _ in log.entries[0].blocks][:len(settled)]
        log.add_turn("round 2", REPLY)  # never streamed: rendered from the reply, the same way
        fresh = texts(log)[len(finished):]
    assert all(a is b for a, b in zip(kept, settled, strict=True)), "the settled blocks were not rendered again"
    assert finished[0] == "round 1 · score 4" and live[0] == "round 1"
    assert finished[1:-2] == live[1:-1] and finished[-2] == "Score: 4" and finished[-1] == "", \
        "the streamed lines stay where they were; the missing end completes the last one"
    assert fresh[1:] == finished[1:], "a turn that did not stream looks the same"
    assert not any(a == b == "" for a, b in zip(live, live[1:], strict=False)), "one blank line at most between blocks"
    assert " • one The summary keeps the" in finished and " x = 1" in finished
    assert not any("**" in line for line in finished), "Markdown is rendered, not shown as source"


async def test_each_line_carries_its_offsets_and_a_selection_is_drawn_and_extracted_as_shown() -> None:
    async with open_log() as (pilot, log):
        log.add_turn("round 1", PARAGRAPH)
        await pilot.pause()
        row = list(log.render_line(1))
        offsets = [segment.style.meta.get("offset") if segment.style else None for segment in row]
        assert offsets[0] is None and offsets[-1] is None, "the margin and the scroll bar are not text"
        assert offsets[1] == (0, 1), "the text starts at column 0 of line 1"
        assert log.render_line(1) is log.render_line(1), "an unchanged row is the same strip"

        pilot.app.screen.selections = {log: Selection.from_offsets(Offset(4, 1), Offset(9, 2))}
        await pilot.pause()
        selected = log.get_selection(pilot.app.screen.selections[log])
        drawn = log.render_line(1)
        style = pilot.app.screen.get_component_rich_style("screen--selection")
    lines = texts(log)
    assert selected == (lines[1][4:] + "\n" + lines[2][:9], "\n")
    assert drawn.text[1:].rstrip() == lines[1], "the selection restyles, the text stays"
    styled = [segment.text for segment in drawn if segment.style and segment.style.bgcolor == style.bgcolor]
    assert "".join(styled).rstrip() == lines[1][4:], "from the selection's start to the line's end"


async def test_the_log_follows_the_end_by_jumping_and_lands_the_last_line_at_the_bottom() -> None:
    async with open_log() as (pilot, log):
        log.begin(1, "round 1")
        for _ in range(12):
            log.append(PARAGRAPH)
            newest = texts(log)[-1]
            assert newest in visible(log), "the newest line is always in view"
        assert log.scroll_y > 0 and visible(log)[-1] == "", "a jump leaves room below the newest line"
        log.add_turn("round 1 · score 4", PARAGRAPH * 12)
        await pilot.pause()
        assert visible(log)[-2:] == [texts(log)[-2], ""], "at the turn's end the last line sits at the bottom"
        assert log.allow_vertical_scroll


async def test_new_text_repaints_the_lines_it_changed_where_they_are_in_view(monkeypatch: pytest.MonkeyPatch) -> None:
    async with open_log() as (pilot, log):
        log.begin(1, "round 1")
        while log.scroll_y == 0 or len(texts(log)) + 2 > log.scroll_y + VIEW:  # past a jump, with room below
            log.append(PARAGRAPH)
            await pilot.pause()
        top, before = int(log.scroll_y), texts(log)
        repainted: list[Region] = []
        monkeypatch.setattr(log, "refresh", lambda *regions, **kwargs: repainted.extend(regions))
        log.append("more words")
        after = texts(log)
        first = next(y for y, (a, b) in enumerate(zip(before + [None], after, strict=False)) if a != b)
        assert log.scroll_y == top and top < first < len(after), "the text grew in view, the view did not move"
        assert [(r.y, r.height) for r in repainted] == [(first - top, len(after) - first)], \
            "from the first changed line down, in view coordinates"


async def test_a_reader_scrolled_up_is_not_moved_while_text_arrives() -> None:
    async with open_log() as (pilot, log):
        log.begin(1, "round 1")
        log.append(PARAGRAPH * 6)
        await pilot.pause()
        log.scroll_to(y=0, animate=False, immediate=True)
        shown = visible(log)
        for _ in range(6):
            log.append(PARAGRAPH)
        log.add_turn("round 1 · score 4", PARAGRAPH * 12)
        await pilot.pause()
        assert log.scroll_y == 0 and visible(log)[1:] == shown[1:]
        log.scroll_end(animate=False, immediate=True)
        log.begin(2, "round 2")
        log.append(PARAGRAPH * 3)
        assert texts(log)[-1] in visible(log), "back at the end, it follows again"


async def test_the_log_draws_its_own_scroll_bar_the_wheel_scrolls_and_a_click_on_the_bar_moves_there() -> None:
    async with open_log() as (pilot, log):
        log.add_turn("round 1 · score 4", PARAGRAPH * 12)
        await pilot.pause()
        thumb = log.get_component_rich_style("turn-log--thumb").bgcolor

        def bar() -> str:
            cells = [list(log.render_line(y))[-1].style for y in range(VIEW)]
            return "".join("#" if cell is not None and cell.bgcolor == thumb else "." for cell in cells)

        assert log.render_line(0).cell_length == WIDTH + 3 and texts(log)[-2] in visible(log)
        assert bar().endswith("#") and bar().startswith("."), "at the end: the thumb at the bottom of the bar"
        for _ in range(40):
            log.post_message(events.MouseScrollUp(log, 1, 1, 0, -1, 0, False, False, False))
        await pilot.pause()
        assert log.scroll_y == 0 and bar().startswith("#") and bar().endswith("."), "wheel up to the top"
        await pilot.click(TurnLog, offset=(log.outer_size.width - 1, VIEW - 1))
        assert log.scroll_y == log.max_scroll_y > 0 and bar().endswith("#"), "a click at the bar's foot: the end"
        await pilot.click(TurnLog, offset=(log.outer_size.width - 2, 0))
        assert log.scroll_y == log.max_scroll_y, "a click beside the bar scrolls nothing"


async def test_old_turns_are_dropped_with_a_note_and_no_textual_scroll_bar_comes_and_goes() -> None:
    """The log scrolls with no Textual bar at all: one that came and went laid out the screen, and one always
    on (of no width) moved with every jump of the view, which had the screen arrange every widget again."""
    async with open_log() as (pilot, log):
        log.add_turn("round 1", "Short.")
        await pilot.pause()
        assert log.allow_vertical_scroll and not log.show_vertical_scrollbar
        assert log.max_scroll_y == 0 and texts(log)[:2] == ["round 1", "Short."]
        for round_ in range(2, 6):
            log.add_turn(f"round {round_}", "Short.")
        assert len(log.entries) == 3 and log.dropped == 2
        assert " ".join(texts(log)[:2]) == "… 2 earlier turn(s) hidden; the report has them all"


@pytest.mark.parametrize("no_color", [False, True])
async def test_the_log_hands_over_rows_as_textuals_styling_pass_draws_them_and_moved_rows_are_not_redrawn(
        no_color: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")  # Textual then applies a line filter to every row
    async with open_log() as (pilot, log):
        view = Region(0, 0, WIDTH + 3, VIEW)
        log.add_turn("round 1", (PARAGRAPH + "\n\n") * 20)
        log.begin(2, "round 2")
        log.append(PARAGRAPH)
        await pilot.pause()
        assert any(type(f).__name__ == "Monochrome" for f in log.get_line_filters()) == no_color

        def textuals_pass() -> list:
            log.refresh()  # Textual's own cache forgets every row: its pass draws the view from scratch
            return Widget.render_lines(log, view)

        assert log.render_lines(view) == textuals_pass()
        log.scroll_to(y=2, animate=False)
        await pilot.pause()
        before = {id(line) for line in log.render_lines(view)}
        log.scroll_to(y=4, animate=False)  # six of the eight rows move up two places
        await pilot.pause()
        moved = log.render_lines(view)
        assert len({id(line) for line in moved} & before) >= VIEW - 2 - 2, \
            "rows that only moved are handed over as they were (all but the two new and the thumb's)"
        assert moved == textuals_pass()

        log.app.theme = "textual-light" if log.app.theme != "textual-light" else "textual-dark"
        await pilot.pause()
        shown = log.render_lines(view)
        assert shown == textuals_pass(), "a new theme repaints the log in its colours"


async def test_a_single_newline_in_a_reply_is_a_line_break_so_a_report_keeps_its_lines() -> None:
    """Issue 46: MATEval's Summarizer report (Q/A/Location/Deduction) showed as one run-on paragraph, and
    "Score: 3" merged into the sentence before it."""
    report = "Q: Is a sentence repeated?\nA: Yes\nLocation: Tom swam.\nDeduction: -1"
    async with open_log() as (pilot, log):
        log.add_turn("round 1", report)
        log.add_turn("round 2", "It reads well.\nScore: 3")
        await pilot.pause()
        lines = texts(log)
    assert lines[1:5] == ["Q: Is a sentence repeated?", "A: Yes", "Location: Tom swam.", "Deduction: -1"], lines
    assert "Score: 3" in lines and "It reads well." in lines, lines
