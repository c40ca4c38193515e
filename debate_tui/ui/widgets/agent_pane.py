"""One agent's column on the debate screen: who it is, where its score stands, its turns live.

The turns are one `TurnLog` (Line API): streamed text is queued per token and
appended a few times a second, so a growing turn repaints only its own lines
and never lays out the screen again. Only the latest `MAX_TURNS` finished
turns stay in the pane; the report keeps everything.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from debate_tui.domain import AgentSpec, Turn
from debate_tui.ui.literal import literal
from debate_tui.ui.widgets.kept_lines import KeptLines
from debate_tui.ui.widgets.score_trail import ScoreTrail
from debate_tui.ui.widgets.turn_log import TurnLog

MAX_TURNS = 8


def turn_result(turn: Turn, verdict: str | None = None) -> str:
    """What a finished turn concluded, in a few words; `verdict` is its verdict as the person reads it
    (the original numbering), when that differs from the one the agent gave."""
    if turn.error is not None:
        return "failed"
    if turn.unscored:
        return "unscored"
    if turn.score is not None:
        pair = f" / {turn.score_b:g}" if turn.score_b is not None else ""
        return f"score {turn.score:g}{pair}"
    if turn.verdict is not None:
        return f"verdict {verdict or turn.verdict}"
    if turn.no_issue is not None:
        return "NO ISSUE" if turn.no_issue else "objects"
    return "spoke"


def fitting(forms: list[str], width: int | None) -> str:
    """The first of `forms` (longest first) no wider than `width`; the last when none is; the first with no width."""
    if width is None:
        return forms[0]
    return next((form for form in forms if cell_len(form) <= width), forms[-1])


def header_lines(agent: AgentSpec, width: int | None) -> tuple[str, str]:
    """Who speaks ("Critic · critic") and how ("strictly-negative · openai/smollm2"), fitted to `width`.

    A narrow pane (three or four agents at 80 columns) drops the role, then the provider's prefix of the
    model ("openai/"), then "no persona", before it cuts anything: those are what the screen can spare.
    """
    role = agent.role.replace("_", " ")
    model = agent.model
    short = model.rsplit("/", 1)[-1]
    persona = agent.persona.name if agent.persona else ""
    how = [f"{persona or 'no persona'} · {model}", f"{persona or 'no persona'} · {short}",
           *([f"{persona} · {short}", persona] if persona else [model, short])]
    return fitting([f"{agent.name} · {role}", agent.name], width), fitting(how, width)


def heading_text(round_: int, criterion: str | None, result: str = "") -> str:
    return " · ".join([f"round {round_}"] + ([criterion] if criterion else []) + ([result] if result else []))


class PaneHeader(Static, KeptLines):
    """Who the agent is and what it concluded: three lines, redrawn when they change, not with every repaint."""


class AgentPane(Vertical, KeptLines):
    """Display only: the debate screen tells it when a turn starts, grows, ends or fails."""

    def __init__(self, agent: AgentSpec, scales: dict[str, tuple[float, float]], **kwargs: Any) -> None:
        super().__init__(classes="agent-pane", **kwargs)
        self.agent = agent
        self.scales = scales
        self.result = "waiting"
        self.header = PaneHeader(self._header_text(), classes="pane-header")
        self.trail = ScoreTrail(classes="pane-trail")
        self.turns = TurnLog(keep=MAX_TURNS, classes="pane-turns")
        self._round = 0
        self._criterion: str | None = None
        self._reminder = ""
        """The live call's label when it is a reminder: kept on its entry once it ends."""

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.trail
        yield self.turns

    def _header_text(self, width: int | None = None) -> Content:
        """Each line in the longest form that fits `width` (`header_lines`), cut at the edge only past the last."""
        agent = self.agent
        who, model = header_lines(agent, width)
        role = who.removeprefix(agent.name)
        return Content.assemble(
            literal(agent.name, "bold"), (role, "dim"), "\n", literal(model, "italic"), "\n",
            literal(self.result, "bold $accent" if self.result not in ("waiting", "speaking…") else "dim"),
        )

    def on_resize(self, event: events.Resize) -> None:
        self._redraw_header()

    def _redraw_header(self) -> None:
        """Three lines, always: no layout pass."""
        self.header.update(self._header_text(self.header.content_size.width or None), layout=False)

    def set_result(self, result: str) -> None:
        """What the header says this agent concluded (a turn's score, a final verdict, an override)."""
        self.result = result
        self._redraw_header()

    @property
    def live_slot(self) -> int | None:
        return self.turns.live.slot if self.turns.live else None

    def start_turn(self, slot: int, round_: int, criterion: str | None, reminder: str = "") -> None:
        """`reminder`: this call asks the turn's agent again for what its reply lacked ("the score line")."""
        self._round, self._criterion = round_, criterion
        self._reminder = f"reminder: asked for {reminder}" if reminder else ""
        self.turns.begin(slot, heading_text(round_, criterion, self._reminder))
        self.header.add_class("-speaking")
        self.set_result("speaking…")

    def append(self, text: str) -> None:
        """More of the live turn (the debate screen gathers tokens and calls this a few times a second)."""
        self.turns.append(text)

    def finish_turn(self, turn: Turn, verdict: str | None = None) -> None:
        result = turn_result(turn, verdict)
        self.header.remove_class("-speaking")
        ending = f" · {turn.ending}" if turn.ending else ""  # "truncated at 200 tokens", "cut off ..."
        reminder = f"{self._reminder} · " if self._reminder else ""
        self.turns.add_turn(heading_text(turn.round, turn.criterion, reminder + result) + ending, turn.content)
        self._reminder = ""
        if turn.score is not None:
            low, high = self.scales.get(turn.criterion or "", (1.0, 5.0))
            self.trail.add(turn.score, low, high)
        else:
            self.trail.add_result(result)
        self.set_result(f"{result} · {turn.criterion}" if turn.criterion else result)

    def human_note(self, heading: str, text: str, result: str | None = None) -> None:
        """A person's action where it acts: an entry in the turns and, for an override, the header's result."""
        self.turns.add_turn(heading, text)
        if result is not None:
            self.set_result(result)

    def fail_turn(self, slot: int, error: str, partial: str, will_retry: bool) -> None:
        self.header.remove_class("-speaking")
        if self.live_slot == slot:
            note = "failed, retrying" if will_retry else "failed"
            self.turns.add_turn(heading_text(self._round, self._criterion, note), partial, error)
        else:
            self.turns.end()
        if not will_retry:
            self.trail.add_result("failed")
        self.set_result("retrying…" if will_retry else "failed")
