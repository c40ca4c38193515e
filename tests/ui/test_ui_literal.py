"""Model output and pasted text are shown as written: no markup, no actions, no terminal control."""

from __future__ import annotations

from textual.widgets import Markdown

from debate_tui.domain import Persona
from debate_tui.llm import DEMO_MODEL
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from debate_tui.ui.screens.debate import DebateScreen
from tests.helpers.sessions import make_session
from tests.helpers.ui import ScriptedClient, report_built, wait_until

HOSTILE = ("Look: [bold red]x[/] and [@click=app.quit]y[/] and \x1b[31mred\x1b[0m\x07 [site](https://example.com)"
           "\n\nScore: 3")


def screen_text(app) -> str:
    return app.export_screenshot()


async def test_model_output_with_markup_actions_and_escapes_is_shown_literally():
    session = make_session(rounds=1)
    session.agents[1].persona = Persona(name="[b]grumpy[/b]", role_prompt="Object to everything.")
    client = ScriptedClient([HOSTILE, "NO ISSUE"], hold_at=0, hold_after=(len(HOSTILE) - 1) // 6)
    app = DebateTUI(Launch(session=session, demo=False), client=client)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, client.held.is_set, what="the stream to hold before its last chunk")
        debate = app.screen
        pane = debate.panes["Scorer"]
        await wait_until(pilot, lambda: "\\x07" in pane.turns.live.source, what="the live text up to the hold")
        live = pane.turns.live.source
        assert "[bold red]x[/]" in live and "[@click=app.quit]y[/]" in live
        assert "\x1b" not in live and "\\x1b[31m" in live and "\\x07" in live
        assert "[b]grumpy[/b]" in str(debate.panes["Critic"].header.render())

        # clicking every cell of the live reply triggers nothing: no quit, no browser
        opened: list[str] = []
        app.open_url = lambda url, **kw: opened.append(url)  # type: ignore[method-assign]
        region = pane.turns.region
        for y in range(region.y, min(region.bottom, region.y + 3)):  # the reply's first lines hold the markup
            for x in range(region.x, region.right, 4):
                await pilot.click(offset=(x, y))
        assert app.is_running and opened == []

        client.release.set()
        await wait_until(pilot, lambda: debate.finished, what="the end")
        svg = app.export_screenshot().replace("&#160;", " ")
        assert "[bold red]x[/]" in svg and "[@click=app.quit]y[/]" in svg and "\\x1b[31mred" in svg
        assert "\x1b" not in svg and "\x07" not in svg
        assert "https://example.com" in svg, "links are printed, not hidden behind a clickable label"

        await pilot.press("r")
        await report_built(pilot)
        report = app.screen.query_one("#report-markdown", Markdown)
        assert "\x1b" not in report.source and "[@click=app.quit]y[/]" in report.source
        await pilot.press("escape")
        assert app.is_running


async def test_pasted_text_and_notices_are_literal():
    session = make_session(rounds=1, text="A text with [reverse]markup[/] and \x1b]52;c;SGVsbG8=\x07 in it.")
    session.agents[0].model = DEMO_MODEL
    app = DebateTUI(Launch(session=session, demo=True))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen) and app.screen.finished, what="the end")
        app.screen.notify("[@click=app.quit]notice[/]", markup=False)
        await pilot.press("r")
        await report_built(pilot)
        await pilot.press("2")
        await pilot.pause()
        line = app.screen.query_one("#line-0")
        rendered = str(line.render())
        assert "[reverse]markup[/]" in rendered and "\\x1b]52" in rendered
        assert app.is_running
