"""The human's levers on the debate screen: pause, stop, decide; and how panes cope with many agents and turns."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest
from textual.widgets import Button

from debate_tui.domain import AgentSpec, Session, Task, Turn
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from debate_tui.ui.screens.debate import FLUSH_S, PANE_REDRAWS_PER_S, DebateScreen, flush_interval
from debate_tui.ui.screens.dialogs import DecisionDialog
from debate_tui.ui.widgets.agent_pane import MAX_TURNS
from tests.helpers import STORY
from tests.helpers.sessions import make_session
from tests.helpers.ui import (
    RecordingDemo,
    ScriptedClient,
    app_with,
    at_decision,
    chateval_session,
    start,
    tie_break_app,
    wait_until,
)


def mode(screen: DebateScreen) -> str:
    return screen.status.mode


async def test_pause_shows_at_once_while_streaming_and_holds_the_next_turn():
    client = ScriptedClient(["Reasoning that takes a while to arrive.\n\nScore: 4", "NO ISSUE"], hold_at=0)
    app = DebateTUI(Launch(session=make_session(rounds=1), demo=False), client=client)
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await start(pilot)
        await wait_until(pilot, client.held.is_set, what="the stream to be mid-turn")
        await pilot.press("p")  # latency is measured in tmux (Pilot's own waits dwarf it here)
        assert mode(debate) == "pausing after this turn" and debate.control.paused
        client.release.set()
        await wait_until(pilot, lambda: len(debate.session.turns) == 1, what="the turn in flight to finish")
        await pilot.pause(0.2)
        assert len(debate.session.turns) == 1 and client.calls == 1, "paused: the next turn waits"
        assert mode(debate) == "paused"
        await pilot.press("p")
        await wait_until(pilot, lambda: debate.finished, what="the end")
        assert debate.session.status == "completed"


@pytest.mark.serial
async def test_escape_stops_the_call_in_flight_at_once_and_leaves_a_resumable_session():
    client = ScriptedClient(["A reply that never finishes. Score: 4"], hold_at=0)
    session = make_session()
    app = DebateTUI(Launch(session=session, demo=False), client=client)
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await start(pilot)
        await wait_until(pilot, client.held.is_set, what="the stream to be mid-turn")
        await pilot.press("escape")
        # The held reply never comes (`client.release` is never set): a stop that waited for the call in flight
        # would never finish. How soon it finishes is a benchmark's (tmux), not this loaded machine's clock.
        await wait_until(pilot, lambda: debate.finished, what="the stop")
        assert session.status == "cancelled" and "stopped by the user" in (session.error or "")
        assert "finished: cancelled" in mode(debate)
        assert "Resume it" in str(debate.query_one("#verdict").render())
        saved = app.store.load(session.id)
        assert saved.status == "cancelled"
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, DebateScreen), what="back to setup")


async def test_debate_human_tie_break_opens_a_decision_and_records_it():
    app, session = tie_break_app()
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await at_decision(pilot)
        assert mode(debate) == "waiting for you"
        assert [b.label.plain for b in app.screen.query(Button)] == ["1", "2", "3", "4", "5"]
        assert await pilot.click("#decide-2")
        await wait_until(pilot, lambda: debate.finished, what="the end")
        assert session.outcome.scores == {"coherence": 3.0}
        assert "decided by a person" in session.outcome.method
        decide = [a for a in session.actions if a.kind == "decide"]
        assert len(decide) == 1 and decide[0].value == "3" and decide[0].who == app.user


async def test_escape_at_a_decision_stops_and_keeps_the_question_for_a_resume():
    app, session = tie_break_app()
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await at_decision(pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: debate.finished, what="the stop")
        assert session.status == "cancelled" and session.outcome is None


async def test_scaleeval_without_consensus_asks_the_person():
    from debate_tui.catalog import find_criterion
    from debate_tui.protocols import get_protocol
    from debate_tui.protocols.common import ModelChoice

    module = get_protocol("scaleeval")
    options = module.options.model_validate({"rounds": 0, "on_no_consensus": "human", "seed": 1})
    session = Session(protocol="scaleeval", options=options.model_dump(), criteria=[find_criterion("helpfulness")],
                      agents=module.build_agents(options, ModelChoice(default="demo/offline")),
                      task=Task(text=STORY, text_b="Tom swam.", source="Tell a story about learning to swim."))
    app = DebateTUI(Launch(session=session, demo=True), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await start(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, DecisionDialog), what="the decision dialog")
        await pilot.pause()  # let the dialog lay out before clicking it
        options_shown = [b.label.plain.split(" · ")[0] for b in app.screen.query(Button)]
        assert set(options_shown) >= {"1", "2", "0"}
        assert await pilot.click(f"#decide-{options_shown.index('2')}")
        await wait_until(pilot, lambda: debate.finished, what="the end")
        assert session.status == "completed"
        assert [a.value for a in session.actions if a.kind == "decide"] == ["2"]


def crowded_session(agents: int, turns_each: int) -> Session:
    specs = [AgentSpec(name=f"Referee {n}", role="referee", model="demo/offline") for n in range(1, agents + 1)]
    turns = [Turn(slot=i * agents + n, agent=spec.name, role="referee", round=i, content=f"Turn {i} of {spec.name}.",
                  criterion="coherence", score=float(1 + (i + n) % 5))
             for i in range(turns_each) for n, spec in enumerate(specs)]
    return Session(protocol="chateval", criteria=[make_session().criteria[0]], agents=specs, task=Task(text=STORY),
                   turns=turns, status="completed")


async def test_more_than_four_agents_wrap_into_a_grid_and_long_panes_are_pruned():
    session = crowded_session(agents=6, turns_each=MAX_TURNS + 4)
    app = DebateTUI(Launch(), replay_delay_s=0)
    async with app.run_test(size=(160, 45)) as pilot:
        app.replay(session)
        debate = await start(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: debate.finished, timeout=30, what="the end of the replay")
        grid = debate.query_one("#panes")
        assert grid.styles.grid_size_columns == 3 and grid.styles.grid_size_rows == 2
        pane = debate.panes["Referee 1"]
        assert len(pane.turns.entries) == MAX_TURNS and pane.turns.dropped == 4
        assert len(pane.trail.points) == MAX_TURNS + 4


async def test_ctrl_q_during_a_run_stops_it_saves_it_and_quits():
    client = ScriptedClient(["A reply that never finishes. Score: 4"], hold_at=0)
    session = make_session()
    app = DebateTUI(Launch(session=session, demo=False), client=client)
    async with app.run_test(size=(120, 36)) as pilot:
        await start(pilot)
        await wait_until(pilot, client.held.is_set, what="the stream to be mid-turn")
        await pilot.press("f3")  # refused while a debate runs
        assert isinstance(app.screen, DebateScreen)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running, what="the app to exit")
    assert app.store.load(session.id).status == "cancelled"


async def test_f3_returns_to_setup_once_the_run_is_over():
    from debate_tui.ui.screens.setup import SetupScreen

    app = DebateTUI(Launch(session=make_session(), demo=True), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await start(pilot)
        await wait_until(pilot, lambda: debate.finished, what="the end")
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), what="the setup screen")


class TrickleClient:
    """Every call streams a long reply in small pieces, a few milliseconds apart; the calls start a tick apart."""

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request, on_delta=None):
        from debate_tui.llm.base import Completion

        self.calls += 1
        await asyncio.sleep(FLUSH_S * (self.calls % 3))
        reply = "A point about the story, made slowly. " * 150 + "\n\nScore: 4"
        for offset in range(0, len(reply), 6):
            on_delta(reply[offset:offset + 6])
            await asyncio.sleep(0.004)
        return Completion(text=reply)


@pytest.mark.serial
async def test_streaming_panes_are_redrawn_together_within_the_shared_budget():

    app = app_with(chateval_session(), TrickleClient())
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await start(pilot)
        shown: list[tuple[float, str]] = []
        for name, pane in debate.panes.items():
            append = pane.append
            pane.append = lambda text, name=name, append=append: (shown.append((time.monotonic(), name)), append(text))
        await wait_until(pilot, lambda: len(shown) >= 24, what="eight redraws of three panes")
    redraws: list[list[tuple[float, str]]] = []  # appends less than 50 ms apart came from one flush
    for at, name in shown:
        if redraws and at - redraws[-1][-1][0] < 0.05:
            redraws[-1].append((at, name))
        else:
            redraws.append([(at, name)])
    names = sorted(debate.panes)
    first = next(index for index, each in enumerate(redraws) if sorted(name for _, name in each) == names)
    steady = redraws[first:-1]  # all three speaking, the last flush perhaps partial
    assert len(steady) >= 4 and all(sorted(name for _, name in each) == names for each in steady), \
        "each flush redrew the three panes together"
    gaps = [b[0][0] - a[0][0] for a, b in itertools.pairwise(steady)]
    assert min(gaps) >= flush_interval(3) * 0.8, "three speakers share the redraw budget"


def test_streaming_panes_share_a_redraw_budget():
    assert flush_interval(1) == flush_interval(2) == FLUSH_S, "one or two speakers: redrawn at the full rate"
    assert [round(n / flush_interval(n)) for n in (3, 5, 8)] == [PANE_REDRAWS_PER_S] * 3, \
        "more speakers share the same number of pane redraws a second"


async def test_after_a_pause_the_first_space_runs_one_turn_then_the_run_waits_for_space():
    """Issue 46: after a pause, the first space only switched to step mode (a toast) and ran nothing."""
    client = ScriptedClient(["Reasoning.\n\nScore: 4", "The sentence repeats.", "Fixed.\n\nScore: 3", "NO ISSUE"],
                            hold_at=0)
    app = DebateTUI(Launch(session=make_session(rounds=2), demo=False), client=client)
    async with app.run_test(size=(120, 36)) as pilot:
        debate = await start(pilot)
        await wait_until(pilot, client.held.is_set, what="the first turn mid-stream")
        await pilot.press("p")
        client.release.set()
        await wait_until(pilot, lambda: mode(debate) == "paused", what="the pause")
        await pilot.press("space")
        await wait_until(pilot, lambda: len(debate.session.turns) == 2, what="one turn after the space")
        await wait_until(pilot, lambda: mode(debate) == "step: press space for the next turn", what="the hint")
        await pilot.pause(0.2)
        assert len(debate.session.turns) == 2 and client.calls == 2, "one turn per space"
        await pilot.press("space")
        await wait_until(pilot, lambda: len(debate.session.turns) == 3, what="the next turn")


async def test_step_mode_says_the_run_has_not_started_and_what_to_press():
    """Issue 46: step mode opened on "waiting", "round - of 4" and no word of the space key."""
    app = DebateTUI(Launch(session=make_session(rounds=4), demo=True, step=True), client=RecordingDemo())
    async with app.run_test(size=(80, 24)) as pilot:
        debate = await start(pilot)
        await wait_until(pilot, lambda: debate.status.last_round == 4, what="the run's plan")
        await pilot.pause(0.1)
        shown = str(debate.status.render())
        assert shown.startswith("not started") and "step: press space for the next turn" in shown, shown
        assert "round -" not in shown
