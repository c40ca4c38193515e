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
import concurrent.futures
import functools
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from debate_tui.domain import Session
from debate_tui.safefile import write_all_atomic

GATHER_S = 0.005
"""How long a write waits for more saves once one arrives: an item's turn and its end a few
milliseconds apart (the single judge against a fast server) are then written once, not twice."""
SLICE_FILES = 8
"""Files the event loop writes at a time. A group this small is written on the loop even when it is idle (less
CPU than a thread's round trip: about 0.6 ms an item, single-judge batch against a 10 ms server); a larger one,
when the loop is busy, in slices of this many, with a turn for the calls in flight between them."""
BUSY_SHARE = 0.5
"""The share of the time since the last write that the loop's thread spent computing, from which the loop
counts as busy and writes the files itself.

Through a thread, the files' system calls overlap the loop's waiting: with 200 ms replies the one-process
batch ran at 0.975x of litellm alone that way against 0.94x with every file on the loop (3 interleaved rounds,
a file costing several hundred microseconds of this machine's disk). But where the loop keeps its core busy
(10 ms replies), the thread waits for the interpreter's lock after each system call: groups of about 118
files took 0.19-0.44 s, the 256 unwritten sessions that hold the workers back were reached in every run, and
the batch ran at 0.918x against 0.945x with the files on the loop (5 rounds)."""


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
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="session-files")
        """Its own thread, not the loop's default executor: that one may run its work inline (batch/loop.py)."""

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
            try:
                await task
            finally:
                self._thread.shutdown(wait=False)

    async def _write_until_closed(self) -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        while True:
            await self._wake.wait()
            if not self._closing:
                await asyncio.sleep(GATHER_S)
            self._wake.clear()
            if self._pending:
                busy = time.thread_time() - cpu > BUSY_SHARE * (time.perf_counter() - wall)  # since the last write
                await self._write_pending(on_loop=busy or self._closing or len(self._pending) <= SLICE_FILES)
                wall, cpu = time.perf_counter(), time.thread_time()
            if self._closing and not self._pending:
                return

    async def _write_pending(self, *, on_loop: bool) -> None:
        pending, self._pending = self._pending, {}
        self._writing = set(pending)
        states = list(pending.items())
        size = SLICE_FILES if on_loop else len(states)  # through a thread: the whole group in one call
        try:
            for start in range(0, len(states), size):
                if start:
                    await asyncio.sleep(0)
                part = states[start : start + size]
                files = [(path, session.model_dump_json(indent=1)) for path, session in part]  # on the loop: a
                # consistent snapshot, since the engine changes these sessions only there
                if on_loop:
                    write_all_atomic(files, durable=False)
                else:
                    await asyncio.get_running_loop().run_in_executor(
                        self._thread, functools.partial(write_all_atomic, files, durable=False))
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
