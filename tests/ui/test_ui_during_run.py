"""The debate screen as a first-time user meets it (issue 18, "During the run").

Decisions are taken only by an aimed key, in the numbering the panes use;
every human action shows in the panes it acts on; pause while a turn streams
is tested in test_ui_controls.
"""

from __future__ import annotations

import pytest
from textual.widgets import Button, Input

from debate_tui.domain import Session, Task
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from debate_tui.ui.screens.debate import DebateScreen
from debate_tui.ui.screens.dialogs import DecisionDialog, OverrideDialog, TextPrompt
from tests.helpers import STORY
from tests.helpers.sessions import make_session
from tests.helpers.ui import (
    RecordingDemo,
    ScriptedClient,
    at_decision,
    scaleeval_app,
    screen_text,
    start,
    tie_break_app,
    wait_until,
)


async def press_to_the_end(pilot, debate: DebateScreen, *keys: str) -> None:
    await pilot.press(*keys)
    await wait_until(pilot, lambda: debate.finished, what="the end")


def decisions(session: Session) -> list:
    return [a.value for a in session.actions if a.kind == "decide"]


def pane_text(debate: DebateScreen, agent: str) -> str:
    """What a pane shows on screen, its lines joined (a narrow pane wraps them)."""
    region = debate.panes[agent].region
    rows = screen_text(debate.app).splitlines()[region.y:region.bottom]
    return " ".join(row[region.x:region.right].strip(" │╭╮╰╯─") for row in rows)


async def test_a_digit_decides_the_option_it_names():
    app, session = tie_break_app()
    async with app.run_test(size=(80, 24)) as pilot:
        debate = await at_decision(pilot)
        await press_to_the_end(pilot, debate, "4")
        assert decisions(session) == ["4"] and session.outcome.scores == {"coherence": 4.0}


async def test_enter_and_space_decide_nothing_until_the_arrows_aim_then_enter_presses_that_button():
    app, session = tie_break_app()
    async with app.run_test(size=(80, 24)) as pilot:
        debate = await at_decision(pilot)
        await pilot.press("enter", "space")  # the keys a person was stepping with
        await pilot.pause(0.1)
        assert isinstance(app.screen, DecisionDialog) and decisions(session) == []
        app.screen.action_move(1)
        app.screen.action_move(1)  # two arrows handled before the focus moved (one read of the terminal)
        await pilot.pause()
        assert app.focused.id == "decide-1"
        await pilot.press("left", "right", "right")
        assert app.focused.id == "decide-2"
        await press_to_the_end(pilot, debate, "enter")
        assert decisions(session) == ["3"]


async def test_the_decision_shows_both_texts_and_each_speakers_verdict_in_the_panes_numbering():
    app, session = scaleeval_app()
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await at_decision(pilot)
        assert session.swapped, "seed 1 draws the swapped order"
        dialog = app.screen
        shown = "\n".join(str(w.render()) for w in dialog.query(".dialog-detail"))
        assert "Text 1: Tom wanted to learn to swim." in shown and "Text 2: Tom swam." in shown
        assert "text 2 first" in shown
        finals = session.outcome is None and {t.agent: session.original_verdict(t.verdict) for t in session.turns}
        for agent, verdict in finals.items():
            assert f"{agent}: {verdict}" in shown
            # the pane says the same number as the dialog: the original numbering
            assert f"verdict {verdict}" in debate.panes[agent].header.render().plain
        assert [b.label.plain for b in dialog.query(Button)][:3] == [
            "1 · text 1 better", "2 · text 2 better", "0 · tie"]
        assert sum("text 2 first" in n.message for n in app._notifications) == 1, "the swap said once"
        await press_to_the_end(pilot, debate, "0")
        assert decisions(session) == ["0"] and session.outcome.verdict == "0"


