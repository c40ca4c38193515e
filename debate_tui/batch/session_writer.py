"""A batch's item sessions, written in the background: the latest state of each, written once per group.

Why. The engine saves a session after every turn and when it ends. Awaited one by
one, through a thread, with two fsyncs each, those saves held every worker back:
a single-judge batch against a fast server ran at about 60% of plain litellm.
Here a save only says "this is the item's state now" and returns. One task
writes whatever is pending, each file once however many saves it got since the
last write, then takes what arrived meanwhile; so the writes group themselves
by how fast the disk is, and an item whose turn and end come together (the
single judge) is written once.

What a kill can lose. Only the states not yet written: their turns are asked
again on resume. An item's results line is appended after its final session is
on disk (`then`), so a line never points at a session that is missing or older.
The files are replaced atomically but not fsynced: an item session is a resume
point, not the record (the results file is), and an fsync a file capped a
batch at the disk's rate (about 150 files/s here) while unwritten sessions
piled up in memory. A power cut may lose the newest ones; their items run again.

Memory. Workers wait (`room`) before starting an item while `max_pending`
sessions are unwritten, so a slow disk slows the batch instead of filling memory.

Not before an item's first turn: the runner saves a session as it starts, so
that a first call that hangs leaves something to see and resume; a batch shows
its progress itself and starts such an item again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from debate_tui.domain import Session
from debate_tui.safefile import write_all_atomic

GATHER_S = 0.005
"""How long a write waits for more saves once one arrives: an item's turn and its end a few
milliseconds apart (the single judge against a fast server) are then written once, not twice."""
SLICE_FILES = 8
"""Files written between two returns to the event loop, so that a backlog never holds the calls in flight.

On the loop, not through a thread: where the loop is busy (a batch against a fast server uses a whole
core), a thread waits for the interpreter's lock after every system call of every file. Measured on a
single-judge batch of 2,000 items against a 10 ms server: through a thread, the writes fell behind
(groups of about 118 files took 0.29 s), the 256 unwritten sessions that hold the workers back were
reached, and the batch ran at 344 items/s against 356 with every file written on the loop."""


class SessionWriter:
    def __init__(self, max_pending: int = 256) -> None:
        self.max_pending = max_pending
        self._pending: dict[Path, Session] = {}
        self._writing: set[Path] = set()
        self._after: dict[Path, list[Callable[[], None]]] = {}
        self._wake = asyncio.Event()
        self._written = asyncio.Event()
        self._closing = False
        self.error: BaseException | None = None
        """Why the last write failed; every later save raises it, so the batch stops instead of losing work."""
        self.files_written = 0

    def save(self, path: Path, session: Session) -> None:
        """The engine's save function for one item: remember its state, write it soon."""
        if self.error is not None:
            raise self.error
        if session.status == "running" and not session.turns:
            return
        self._pending[path] = session
        self._wake.set()

    async def room(self) -> None:
        """Return once fewer than `max_pending` sessions wait to be written."""
        while len(self._pending) >= self.max_pending and self.error is None:
            self._written.clear()
            await self._written.wait()

    def then(self, path: Path, action: Callable[[], None]) -> None:
        """Run `action` once `path`'s latest state is on disk, or now if it already is."""
        if path in self._pending or path in self._writing:
            self._after.setdefault(path, []).append(action)
        else:
            action()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Write in the background while the block runs; on leaving it, write what is left."""
        task = asyncio.ensure_future(self._write_until_closed())
        try:
            yield
        finally:
            self._closing = True
            self._wake.set()
            await task

    async def _write_until_closed(self) -> None:
        while True:
            await self._wake.wait()
            if not self._closing:
                await asyncio.sleep(GATHER_S)
            self._wake.clear()
            if self._pending:
                await self._write_pending()
            if self._closing and not self._pending:
                return

    async def _write_pending(self) -> None:
        pending, self._pending = self._pending, {}
        self._writing = set(pending)
        states = list(pending.items())
        try:
            for start in range(0, len(states), SLICE_FILES):
                if start:
                    await asyncio.sleep(0)
                part = states[start : start + SLICE_FILES]  # dumped on the loop, where the engine changes them
                write_all_atomic([(path, session.model_dump_json(indent=1)) for path, session in part], durable=False)
                self.files_written += len(part)
                self._settle([path for path, _ in part])
        except Exception as exc:  # a full disk, a removed directory: stop the batch, as an awaited save would
            self.error = exc
            raise
        finally:
            self._writing = set()
            self._written.set()

    def _settle(self, written: list[Path]) -> None:
        """Run what waited for these files, unless a newer state of one is still to be written."""
        for path in written:
            self._writing.discard(path)
            if path not in self._pending:
                for action in self._after.pop(path, []):
                    action()
