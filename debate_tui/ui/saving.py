"""Saving a session from the event loop without ever writing on it.

The JSON is dumped in the loop (a consistent snapshot of the live session),
then written atomically in a thread. A lock keeps writes in order, so a slow
older write can never land after a newer one. Saves asked for while another
waits are one save: five agents finishing their turns together wrote the
whole session five times, each write holding what the last one alone needed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from debate_tui.domain import Session
from debate_tui.safefile import write_problem
from debate_tui.store import write_atomic

if TYPE_CHECKING:
    from debate_tui.engine.runner import Runner
    from debate_tui.safefile import SessionLock


class SessionSaver:
    """The runner's `save` callback for one session file: it returns once a write holding the session
    as it was when asked is on disk."""

    def __init__(self, path: Path, on_error: Callable[[str], None] | None = None):
        """`on_error`: told once, in one line, when the file cannot be written (a full disk): the app stops the
        run with it, as `run` does, so nothing more is asked of a model whose answers could not be kept."""
        self.path = path
        self.on_error = on_error
        self.error: str | None = None
        self._lock = asyncio.Lock()
        self._asked = 0
        """Saves asked for so far."""
        self._written = 0
        """The asks the last write covered: it dumped the session after them."""
        self.saves = 0
        """Writes made."""

    async def __call__(self, session: Session) -> None:
        self._asked += 1
        wanted = self._asked
        async with self._lock:
            if self._written >= wanted:  # a write that dumped the session after this ask is on disk
                return
            if self.error is not None:
                return
            covered = self._asked
            text = session.model_dump_json(indent=1)
            try:
                await asyncio.to_thread(write_atomic, self.path, text)
            except OSError as exc:  # the file on disk stays its last complete version
                self.error = write_problem(exc, f"the session file {self.path}", "or free space and resume it")
                if self.on_error is not None:
                    self.on_error(self.error)
                return
            self._written = covered
            self.saves += 1


class LockedRun:
    """A runner that holds its session's OS lock (`safefile.SessionLock`) until its run ends, however it ends,
    so a `debate-tui resume` of the same session is refused meanwhile, and the other way round."""

    def __init__(self, runner: Runner, lock: SessionLock):
        self.runner = runner
        self.lock = lock

    async def run(self) -> Session:
        try:
            return await self.runner.run()
        finally:
            self.lock.release()
