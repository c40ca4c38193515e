"""Saving a session from the event loop without ever writing on it.

The JSON is dumped in the loop (a consistent snapshot of the live session),
then written atomically in a thread. A lock keeps writes in order, so a slow
older write can never land after a newer one.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from debate_tui.domain import Session
from debate_tui.store import write_atomic


class SessionSaver:
    """The runner's `save` callback for one session file."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = asyncio.Lock()
        self.saves = 0

    async def __call__(self, session: Session) -> None:
        async with self._lock:
            text = session.model_dump_json(indent=1)
            await asyncio.to_thread(write_atomic, self.path, text)
            self.saves += 1