async def test_a_pairwise_override_takes_1_2_or_0_and_changes_the_verdict():
    app, session = scaleeval_app()
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await at_decision(pilot)
        await press_to_the_end(pilot, debate, "1")
        assert session.outcome.verdict == "1"
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, OverrideDialog), what="the override dialog")
        app.screen.query_one("#override-value", Input).focus()
        await pilot.press("3", "x", "2")  # only 1, 2 or 0 can be typed
        assert app.screen.query_one("#override-value", Input).value == "2"
        app.screen.query_one("#override-why", Input).value = "text 2 answers the question"
        await pilot.click("#override-ok")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what="back to the debate")
        await pilot.pause(0.1)
        assert session.outcome.verdict == "2"
        assert any("verdict overridden" in note and "from 1 to 2" in note for note in session.outcome.notes)
        assert "2" in str(debate.query_one("#verdict").render())
        for speaker in ("Speaker 1", "Speaker 2", "Speaker 3"):
            assert "overridden: helpfulness 2" in debate.panes[speaker].header.render().plain


async def test_a_debate_override_shows_in_the_scorers_pane_and_a_remark_in_every_pane():
    client = ScriptedClient(["A first look.\n\nScore: 4", "Too generous: the ending repeats.",
                             "Fair point.\n\nScore: 3", "NO ISSUE"], hold_at=1)

    session = make_session(rounds=2)
    app = DebateTUI(Launch(session=session, demo=False), client=client)
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await start(pilot)
        await wait_until(pilot, client.held.is_set, what="the Critic mid-turn")
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, TextPrompt), what="the remark prompt")
        await pilot.press(*"Mind the ending", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what="back to the debate")
        await pilot.pause(0.1)
        for agent in ("Scorer", "Critic"):
            assert "injected a remark: Mind the ending" in pane_text(debate, agent), agent
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, OverrideDialog), what="the override dialog")
        app.screen.query_one("#override-value", Input).value = "5"
        app.screen.query_one("#override-why", Input).value = "I like it"
        await pilot.click("#override-ok")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what="back to the debate")
        await pilot.pause(0.1)
        assert "overridden: coherence 5" in debate.panes["Scorer"].header.render().plain
        assert "overrode coherence to 5" in pane_text(debate, "Scorer")
        assert "overrode" not in pane_text(debate, "Critic")
        client.release.set()
        await wait_until(pilot, lambda: debate.finished, what="the end")
        assert session.outcome.scores == {"coherence": 5.0}
        assert "overridden: coherence 5" in debate.panes["Scorer"].header.render().plain


async def test_the_status_line_says_round_k_of_r_and_the_calls_and_cost_so_far():

    client = ScriptedClient(["A first look.\n\nScore: 4", "Too generous.", "A fair point, I lower it.\n\nScore: 3",
                             "NO ISSUE"], hold_at=2)
    app = DebateTUI(Launch(session=make_session(rounds=3), demo=False), client=client)
    async with app.run_test(size=(80, 24)) as pilot:
        debate = await start(pilot)
        await wait_until(pilot, client.held.is_set, what="the Scorer's second turn")
        await pilot.pause(0.1)
        status = screen_text(app).splitlines()[-2].strip()
        assert status.startswith("round 1 of 3 │ auto │ 2 calls │") and "$0.0000" in status, status
        client.release.set()
        await wait_until(pilot, lambda: debate.finished, what="the end")
        ended = "round 2 of 3 │ finished: completed │ 4 calls"  # above the footer, once it shows the ended run's keys
        await wait_until(pilot, lambda: screen_text(app).splitlines()[-2].strip().startswith(ended), what="the line")


