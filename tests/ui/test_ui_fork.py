"""Forking in the TUI: on a finished or paused debate, pick a turn ([ and ]), press f, say what to change; the fork
plays in its own debate screen, made as `debate-tui fork` makes it."""

from __future__ import annotations

from textual.widgets import Input, Select

from debate_tui.domain import ForkOrigin
from debate_tui.ui.screens.debate import DebateScreen
from debate_tui.ui.screens.dialogs import ForkDialog
from debate_tui.ui.screens.help import HelpScreen
from tests.helpers.sessions import make_session
from tests.helpers.ui import RecordingDemo, ScriptedClient, app_with, start, type_into, wait_until

REMARK = "Mind the repeated sentence."


async def finished(pilot) -> DebateScreen:
    debate = await start(pilot)
    await wait_until(pilot, lambda: debate.finished, what="the debate's end")
    return debate


async def fork_dialog(pilot) -> ForkDialog:
    await pilot.press("f")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ForkDialog), what="the fork dialog")
    await pilot.pause()
    return pilot.app.screen


async def test_a_picked_turn_forks_with_a_remark_into_its_own_debate_screen(tmp_path):
    client = RecordingDemo()
    app = app_with(make_session(rounds=4), client=client)
    async with app.run_test(size=(120, 36)) as pilot:
        original = await finished(pilot)
        assert len(original.shown) == 4 and len(client.requests) == 4
        await pilot.press("left_square_bracket", "left_square_bracket")  # the latest, then the one before
        assert original.picked == 3 and original.status.picked == "turn 3 of 4 picked"
        assert original.panes["Scorer"].has_class("-picked") and not original.panes["Critic"].has_class("-picked")
        dialog = await fork_dialog(pilot)
        assert dialog.query_one("#fork-at", Input).value == "3"
        assert "Keep the first 3 of 4 turns (the last kept: Scorer, round 1, coherence)" in str(
            dialog.query_one("#fork-what").render())
        await type_into(pilot, "#fork-remark", REMARK)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen) and app.screen is not original,
                         what="the fork's screen")
        fork = await finished(pilot)
        assert fork.session.forked_from == ForkOrigin(session=original.session.id, turns=3)
        assert fork.session.status == "completed" and fork.session.turns[:3] == original.session.turns[:3]
        assert len(client.requests) == 5 and REMARK in client.requests[-1].messages[-1]["content"]
        assert [(a.kind, a.after_turn, a.text) for a in fork.session.actions] == [("inject", 3, REMARK)]
        assert app.store.load(fork.session.id).forked_from == fork.session.forked_from  # saved as it played
        notes = "\n".join(pane.turns.line_text(i) for pane in fork.panes.values()
                          for i in range(pane.turns.line_count))
        assert f"injected a remark: {REMARK}" in notes
        assert original.session.forked_from is None and len(original.session.turns) == 4
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is original, what="back to the original")


async def test_the_dialog_refuses_a_cut_outside_the_turns_and_gives_one_agent_another_model():
    client = RecordingDemo()
    app = app_with(make_session(rounds=4), client=client)
    async with app.run_test(size=(80, 24)) as pilot:
        original = await finished(pilot)
        dialog = await fork_dialog(pilot)
        dialog.query_one("#fork-at", Input).value = "9"
        await pilot.press("enter")  # from the remark, which has the focus
        assert isinstance(app.screen, ForkDialog)
        assert "from 0 (before the first) to 4" in str(dialog.query_one(".dialog-error").render())
        dialog.query_one("#fork-at", Input).value = "1"
        dialog.query_one("#fork-model", Input).value = "openai/another-critic"
        dialog.query_one("#fork-agent", Select).value = "Critic"
        dialog.query_one("#fork-remark", Input).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen) and app.screen is not original,
                         what="the fork's screen")
        fork = await finished(pilot)
        assert {a.name: a.model for a in fork.session.agents} == {"Scorer": "demo/offline",
                                                                  "Critic": "openai/another-critic"}
        assert [r.model for r in client.requests[4:]][:1] == ["openai/another-critic"]
        assert fork.session.forked_from == ForkOrigin(session=original.session.id, turns=1)


async def test_a_running_debate_forks_only_once_paused_and_escape_closes_the_dialog():
    client = ScriptedClient(["Reasoning that takes a while.\n\nScore: 4", "NO ISSUE"], hold_at=0)
    app = app_with(make_session(rounds=1), client=client)
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await start(pilot)
        await wait_until(pilot, client.held.is_set, what="the first turn mid-stream")
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, DebateScreen) and not debate.finished  # no dialog while it runs
        await pilot.press("p")
        client.release.set()
        await wait_until(pilot, lambda: debate.status.mode == "paused", what="the pause")
        dialog = await fork_dialog(pilot)
        assert dialog.total == 1 and dialog.query_one("#fork-at", Input).value == "1"
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is debate, what="the dialog closed")
        assert client.calls == 1 and debate.control.paused


async def test_f1_lists_the_fork_key_and_the_turn_pickers_with_their_ids():
    app = app_with(make_session(rounds=1), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        await finished(pilot)
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        keys = {binding_id: (key, tooltip) for key, _, binding_id, tooltip in app.screen.keys}
        assert keys["debate.fork"][0] == "f" and "fork after the picked turn" in keys["debate.fork"][1]
        assert keys["debate.turn_previous"][0] == "[" and keys["debate.turn_next"][0] == "]"


async def test_one_more_key_compares_a_fork_with_its_original_where_they_part(tmp_path):
    """Issue 44: on the fork's screen `c` (debate.compare) opens the two debates side by side; on a debate that is
    no fork the key is not offered, and once a run is over Step, Auto and Pause are not offered either."""
    from debate_tui.ui.screens.compare import CompareScreen

    app = app_with(make_session(rounds=4), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        original = await finished(pilot)
        assert original.check_action("compare_original", ()) is False
        assert not any(original.check_action(action, ()) for action in ("next", "auto", "pause"))
        await pilot.press("left_square_bracket", "left_square_bracket")
        await fork_dialog(pilot)
        await type_into(pilot, "#fork-remark", REMARK)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen) and app.screen is not original,
                         what="the fork's screen")
        fork = await finished(pilot)
        assert fork.check_action("compare_original", ()) is True
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), what="the comparison")
        comparison = app.screen.comparison
        assert (comparison.a.id, comparison.b.id) == (original.session.id, fork.session.id)
        assert comparison.shared_turns >= 3  # the copied turns; the demo may answer the remark as before
