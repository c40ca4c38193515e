"""The run controller: the gate a run passes before every turn, and the human's levers.

Auto mode passes straight through; step mode waits for `next()`; pause holds
until `resume()`; `stop()` cancels the turn in flight at once. Human actions
(inject, override, decide) are handed to the runner, which records them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Literal

from debate_tui.domain import HumanAction

Mode = Literal["auto", "step"]


class Stopped(Exception):
    """The person (or a budget guard) stopped the run."""


class RunControl:
    def __init__(self, mode: Mode = "auto"):
        self.mode: Mode = mode
        self.paused = False
        self.stopped = False
        self.stop_reason = ""
        self._step_tokens = 0
        self._changed = asyncio.Event()
        self._decision: asyncio.Future[str] | None = None
        self.on_action: Callable[[HumanAction], None] | None = None
        """Set by the runner: records an action into the session."""
        self._cancel_current: Callable[[], None] | None = None

    def _poke(self) -> None:
        self._changed.set()

    def set_mode(self, mode: Mode) -> None:
        self.mode = mode
        self._poke()

    def next(self) -> None:
        """Let one more turn start (step mode); also resumes a pause."""
        self._step_tokens += 1
        self.paused = False
        self._poke()

    def pause(self) -> None:
        self.paused = True
        self._poke()

    def resume(self) -> None:
        self.paused = False
        self._poke()

    def toggle_pause(self) -> bool:
        self.resume() if self.paused else self.pause()
        return self.paused

    def stop(self, reason: str = "stopped by the user") -> None:
        self.stopped = True
        self.stop_reason = reason
        if self._cancel_current is not None:
            self._cancel_current()
        if self._decision is not None and not self._decision.done():
            self._decision.cancel()
        self._poke()

    def act(self, action: HumanAction) -> None:
        """Record a human action (inject, override, decide) through the runner."""
        if self.on_action is not None:
            self.on_action(action)
        if action.kind == "decide" and self._decision is not None and not self._decision.done():
            self._decision.set_result(str(action.value))

    async def gate(self) -> None:
        """Wait until the next turn may start."""
        while True:
            if self.stopped:
                raise Stopped(self.stop_reason)
            if not self.paused and (self.mode == "auto" or self._step_tokens > 0):
                if self.mode == "step":
                    self._step_tokens -= 1
                return
            self._changed.clear()
            await self._changed.wait()

    async def wait_for_decision(self) -> str:
        self._decision = asyncio.get_running_loop().create_future()
        try:
            return await self._decision
        except asyncio.CancelledError:
            raise Stopped(self.stop_reason or "stopped while waiting for a decision") from None
        finally:
            self._decision = None

    def track(self, cancel: Callable[[], None] | None) -> None:
        """The runner registers how to cancel the call in flight, so `stop` is immediate."""
        self._cancel_current = cancel