@pytest.mark.parametrize(("protocol", "options", "opening", "later"), [
    ("debate", {"rounds": 4}, "opening round (then up to 4)", "round 1 of 4"),
    ("scaleeval", {"rounds": 0}, "opening round", None),
])
async def test_the_status_line_names_the_opening_round_and_keeps_the_time_at_80_columns(protocol, options, opening,
                                                                                     later):
    """Issue 33 #5: it said `round 1 of 0–4` (DEBATE) and `round 0 of 0–0` (ScaleEval); at 80 columns the
    elapsed time was cut off."""
    from debate_tui.choices import Choices
    from debate_tui.factory import build_session
    from debate_tui.ui.widgets.status_line import StatusLine

    task = Task(text=STORY, text_b="A short answer.", source="Which is better?") if protocol == "scaleeval" \
        else Task(text=STORY)
    session = build_session(task, Choices(protocol=protocol, options=options, demo=True)).session
    app = DebateTUI(Launch(session=session, demo=True, step=True), client=RecordingDemo())
    async with app.run_test(size=(80, 24)) as pilot:
        debate = await start(pilot)
        status = debate.query_one(StatusLine)
        await wait_until(pilot, lambda: status.first_round == 0, what="the run's plan")
        status.round, status.mode, status.speaking = 0, "pausing after this turn", "Critic"
        debate.clock = lambda: debate._started_at + 754.0  # the live clock's next tick shows 12:34, however late
        status.calls, status.tokens, status.elapsed = 26, 14_317, 754.0
        await pilot.pause()
        line = screen_text(app).splitlines()[-2].strip()
        assert line.startswith(opening) and "12:34" in line and "–" not in line, line
        if later:
            status.round = 1
            await pilot.pause()
            line = screen_text(app).splitlines()[-2].strip()
            assert line.startswith(later) and "12:34" in line, line


async def test_a_decision_on_a_1_to_10_scale_keeps_every_button_on_an_80_column_screen():
    from debate_tui.domain import Criterion

    session = make_session(rounds=1, tie_breaker="human")
    session.criteria = [Criterion(name="overall", description="How good it is overall.", low=1, high=10)]
    app = DebateTUI(Launch(session=session, demo=True), client=RecordingDemo())
    async with app.run_test(size=(80, 24)) as pilot:
        debate = await at_decision(pilot)
        screen = app.screen.region
        buttons = list(app.screen.query(Button))
        assert [b.label.plain for b in buttons] == [str(n) for n in range(1, 11)]
        assert all(screen.contains_region(b.region) for b in buttons)
        await press_to_the_end(pilot, debate, "1", "0")  # 1 decides at once: 10 is a button, not two digits
        assert decisions(session) == ["1"]


async def test_the_status_line_says_what_the_run_waits_for_until_the_next_turn_starts() -> None:
    """Issue 46: the first real call loads the provider library for seconds; the line says so beside a live clock,
    where the speaker will be named."""
    from debate_tui.choices import Choices
    from debate_tui.engine.events import TurnStarted, Waiting
    from debate_tui.factory import build_session
    from debate_tui.ui.messages import RunEvent
    from debate_tui.ui.widgets.status_line import StatusLine

    session = build_session(Task(text=STORY), Choices(protocol="debate", demo=True)).session
    app = DebateTUI(Launch(session=session, demo=True, step=True), client=RecordingDemo())
    async with app.run_test(size=(80, 24)) as pilot:
        debate = await start(pilot)
        status = debate.query_one(StatusLine)
        debate.post_message(RunEvent(Waiting("loading the model library (first call only)")))
        await wait_until(pilot, lambda: "loading the model library" in screen_text(app).splitlines()[-2],
                         what="the waiting line")
        debate.post_message(RunEvent(TurnStarted(99, "Scorer", "scorer", 1, "coherence")))
        await wait_until(pilot, lambda: status.waiting == "", what="the turn's start")
        assert "loading the model library" not in screen_text(app).splitlines()[-2]


def toast_regions(app) -> list:
    return [toast.region for toast in app.screen.query("Toast")]


async def test_notifications_cover_neither_the_decision_buttons_nor_the_status_line_at_80_columns():
    """Issue 46: the drawn-order notice sat on ScaleEval's 2 and 0 buttons for 5 s at 80x24, and toasts on the
    debate screen covered the status line's calls, tokens and clock."""
    app, _ = scaleeval_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        debate = await start(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, DecisionDialog), what="the decision dialog")
        await pilot.pause(0.2)
        buttons = [button.region for button in app.screen.query(Button)]
        assert buttons and not any(toast.overlaps(button) for toast in toast_regions(app) for button in buttons)
        await pilot.press("escape")
        await wait_until(pilot, lambda: debate.finished and app.screen is debate, what="the stopped run")
        debate.notify("A notice long enough to wrap over two or three lines of a toast at eighty columns.")
        await wait_until(pilot, lambda: toast_regions(app), what="the toast")
        await pilot.pause(0.1)
        status, footer = debate.status.region, app.screen.query_one("AppFooter").region
        assert not any(toast.overlaps(status) or toast.overlaps(footer) for toast in toast_regions(app))


