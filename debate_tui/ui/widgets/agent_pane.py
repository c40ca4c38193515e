"""One agent's column on the debate screen: who it is, where its score stands, its turns live.

Each turn gets its own Markdown block fed through a `MarkdownStream`, so a
token costs an append to the last block, never a re-render of the message.
Only the latest `MAX_TURNS` blocks are kept in the pane (the report keeps
everything), so a long debate stays as light as a short one.
"""

from __future__ import annotations

import asyncio

from textual.content import Content
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
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


def turn_heading(round_: int, criterion: str | None, result: str = "") -> Content:
    parts = [f"round {round_}"] + ([criterion] if criterion else []) + ([result] if result else [])
    return literal(" · ".join(parts), style="bold")


class TurnBlock(Vertical):
    """One turn: a heading and the reply as Markdown."""

    def __init__(self, slot: int, round_: int, criterion: str | None) -> None:
        super().__init__(classes="turn")
        self.slot = slot
        self.round = round_
        self.criterion = criterion
        self.heading = Static(turn_heading(round_, criterion), classes="turn-heading")
        self.body = SafeMarkdown(classes="turn-body")

    def compose(self) -> ComposeResult:
        yield self.heading
        yield self.body


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
        self._block: TurnBlock | None = None
        self._stream: MarkdownStream | None = None
        self._streamed = 0
        self._dropped = 0

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.trail
        with self.turns:
            yield self.hidden

    def on_mount(self) -> None:
        self.hidden.display = False

    def _header_text(self) -> Content:
        agent = self.agent
        persona = agent.persona.name if agent.persona else "no persona"
        return Content.assemble(
            literal(agent.name, "bold"), (f" · {agent.role.replace('_', ' ')}", "dim"), "\n",
            literal(f"{persona} · {agent.model}", "italic"), "\n",
            literal(self.result, "bold $accent" if self.result not in ("waiting", "speaking…") else "dim"),
        )

    def _set_result(self, result: str) -> None:
        self.result = result
        self.header.update(self._header_text())

    async def start_turn(self, slot: int, round_: int, criterion: str | None) -> None:
        await self._close_stream()
        block = TurnBlock(slot, round_, criterion)
        await self.turns.mount(block)
        self._block, self._streamed = block, 0
        self.add_class("-speaking")
        self._set_result("speaking…")
        await self._prune()

    async def write(self, slot: int, text: str) -> None:
        if self._block is not None and self._block.slot == slot:
            if self._stream is None:
                self._stream = Markdown.get_stream(self._block.body)
            self._streamed += len(text)
            await self._stream.write(inert(text))
            self._follow()

    async def finish_turn(self, turn: Turn) -> None:
        block = self._block if self._block is not None and self._block.slot == turn.slot else None
        await self._close_stream()
        if block is None:
            block = TurnBlock(turn.slot, turn.round, turn.criterion)
            await self.turns.mount(block)
            await self._prune()
        if self._streamed == 0 and turn.content:
            await block.body.update(inert(turn.content))
        result = turn_result(turn)
        block.heading.update(turn_heading(turn.round, turn.criterion, result))
        if turn.score is not None:
            low, high = self.scales.get(turn.criterion or "", (1.0, 5.0))
            self.trail.add(turn.score, low, high)
        self._set_result(f"{result} · {turn.criterion}" if turn.criterion else result)
        self._block = None
        self.call_after_refresh(self._follow)

    async def fail_turn(self, slot: int, error: str, will_retry: bool) -> None:
        block = self._block if self._block is not None and self._block.slot == slot else None
        await self._close_stream()
        if block is not None:
            note = "failed, retrying" if will_retry else "failed"
            block.heading.update(turn_heading(block.round, block.criterion, note))
            await block.mount(Static(literal(error, "$error"), classes="turn-error"))
        self._set_result("retrying…" if will_retry else "failed")
        self._block = None

    def set_result(self, result: str) -> None:
        """An outside verdict for this agent (final score, human override)."""
        self._set_result(result)

    def _follow(self) -> None:
        """Keep the newest text in view once the turns overflow the pane.

        Anchoring earlier would be wrong: Textual then scrolls content shorter
        than the pane to a negative offset, leaving a blank gap on top.
        """
        if not self.turns.is_anchored and self.turns.max_scroll_y > 0:
            self.turns.anchor()

    async def _close_stream(self) -> None:
        self.remove_class("-speaking")
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

    async def _prune(self) -> None:
        blocks = list(self.turns.query(TurnBlock))
        extra = len(blocks) - MAX_TURNS
        if extra <= 0:
            return
        self._dropped += extra
        await self.turns.remove_children(blocks[:extra])
        self.hidden.update(Content.styled(f"… {self._dropped} earlier turn(s) hidden; the report has them all", "dim italic"))
        self.hidden.display = True
