"""The debate screen: one pane per agent, live, with the human's levers on single keys.

It consumes engine events (from a Runner, or a Replayer for a recorded
session) and calls RunControl; it knows nothing of any protocol. The player
runs as an exclusive worker in the app's event loop, so a key press only ever
flips RunControl state and repaints the status line.

On a finished or paused debate a person picks a turn (`[` and `]`) and forks
after it (`f`): the dialog says what to change, and the app plays the fork in
a new debate screen over this one (`debate_tui.forking` makes it). Comparing a
fork with its original is one more key on the fork's screen once the compare
view exists; `Session.forked_from` tells that key which original to open.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.content import Content
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from debate_tui.domain import HumanAction, Session, Turn
from debate_tui.engine.control import RunControl
from debate_tui.engine.events import (
    Event,
    Finished,
    HumanActed,
    NeedsHuman,
    Notice,
    OutcomeReached,
    Planned,
    RoundCompleted,
    TextDelta,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    Waiting,
)
from debate_tui.engine.runner import acted_on
from debate_tui.llm import DEMO_MODEL
from debate_tui.meta.climb import waiting
from debate_tui.report.facts import confidence_lines, no_result, set_by_person
from debate_tui.store import summarize
from debate_tui.ui.export import start_export
from debate_tui.ui.host import tui
from debate_tui.ui.literal import literal
from debate_tui.ui.messages import RunEvent
from debate_tui.ui.replay import describe_action
from debate_tui.ui.screens.base import BaseScreen
from debate_tui.ui.screens.dialogs import (
    DecisionDialog,
    ForkAnswer,
    ForkDialog,
    OverrideAnswer,
    OverrideDialog,
    TextPrompt,
)
from debate_tui.ui.screens.report import ReportScreen
from debate_tui.ui.widgets.agent_pane import AgentPane, fitting
from debate_tui.ui.widgets.footer import AppFooter
from debate_tui.ui.widgets.kept_lines import KeptLines
from debate_tui.ui.widgets.status_line import StatusLine

PANES_IN_A_ROW = 4
"""Up to four agents side by side; more wrap into a grid."""
FLUSH_S = 1 / 8
"""How often streamed text may reach a pane: live to the eye when one or two agents speak."""
STEP_HINT = "step: press space for the next turn"
"""The mode step mode shows between two turns: what to press, since nothing moves until then."""
PANE_REDRAWS_PER_S = 16
"""What all streaming panes share: with five speaking at once each is redrawn about three times a
second, so the screen's cost stays bounded however many agents stream (no one reads five at once)."""


class PaneGrid(Grid, KeptLines):
    """The panes' grid: its gaps are redrawn when they change, not with every pane's repaint."""


class Title(Static, KeptLines):
    """The debate's title line: it changes once a run, and Textual drew it with every screen update."""


class Player(Protocol):
    """A Runner or a Replayer: something that plays a session through events."""

    async def run(self) -> Session: ...


PlayerFactory = Callable[[Callable[[Event], None]], Player]


def flush_interval(streaming: int) -> float:
    """Seconds between two redraws of a pane while `streaming` panes have new text."""
    return max(FLUSH_S, streaming / PANE_REDRAWS_PER_S)


def grid_columns(panes: int) -> int:
    return panes if panes <= PANES_IN_A_ROW else math.ceil(panes / 2)


RUNNING_ONLY = ("next", "auto", "pause", "inject", "back")
"""The actions that act on a run in progress: hidden from the footer (and refused) once it is over."""


