"""One agent's column on the debate screen: who it is, where its score stands, its turns live.

The turn being spoken is a Markdown widget fed through a `MarkdownStream`, so
new text costs an append to its last block, never a re-render of the message;
tokens are queued and appended in batches eight times a second, so three
streaming panes leave the event loop idle most of the time.
A finished turn becomes one Static holding its Rich Markdown rendering (links
printed, never followed), rendered once and cached: a live Markdown widget is a
tree of block widgets, and keeping one per finished turn made every frame's
layout the bottleneck once three panes streamed (and one Static for the whole
history re-rendered every turn at once). Only the latest `MAX_TURNS` finished
turns are kept on screen; the report keeps everything.
"""

from __future__ import annotations

import asyncio
from collections import deque

from rich.console import Group, RenderableType
from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from debate_tui.domain import AgentSpec, Turn
from debate_tui.textsafe import inert
from debate_tui.ui.literal import literal
from debate_tui.ui.widgets.safe_markdown import SafeMarkdown
from debate_tui.ui.widgets.score_trail import ScoreTrail

MAX_TURNS = 8


def turn_result(turn: Turn) -> str:
    """What a finished turn concluded, in a few words."""
    if turn.error is not None:
        return "failed"
    if turn.unscored:
        return "unscored"
    if turn.score is not None:
        pair = f" / {turn.score_b:g}" if turn.score_b is not None else ""
        return f"score {turn.score:g}{pair}"
    if turn.verdict is not None:
        return f"verdict {turn.verdict}"
    if turn.no_issue is not None:
        return "NO ISSUE" if turn.no_issue else "objects"
    return "spoke"


def heading_text(round_: int, criterion: str | None, result: str = "") -> str:
    return " · ".join([f"round {round_}"] + ([criterion] if criterion else []) + ([result] if result else []))


def finished_turn(heading: str, content: str, error: str | None = None) -> RenderableType:
    """A finished turn as one renderable: heading, the reply as Markdown, the error if any."""
    parts: list[RenderableType] = [Text(inert(heading), style="bold"), RichMarkdown(inert(content), hyperlinks=False)]
    if error:
        parts.append(Text(inert(error), style="red"))
    return Group(*parts, Text(""))


class LiveTurn(Vertical):
    """The turn being spoken: a heading and a streaming Markdown widget.

    One per pane, mounted once and reused for every turn (hidden between
    turns): mounting a fresh Markdown tree per turn cost a style pass over new
    nodes at every turn boundary, when all panes change at once.
    """

    def __init__(self) -> None:
        super().__init__(classes="turn")
        self.slot: int | None = None
        self.round = 0
        self.criterion: str | None = None
        self.heading = Static("", classes="turn-heading")
        self.body = SafeMarkdown(classes="turn-body")

    def compose(self) -> ComposeResult:
        yield self.heading
        yield self.body

    async def begin(self, slot: int, round_: int, criterion: str | None) -> None:
        self.slot, self.round, self.criterion = slot, round_, criterion
        self.heading.update(literal(heading_text(round_, criterion), "bold"))
        await self.body.update("")
        self.display = True

    def end(self) -> None:
        self.slot = None
        self.display = False


