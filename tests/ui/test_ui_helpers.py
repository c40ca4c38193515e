"""Shared pieces of the TUI tests: polling instead of sleeping, scripted clients, frozen stamps.

No tests here; pytest imports it as a plain module.
"""

from __future__ import annotations

import asyncio
import html
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime

from textual.pilot import Pilot

from debate_tui.domain import Session, Usage
from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback
from debate_tui.llm.demo import DemoClient

FROZEN_AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


async def wait_until(pilot: Pilot, predicate: Callable[[], object], timeout: float = 10.0, what: str = "") -> None:
    """Let the app run until `predicate()` holds; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.02)


async def settle(pilot: Pilot, timeout: float = 3.0) -> None:
    """Wait until two screenshots 50 ms apart are the same: layout and scroll have come to rest."""
    previous = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pilot.pause(0.05)
        shot = re.sub(r"terminal-\d+", "terminal", pilot.app.export_screenshot())
        if shot == previous:
            return
        previous = shot


def freeze(session: Session, session_id: str = "20260102-030405-example") -> None:
    """The app's `stamp` hook: a fixed id and date, so snapshots and files are reproducible."""
    session.id = session_id
    session.created_at = session.updated_at = FROZEN_AT


class RecordingDemo(DemoClient):
    """The demo model, remembering every request it answered."""

    def __init__(self, delay_s: float = 0.0):
        super().__init__(delay_s=delay_s)
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        self.requests.append(request)
        return await super().complete(request, on_delta)


class ScriptedClient:
    """Replies with fixed texts in turn; `hold_after` chunks into reply `hold_at`, it waits for `release`."""

    def __init__(self, replies: list[str], *, hold_at: int | None = None, hold_after: int = 3, chunk: int = 6):
        self.replies = replies
        self.hold_at = hold_at
        self.hold_after = hold_after
        self.chunk = chunk
        self.release = asyncio.Event()
        self.held = asyncio.Event()
        self.calls = 0

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        text = self.replies[min(self.calls, len(self.replies) - 1)]
        index, self.calls = self.calls, self.calls + 1
        chunks = [text[i:i + self.chunk] for i in range(0, len(text), self.chunk)]
        for number, piece in enumerate(chunks):
            if index == self.hold_at and number == self.hold_after:
                self.held.set()
                await self.release.wait()
            if on_delta is not None:
                on_delta(piece)
            await asyncio.sleep(0)
        return Completion(text=text, usage=Usage(calls=1, prompt_tokens=100, completion_tokens=len(text.split())))


def screen_text(app) -> str:
    """The screen as a person reads it: the screenshot's text placed by column, row by row (whatever widget
    drew it; runs of blank cells are drawn as backgrounds only, so they are put back as spaces)."""
    rows: dict[int, list[str]] = {}
    cell = 12.2  # the width of one cell in Textual's SVG
    for x, line, text in re.findall(r'<text[^>]*x="([\d.]+)"[^>]*clip-path="url\(#[\w-]+-line-(\d+)\)">(.*?)</text>',
                                    app.export_screenshot()):
        row = rows.setdefault(int(line), [])
        column = round(float(x) / cell)
        row.extend(" " * (column - len(row)))
        row[column:column + len(text)] = html.unescape(text).replace("\xa0", " ")
    return "\n".join("".join(rows.get(line, [])) for line in range(max(rows, default=-1) + 1))
