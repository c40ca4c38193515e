"""Selecting text in an agent pane with the mouse and copying it with ctrl+c, as a person would."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from debate_tui.ui import clipboard
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from debate_tui.ui.screens.debate import DebateScreen
from debate_tui.ui.widgets.turn_log import TurnLog
from tests.helpers.sessions import make_session
from tests.helpers.ui import RecordingDemo, settle, wait_until


async def finished_debate(pilot: Pilot) -> DebateScreen:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, DebateScreen) and pilot.app.screen.finished,
                     what="the end of the demo debate")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, DebateScreen)
    return screen


@pytest.mark.parametrize("system_clipboard", [False, True])
async def test_text_dragged_over_in_a_pane_is_copied_by_ctrl_c_and_the_app_keeps_running(
        system_clipboard: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    copied: list[str] = []
    monkeypatch.setattr(clipboard, "_pyperclip_copy", lambda text: system_clipboard and not copied.append(text))
    app = DebateTUI(Launch(session=make_session(), demo=True), client=RecordingDemo(), clock=lambda: 0.0)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await finished_debate(pilot)
        log = screen.panes["Scorer"].turns
        log.scroll_home(animate=False, immediate=True)
        await settle(pilot)
        shown = [log.line_text(int(log.scroll_y) + y) for y in range(log.scrollable_content_region.height)]
        first, last = 1, 3  # from the second column of the text's second row to the fourth row's sixth column
        assert shown[first].strip() and shown[last].strip(), shown
        content = log.content_region.offset - log.region.offset
        start, end = (content.x + 1 + 1, content.y + first), (content.x + 1 + 5, content.y + last)  # past the margin

        await pilot.mouse_down(TurnLog, offset=start)
        await pilot.hover(TurnLog, offset=end)
        await pilot.mouse_up(TurnLog, offset=end)
        await pilot.pause()
        expected = "\n".join([shown[first][1:], *shown[first + 1:last], shown[last][:6]])
        assert screen.get_selected_text() == expected.rstrip("\n")

        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and app.screen is screen, "select + ctrl+c left the app running on the same screen"
        text = copied[0] if system_clipboard else app.clipboard
        assert text == expected.rstrip("\n")
        assert len(text.splitlines()) == last - first + 1 and text.split()[0] in shown[first]
        said = [n.message for n in app._notifications]
        assert any(f"Copied {last - first + 1} lines ({len(text)} characters) " in m for m in said), said
        assert any(("pyperclip)" if system_clipboard else "OSC 52") in m for m in said), said