class DebateScreen(BaseScreen[None]):
    BINDINGS = [
        Binding("space", "next", "Step", id="debate.next",
                tooltip="Let the next turn run; from auto mode, switch to step mode (one turn per press)"),
        Binding("a", "auto", "Auto", id="debate.auto", tooltip="Run the remaining turns without stopping"),
        Binding("p", "pause", "Pause", id="debate.pause", tooltip="Pause or resume before the next turn"),
        Binding("i", "inject", "Inject", id="debate.inject", tooltip="Add your remark to the next turn's prompt"),
        Binding("o", "override", "Override", id="debate.override",
                tooltip="Replace a criterion's score (recorded with your name, the time and your reason)"),
        Binding("r", "report", "Report", id="debate.report", tooltip="Open the review report"),
        Binding("e", "export", "Export", id="debate.export",
                tooltip="Write the report to a Markdown, HTML or JSON file"),
        Binding("escape", "back", "Stop", id="debate.back",
                tooltip="Stop the run at once (it can be resumed); once it is over, escape goes back (debate.leave)"),
        Binding("escape", "leave", "Back", id="debate.leave",
                tooltip="The run is over: go back to the screen it was started from"),
        Binding("f", "fork", "Fork", id="debate.fork",
                tooltip="On a finished or paused debate: fork after the picked turn ([ and ] pick it), with a "
                        "remark or another model from the next turn on; the fork plays in its own panes"),
        Binding("c", "compare_original", "Compare", id="debate.compare",
                tooltip="A fork: its debate and its original's side by side, the turn where they part marked"),
        Binding("left_square_bracket", "pick(-1)", "Turn before", id="debate.turn_previous", show=False,
                tooltip="Pick the turn before the picked one (the last, at first): the one to fork after"),
        Binding("right_square_bracket", "pick(1)", "Turn after", id="debate.turn_next", show=False,
                tooltip="Pick the turn after the picked one"),
    ]

    def __init__(self, session: Session, control: RunControl, make_player: PlayerFactory, *,
                 kind: str = "live", clock: Callable[[], float] = time.monotonic,
                 after: Callable[[DebateScreen], None] | None = None, climb: str = "",
                 source: Session | None = None) -> None:
        """`after`: called once the run has finished and its outcome is shown (a trust ladder's next step);
        `climb`: the ladder's lines so far (why this tier runs), kept on show under the status line;
        `source`: the session a fork copies, when `session` is a trimmed copy for the screen (a replay)."""
        super().__init__()
        self.after = after
        self.session = session
        self.source = source or session
        self.shown: list[Turn] = []
        """The completed turns on the screen so far, in the order they came: the turns a fork can be cut after."""
        self.picked: int | None = None
        """The turn picked to fork after (1 = the first shown); None: none picked, the latest is meant."""
        self._recorded = list(session.actions)
        """Actions taken before this run began (a fork's remark, a resumed run's earlier ones): shown where they
        were taken, once that many turns are on the screen; a live action comes as its own event."""
        self._acted: set[int] = set()
        """The actions shown so far (by identity): a replay announces the recorded ones itself."""
        self.control = control
        self.make_player = make_player
        self.kind = kind
        self.clock = clock
        self.finished = False
        self._started_at: float | None = None
        self._decision_open = False
        self._overridden: dict[str, str] = {}
        """Panes whose agent's answer a person overrode, and what their header says since."""
        scales = {c.name: (c.low, c.high) for c in session.criteria}
        agents = [a for a in session.agents if a.role != "human"]
        self.panes = {a.name: AgentPane(a, scales, id=f"pane-{index}") for index, a in enumerate(agents)}
        self.status = StatusLine(id="status")
        self.status.trust = climb
        self._streamed: dict[int, list[str]] = {}
        """Tokens not shown yet, by turn slot."""
        self._shown_at = 0.0
        """When `_flush` last handed the panes their tokens (`time.monotonic`)."""

    # ----- layout ---------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Title(self._title(), id="debate-title")
        with PaneGrid(id="panes"):
            yield from self.panes.values()
        yield Static("", id="verdict")
        yield self.status
        yield AppFooter()

    def _title(self, width: int | None = None) -> Content:
        """One line at any width: a narrow screen gets the demo's warning short, then the criteria counted."""
        session = self.session
        demo = any(a.model == DEMO_MODEL for a in session.agents)
        head = f"{session.protocol.upper()} · {self.kind}"
        criteria = [", ".join(c.name for c in session.criteria)]
        if len(session.criteria) > 1:
            criteria.append(f"{len(session.criteria)} criteria")
        notes = [" · demo model: not a real judgment", " · demo model"] if demo else [""]
        forms = [f"{head} · {listed}{note}" for listed in criteria for note in notes]
        return literal(fitting(forms, width), "bold")

    def on_resize(self, event: events.Resize) -> None:
        self.query_one("#debate-title", Title).update(self._title(event.size.width - 2))  # its padding: 0 1

    def on_mount(self) -> None:
        grid = self.query_one("#panes", PaneGrid)
        grid.styles.grid_size_columns = grid_columns(len(self.panes))
        grid.styles.grid_size_rows = math.ceil(len(self.panes) / grid_columns(len(self.panes)))
        self.query_one("#verdict").display = False
        self.status.mode = self._mode()
        self.set_interval(1.0, self._tick)
        self.set_interval(FLUSH_S, self._flush)
        self._show_recorded()
        self.start()

    def start(self) -> None:
        player = self.make_player(self._emit)
        self._started_at = self.clock()
        self.run_worker(player.run(), group="debate", exclusive=True, exit_on_error=False,
                        description=f"{self.kind} {self.session.protocol} {self.session.id}")

    def _emit(self, event: Event) -> None:
        """The player's callback: queue the event; never do UI work on the player's stack.

        Tokens skip the message queue (a message per token cost more than showing it): they wait
        in `_streamed` for the flush timer, which hands them to the pane speaking that turn.
        """
        match event:
            case TextDelta(slot=slot, text=text):
                self._streamed.setdefault(slot, []).append(text)
                return
            case TurnStarted(slot=slot):
                self._streamed.pop(slot, None)  # a retried turn starts over
        self.post_message(RunEvent(event))

    def _flush(self) -> None:
        """Hand every speaking pane its gathered tokens at once, `flush_interval` apart.

        Together, not each on its own schedule: every screen update has a cost of its own, and
        panes redrawn on different ticks paid it several times (about a third more of them).
        """
        now = time.monotonic()  # real time, whatever clock the status line shows
        waiting = [(pane, slot) for pane in self.panes.values()
                   if (slot := pane.live_slot) is not None and slot in self._streamed]
        if not waiting or now - self._shown_at < flush_interval(len(waiting)) * 0.9:  # a tick early is on time
            return
        self._shown_at = now
        for pane, slot in waiting:
            pane.append("".join(self._streamed.pop(slot)))

    def _tick(self) -> None:
        if self._started_at is not None and not self.finished:
            self.status.elapsed = self.clock() - self._started_at

    def _mode(self) -> str:
        if self.finished:
            return f"finished: {self.session.status}"
        if self.control.stopped:
            return "stopping…"
        if self._decision_open:
            return "waiting for you"
        if self.control.paused:
            return "pausing after this turn" if self._streaming() else "paused"
        if self.control.mode == "step" and not self.status.waiting:  # waiting: a turn is on its way
            return "step: waits after this turn" if self._streaming() else STEP_HINT
        return self.control.mode

    def _streaming(self) -> bool:
        return any(pane.live_slot is not None for pane in self.panes.values())

    # ----- engine events ----------------------------------------------------------

    def on_run_event(self, message: RunEvent) -> None:
        match message.event:
            case TurnStarted(slot=slot, agent=agent, round=round_, criterion=criterion, reminder=reminder):
                self.status.round, self.status.speaking, self.status.waiting = round_, agent, ""
                if agent in self.panes:
                    self.panes[agent].start_turn(slot, round_, criterion, reminder)
            case TurnCompleted(turn=turn):
                self._streamed.pop(turn.slot, None)
                if turn.agent in self.panes:
                    self.panes[turn.agent].finish_turn(turn, self.session.original_verdict(turn.verdict))
                if turn.error is None:
                    self.shown.append(turn)
                    self._show_recorded()
                self.status.speaking = ""
                self.status.set_usage(self.session.usage)
            case TurnFailed(slot=slot, agent=agent, error=error, partial_text=partial, will_retry=retry):
                self._streamed.pop(slot, None)
                if agent in self.panes:
                    self.panes[agent].fail_turn(slot, error, partial, retry)
                self.status.speaking = ""
            case Planned(last_round=last, first_round=first):
                self.status.last_round, self.status.first_round = last, first
            case RoundCompleted(round=round_):
                self.status.round = round_
            case NeedsHuman() as asked:
                self._ask_decision(asked)
            case HumanActed(action=action, agents=agents) if id(action) not in self._acted:
                self._show_action(action, agents)
            case OutcomeReached():
                self._show_outcome()
            case Waiting(what=what):
                self.status.waiting = what
            case Notice(message=text):
                self.notify(text, title="Note", markup=False)
            case Finished(status=status, error=error):
                self.finished = True
                self.refresh_bindings()
                self.status.speaking = ""
                self.status.set_usage(self.session.usage)
                if error:
                    self.notify(f"{status}: {error}", severity="warning" if status == "cancelled" else "error",
                                markup=False)
                self._show_outcome()
                if self.after is not None:
                    self.after(self)
        self.status.mode = self._mode()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        super().on_worker_state_changed(event)
        if event.worker.group == "debate" and event.state == WorkerState.ERROR and not self.finished:
            self.finished = True
            self.refresh_bindings()
            self.status.mode = self._mode()

    def refresh_outcome(self) -> None:
        """Show the outcome and status again, after something outside the run changed them (a ladder's decision)."""
        self._show_outcome()
        self.status.mode = self._mode()

    def _show_outcome(self) -> None:
        outcome = self.session.outcome
        verdict = self.query_one("#verdict", Static)
        if outcome is None:
            if self.finished and waiting(self.session):
                verdict.update(literal(f"{no_result(self.session)} Decide it from the sessions list (F2).",
                                       "bold $warning"))
                verdict.display = True
            elif self.finished:
                hint = " Resume it from the sessions list (F2)." if self.session.status != "completed" else ""
                verdict.update(literal(f"{no_result(self.session)}{hint}", "bold $warning"))
                verdict.display = True
            return
        set_by = set_by_person(self.session, tui(self).user)
        result = "; ".join(f"{key} {said}" for key, said in set_by.items()) or \
            summarize(self.session, Path()).result or "no score"
        how = f" ({outcome.method})" if outcome.method and not set_by else ""  # the agents' rule did not decide
        confident = confidence_lines(self.session)
        sure = f"\nConfidence: {'; '.join(confident)}" if confident else ""
        verdict.update(literal(f"Final: {result}{how}{sure}", "bold $success"))
        verdict.display = True
        for agent, scores in outcome.per_agent.items():
            if agent in self.panes:
                self.panes[agent].set_result("final: " + ", ".join(
                    f"{k} {'unscored' if v is None else f'{v:g}'}" for k, v in scores.items()))
        for agent, agent_verdict in outcome.agent_verdicts.items():
            if agent in self.panes:
                self.panes[agent].set_result(f"final verdict {agent_verdict or 'unscored'}")
        for agent, result in self._overridden.items():
            self.panes[agent].set_result(result)

    def _show_recorded(self) -> None:
        for action in self._recorded:
            if id(action) not in self._acted and action.after_turn <= len(self.shown):
                self._show_action(action, acted_on(self.session, action))

    def _show_action(self, action: HumanAction, agents: tuple[str, ...]) -> None:
        """In the panes it reaches: a remark in each, an override in the header of the agents it overrules."""
        self._acted.add(id(action))
        result = None
        if action.kind == "override":
            value = action.value if isinstance(action.value, str) else f"{action.value:g}"
            result = f"overridden: {action.criterion} {value}"
        for agent in agents:
            if agent in self.panes:
                self.panes[agent].human_note(f"{action.who} · {action.kind}", describe_action(action), result)
                if result:
                    self._overridden[agent] = result

    # ----- the human's levers ----------------------------------------------------

    def _act(self, **fields: Any) -> None:
        self.control.act(HumanAction(after_turn=0, who=tui(self).user, **fields))

    def action_next(self) -> None:
        """Paused or stepping: the next turn runs (then the run waits for space); running on: it stops stepping
        after the turn in flight. The status line says which, and what to press next."""
        stepping = self.control.paused or self.control.mode == "step"
        self.control.set_mode("step")
        if stepping:
            self.control.next()
        self.status.mode = self._mode()

    def action_auto(self) -> None:
        self.control.set_mode("auto")
        self.control.resume()
        self.status.mode = self._mode()

    def action_pause(self) -> None:
        self.control.toggle_pause()
        self.status.mode = self._mode()

    def action_inject(self) -> None:
        def done(text: str | None) -> None:
            if text:
                self._act(kind="inject", text=text)
                self.notify("Your remark goes into the next turn's prompt.", timeout=3)

        self.app.push_screen(TextPrompt("Remark for the next turn", "e.g. Mind the repeated sentence."), done)

    def action_override(self) -> None:
        def done(answer: OverrideAnswer | None) -> None:
            if answer is None:
                return
            self._act(kind="override", criterion=answer.criterion, value=answer.value, text=answer.why,
                      where="tui override", source="override")
            self._show_outcome()
            what = (f"the verdict on {answer.criterion} set to {answer.value}" if isinstance(answer.value, str)
                    else f"{answer.criterion} set to {answer.value:g}")
            self.notify(what + ("" if self.session.outcome else " (applied when the run ends)"), markup=False)

        self.app.push_screen(OverrideDialog(self.session.criteria, pairwise=self.session.task.pairwise), done)

    def _ask_decision(self, asked: NeedsHuman) -> None:
        self._decision_open = True

        def done(value: str | None) -> None:
            self._decision_open = False
            if value is None:
                self.control.stop("stopped at a decision; resume to decide later")
            else:
                self._act(kind="decide", value=value, criterion=asked.criterion, where="tui decision",
                          source="decision")
            self.status.mode = self._mode()

        self.app.push_screen(DecisionDialog(asked.question, asked.options, asked.labels, asked.details,
                                            report=self.action_report), done)

    # ----- forking: what if you had stepped in ---------------------------------------

    def action_pick(self, step: int) -> None:
        """Move the picked turn; its agent's pane is marked and the status line says which turn it is."""
        if not self.shown:
            self.notify("No turn has finished yet: nothing to pick.", severity="warning")
            return
        at = len(self.shown) if self.picked is None else self.picked + step  # the first press picks the latest
        self.picked = min(max(at, 1), len(self.shown))
        agent = self.shown[self.picked - 1].agent
        for name, pane in self.panes.items():
            pane.set_class(name == agent, "-picked")
        self.status.picked = f"turn {self.picked} of {len(self.shown)} picked"

    def _forkable(self) -> bool:
        """Finished, paused, or in step mode between two turns: nothing a fork copies is still changing."""
        between = self.control.mode == "step" and not self._streaming()
        return self.finished or ((self.control.paused or between) and not self._decision_open)

    def _described(self, at: int) -> str:
        if at == 0:
            return "none: you step in before the first"
        turn = self.shown[at - 1]
        about = f", {turn.criterion}" if turn.criterion else ""
        return f"the last kept: {turn.agent}, round {turn.round}{about}"

    def action_fork(self) -> None:
        if not self._forkable():
            self.notify("Pause the debate (p) or let it finish before forking it.", severity="warning")
            return
        at = self.picked if self.picked is not None else len(self.shown)
        agents = [(a.name, a.model) for a in self.session.agents if a.role != "human"]

        def done(answer: ForkAnswer | None) -> None:
            if answer is not None:
                tui(self).fork(self.source, answer)

        self.app.push_screen(ForkDialog(at, len(self.shown), self._described(at), agents), done)

    def action_report(self) -> None:
        self.app.push_screen(ReportScreen(self.session))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer what the screen can do now, so every key the footer shows does what it says: once the run is
        over no stepping, no remark (it would reach no one: a fork shows what one would have changed) and no
        Stop, escape going back instead; Compare only on a fork."""
        if action in RUNNING_ONLY:
            return not self.finished
        if action == "leave":
            return self.finished
        if action == "compare_original":
            return self.session.forked_from is not None
        return True

    def action_compare_original(self) -> None:
        self.compare_with_original()

    @work(group="debate-compare", exclusive=True, exit_on_error=False, description="compare a fork with its original")
    async def compare_with_original(self) -> None:
        """The fork (as it stands) beside the session it was cut from, read from the store in a thread."""
        from debate_tui.report.compare import compare_sessions
        from debate_tui.store import SessionFileError

        origin = self.session.forked_from
        if origin is None:
            return
        try:
            original = await asyncio.to_thread(tui(self).store.load, origin.session)
        except SessionFileError as exc:
            self.notify(f"cannot read the original: {exc}", severity="error", markup=False)
            return
        tui(self).compare(compare_sessions(original, self.session))

    def action_export(self) -> None:
        start_export(self, self.session)

    def action_back(self) -> None:
        self.control.stop()
        self.status.mode = self._mode()

    def action_leave(self) -> None:
        tui(self).go_back()