def pane_lines(debate: DebateScreen, agent: str) -> str:
    turns = debate.panes[agent].turns
    return " ".join(turns.line_text(i) for i in range(turns.line_count))


async def test_a_reminder_call_is_labelled_as_one_in_its_pane():
    """Issue 46: an unscored turn's reminder showed as a second, unlabelled entry of the same round (the same
    heading), with only a toast to explain it."""
    client = ScriptedClient(["I like it.", "Fixed.\n\nScore: 4", "NO ISSUE"])
    app = DebateTUI(Launch(session=make_session(rounds=1), demo=False), client=client)
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await start(pilot)
        await wait_until(pilot, lambda: debate.finished, what="the end")
        await pilot.pause(0.1)
        shown = pane_lines(debate, "Scorer")
        assert shown.count("reminder: asked for the score line") == 1, shown
        assert shown.index("I like it.") < shown.index("reminder: asked for the score line") < shown.index("Fixed.")
        assert "reminder" not in pane_lines(debate, "Critic")


async def test_a_finished_pane_without_scores_says_what_its_turns_gave_not_no_score_yet():
    """Issue 46: beside "final verdict 1" or "NO ISSUE" the pane still said "no score yet"."""
    app, session = scaleeval_app()
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await at_decision(pilot)
        await press_to_the_end(pilot, debate, "2")
        for agent, pane in debate.panes.items():
            trail = str(pane.trail.render())
            assert "no score yet" not in trail and "verdict" in trail, (agent, trail)
    app, _ = tie_break_app()
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await at_decision(pilot)
        await press_to_the_end(pilot, debate, "4")
        assert str(debate.panes["Critic"].trail.render()) == "objects"


async def test_the_title_and_pane_headers_fit_80_columns_without_cutting_or_wrapping():
    """Issue 46: at 80 columns the title bar wrapped and pane titles were cut ("General Public · refe…")."""
    from debate_tui.ui.widgets.agent_pane import header_lines

    session = make_session("chateval", criteria="coherence,fluency,relevance,consistency")
    for agent in session.agents:
        agent.model = "openai/smollm2-135m-instruct"
    app = DebateTUI(Launch(session=session, demo=True, step=True), client=RecordingDemo())
    async with app.run_test(size=(80, 24)) as pilot:
        debate = await start(pilot)
        await pilot.pause(0.2)
        rows = screen_text(app).splitlines()
        assert rows[1].startswith("╭") and "…" not in rows[0], rows[:2]
        assert rows[0].strip() == "CHATEVAL · live (demo) · coherence, fluency, relevance, consistency"
        for pane in debate.panes.values():
            region = pane.header.region
            for row in rows[region.y:region.y + 2]:
                assert "…" not in row[region.x:region.right], row
        assert "general-public" in rows[3] and "critic" in rows[3]  # three panes: the persona, the model in wider
    wide = header_lines(session.agents[0], 60)
    assert wide == ("General Public · referee", "general-public · openai/smollm2-135m-instruct")
    demo = DebateTUI(Launch(session=make_session("chateval", criteria="coherence,fluency,relevance,consistency"),
                            demo=True, step=True), client=RecordingDemo())
    async with demo.run_test(size=(80, 24)) as pilot:
        await start(pilot)
        await pilot.pause(0.2)
        rows = screen_text(demo).splitlines()
        assert rows[0].strip() == "CHATEVAL · live (demo) · 4 criteria · demo model: not a real judgment", rows[:2]
        assert rows[1].startswith("╭")