class AgentPane(Vertical):
    """Display only: the debate screen tells it when a turn starts, grows, ends or fails."""

    def __init__(self, agent: AgentSpec, scales: dict[str, tuple[float, float]], **kwargs) -> None:
        super().__init__(classes="agent-pane", **kwargs)
        self.agent = agent
        self.scales = scales
        self.result = "waiting"
        self.header = Static(self._header_text(), classes="pane-header")
        self.trail = ScoreTrail(classes="pane-trail")
        self.turns = VerticalScroll(classes="pane-turns")
        self.hidden = Static("", classes="pane-hidden")
        self.shown: deque[Static] = deque()
        """The finished turns on screen, oldest first."""
        self.dropped = 0
        self.live = LiveTurn()
        self._stream: MarkdownStream | None = None
        self._pending: list[str] = []

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.trail
        with self.turns:
            yield self.hidden
            yield self.live

    def on_mount(self) -> None:
        self.hidden.display = False
        self.live.display = False

    def _header_text(self) -> Content:
        agent = self.agent
        persona = agent.persona.name if agent.persona else "no persona"
        return Content.assemble(
            literal(agent.name, "bold"), (f" · {agent.role.replace('_', ' ')}", "dim"), "\n",
            literal(f"{persona} · {agent.model}", "italic"), "\n",
            literal(self.result, "bold $accent" if self.result not in ("waiting", "speaking…") else "dim"),
        )

    def set_result(self, result: str) -> None:
        """What the header says this agent concluded (a turn's score, a final verdict, an override)."""
        self.result = result
        self.header.update(self._header_text())

    async def start_turn(self, slot: int, round_: int, criterion: str | None) -> None:
        await self._end_live()
        await self.live.begin(slot, round_, criterion)
        self.header.add_class("-speaking")  # on the pane itself, a class change restyled every turn in it
        self.set_result("speaking…")

    def feed(self, slot: int, text: str) -> None:
        """Queue a delta of the live turn; `flush` shows it. Cheap: called once per token."""
        if self.live.slot == slot:
            self._pending.append(text)

    async def flush(self) -> None:
        """Show the queued deltas as one append (the debate screen calls this eight times a second)."""
        if not self._pending or self.live.slot is None:
            return
        text = "".join(self._pending)
        self._pending.clear()
        if self._stream is None:
            self._stream = Markdown.get_stream(self.live.body)
        await self._stream.write(inert(text))
        self._follow()

    async def finish_turn(self, turn: Turn) -> None:
        result = turn_result(turn)
        await self._end_live()
        await self._add_history(finished_turn(heading_text(turn.round, turn.criterion, result), turn.content))
        if turn.score is not None:
            low, high = self.scales.get(turn.criterion or "", (1.0, 5.0))
            self.trail.add(turn.score, low, high)
        self.set_result(f"{result} · {turn.criterion}" if turn.criterion else result)

    async def fail_turn(self, slot: int, error: str, will_retry: bool) -> None:
        live = self.live.slot == slot
        partial = self.live.body.source if live else ""
        round_, criterion = self.live.round, self.live.criterion
        await self._end_live()
        if live:
            note = "failed, retrying" if will_retry else "failed"
            await self._add_history(finished_turn(heading_text(round_, criterion, note), partial, error))
        self.set_result("retrying…" if will_retry else "failed")

    async def _add_history(self, renderable: RenderableType) -> None:
        turn = Static(renderable, classes="pane-turn")
        self.shown.append(turn)
        await self.turns.mount(turn, before=self.live)
        if len(self.shown) > MAX_TURNS:
            self.dropped += 1
            await self.shown.popleft().remove()
            self.hidden.update(Content.styled(f"… {self.dropped} earlier turn(s) hidden; the report has them all",
                                              "dim italic"))
            self.hidden.display = True
        self.call_after_refresh(self._follow)

    def _follow(self) -> None:
        """Keep the newest text in view once the turns overflow the pane.

        Anchoring earlier would be wrong: Textual then scrolls content shorter
        than the pane to a negative offset, leaving a blank gap on top.
        """
        if not self.turns.is_anchored and self.turns.max_scroll_y > 0:
            self.turns.anchor()

    async def _end_live(self) -> None:
        self._pending.clear()  # the finished turn's full text replaces whatever was still queued
        self.header.remove_class("-speaking")
        if self._stream is not None:
            stream, self._stream = self._stream, None
            try:
                await stream.stop()
            except asyncio.CancelledError:
                # A stream stopped before its task first ran re-raises the task's cancellation
                # here; only a cancellation aimed at us may end the handler.
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
        self.live.end()
