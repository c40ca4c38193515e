"""Reports and export as a first-time user meets them (issue 18): the judged text in every report, every
protocol's quotes located, Enter exports, an existing file is replaced only on a yes, the name says the protocol."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import DataTable

from debate_tui.domain import Session, Turn
from debate_tui.locations import examples_dir
from debate_tui.report.markdown import digest, render
from debate_tui.report.quotes import TEXT_SHOWN_CHARS, quoted_passages
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from debate_tui.ui.screens.dialogs import ConfirmDialog, ExportDialog
from tests.helpers.sessions import make_session
from tests.helpers.ui import report_built, wait_until

EXAMPLES = sorted(examples_dir().glob("*.json"))


def example(name: str) -> Session:
    return Session.model_validate_json((examples_dir() / f"{name}-example.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_report_holds_the_judged_text_with_line_numbers(path: Path):
    session = Session.model_validate_json(path.read_text(encoding="utf-8"))
    report = render(session)
    assert "## The text judged" in report
    first_line = session.task.text.split("\n")[0]
    assert f"> 1: {first_line}" in report
    if session.task.text_b is not None:
        assert "**Text 2**" in report and f"> 1: {session.task.text_b.split(chr(10))[0]}" in report


def test_a_long_text_is_shown_in_part_with_its_digest():
    text = "\n".join(f"Line {n} of a long story that goes on." for n in range(1, 2001))
    session = make_session(text=text)
    report = render(session)
    assert re.search(r"^> +1: Line 1 of a long", report, re.M) and "2000: Line" not in report
    shown = report.count("of a long story")
    assert shown * 38 <= TEXT_SHOWN_CHARS + 38
    assert f"({2000 - shown} more lines not shown; the whole text has sha256 `{digest(text)}`.)" in report


def test_a_critics_quote_is_located_like_matevals_errors():
    session = make_session()
    session.turns = [
        Turn(slot=0, agent="Scorer", role="scorer", round=0, content="Coherent enough. Score: 4", score=4),
        Turn(slot=1, agent="Critic", role="critic", round=1, content=(
            'Too generous: "He went to the pool every morning." appears twice, and “after a month he could swim” '
            'comes without a word about the lessons. "A sentence that is not in the text at all." proves nothing.')),
    ]
    quotes = quoted_passages(session)
    assert [(q.quote, q.explanation) for q in quotes] == [
        ("He went to the pool every morning.", "Critic, round 1"),
        ("After a month he could swim", "Critic, round 1"),
    ]
    text = session.task.text
    assert all(text[q.start:q.end] == q.quote for q in quotes)
    report = render(session)
    assert '| 1 | Critic, round 1 | 1:30 | "He went to the pool every morning." |' in report


def test_matevals_located_errors_are_not_listed_again_as_quotes():
    session = example("mateval")
    located = {(e.which, e.start) for e in session.outcome.errors if e.located}
    assert located and not located & {(q.which, q.start) for q in quoted_passages(session)}


async def test_the_report_screen_paints_the_quotes_focuses_the_report_and_enter_exports_by_protocol(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    session = example("chateval")
    app = DebateTUI(Launch(sessions_dir=tmp_path / "sessions"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.open_report(session)
        await report_built(pilot, what="the report")
        await pilot.pause()
        report = app.screen
        assert app.focused.id == "report-scroll"
        table = report.query_one("#error-table", DataTable)
        assert table.row_count == 1 and "quoted" in str(table.get_row_at(0)[1])
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ExportDialog), what="the export dialog")
        await pilot.press("enter")
        target = tmp_path / f"chateval-{session.id}.md"
        await wait_until(pilot, target.exists, what="the export named after the protocol")
        assert "## The text judged" in target.read_text(encoding="utf-8")

        target.write_text("mine", encoding="utf-8")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ExportDialog), what="the export dialog")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        await pilot.press("n")
        await report_built(pilot, what="back to the report")
        await pilot.pause(0.2)
        assert target.read_text(encoding="utf-8") == "mine"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ExportDialog), what="the export dialog")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: target.read_text(encoding="utf-8") != "mine", what="the replacement")


def test_the_judged_texts_lines_stay_lines_in_any_markdown_viewer():
    """Issue 33 #7: `> N:` lines without hard breaks were merged into one paragraph by every viewer."""
    from markdown_it import MarkdownIt

    text = "Tom wanted to swim.\nHe went to the pool every morning.   \nAfter a month he could swim."
    report = render(make_session(text=text))
    judged = report.split("## The text judged", 1)[1].split("\n## ", 1)[0]
    html = MarkdownIt("commonmark").render(judged)
    assert html.count("<blockquote>") == 1 and html.count("<br />") == 2
    for number, line in enumerate(text.split("\n"), start=1):
        assert f"{number}: {line.strip()}" in html


@pytest.mark.parametrize("keys", [["pagedown"], ["down", "down", "down"], ["j", "j", "j"]])
async def test_after_switching_tabs_the_keys_scroll_the_tab_on_show(keys):
    """Issue 33 #8: after `2` then `1`, PageDown, Down and j no longer scrolled the report (the mouse wheel did)."""
    session = example("mateval")
    app = DebateTUI(Launch())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.open_report(session)
        await report_built(pilot, what="the report")
        await pilot.pause()
        await pilot.press("2")
        await pilot.pause()
        assert app.focused is not None and app.focused.id == "error-table"
        await pilot.press("1")
        await pilot.pause()
        scroll = app.screen.query_one("#report-scroll")
        assert app.focused is scroll and scroll.scroll_y == 0
        await pilot.press(*keys)
        await wait_until(pilot, lambda: scroll.scroll_y > 0, what=f"{keys[0]} scrolling the report")
