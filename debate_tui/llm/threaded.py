"""Model calls on an event loop of their own, in a thread, so the TUI's loop only draws and listens.

litellm parses every streamed chunk in Python (about 1.5 ms of CPU each) and,
when a stream ends, rebuilds the whole reply, copies it and runs its logging:
20-60 ms a call, and five calls end together at a ChatEval turn. On the TUI's
loop that work ran between frames, and a key press waited behind all of it.
On a loop of its own it still takes the interpreter's lock, but the two threads
take turns every millisecond, so a key press waits that long, not a burst.

Deltas cross back in batches, at most `HANDOVER_S` apart for all the calls
together: the caller's loop wakes some twenty times a second, not once a chunk
(a wake-up per chunk cost as much as drawing the text). The caller sees every
delta, in order, before its call returns, and none after it returned or was
cancelled.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable

from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback, LLMClient

HANDOVER_S = 0.05
"""Most time a delta waits in the calls' thread: the TUI shows text at most eight times a second anyway."""
SWITCH_INTERVAL_S = 0.001
"""How long a thread may keep the interpreter while another waits, once the calls' thread runs (Python's
default is 5 ms). A key press crosses the event loop several times, and each crossing waited for a
switch while litellm finished five streams: key press p95 72-134 ms, 56-72 ms at 1 ms, for no measurable CPU."""


class DeltaRelay:
    """One call's text, pushed in the calls' thread and delivered on the caller's loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, deliver: DeltaCallback,
                 waiting: Callable[[DeltaRelay], None]) -> None:
        self.loop = loop
        self._deliver = deliver
        self._waiting = waiting
        """Told (in the calls' thread) when text starts waiting here, so a hand-over comes for it."""
        self._lock = threading.Lock()
        self._pending: list[str] = []
        self._closed = False

    def push(self, text: str) -> None:
        """In the calls' thread."""
        with self._lock:
            self._pending.append(text)
            first = len(self._pending) == 1
        if first:
            self._waiting(self)

    def flush(self) -> None:
        """On the caller's loop: deliver what has arrived, as one delta."""
        with self._lock:
            texts, self._pending = self._pending, []
        if texts and not self._closed:
            self._deliver("".join(texts))

    def close(self) -> None:
        """Deliver what is left; anything pushed later (a cancelled call winding down) is dropped."""
        self.flush()
        self._closed = True


class ThreadedClient:
    """Runs `inner`'s calls on an event loop in a daemon thread, started at the first call."""

    def __init__(self, inner: LLMClient, name: str = "model-calls") -> None:
        self.inner = inner
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._outbox: list[DeltaRelay] = []
        """Relays with text waiting for the next hand-over; only the calls' thread touches it."""

    def _calls_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                sys.setswitchinterval(SWITCH_INTERVAL_S)
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
                self._thread.start()
                self._loop = loop
            return self._loop

    def _waiting(self, relay: DeltaRelay) -> None:
        """In the calls' thread: the first relay to wait since the last hand-over schedules the next."""
        self._outbox.append(relay)
        if len(self._outbox) == 1:
            asyncio.get_running_loop().call_later(HANDOVER_S, self._hand_over)

    def _hand_over(self) -> None:
        relays, self._outbox = self._outbox, []
        for loop in {relay.loop for relay in relays}:
            loop.call_soon_threadsafe(_flush_all, [relay for relay in relays if relay.loop is loop])

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        """As `inner.complete`; cancelling the caller cancels the call in its thread."""
        relay = None if on_delta is None else DeltaRelay(asyncio.get_running_loop(), on_delta, self._waiting)
        call = self.inner.complete(request, None if relay is None else relay.push)
        future = asyncio.run_coroutine_threadsafe(call, self._calls_loop())
        try:
            return await asyncio.wrap_future(future)
        finally:
            if relay is not None:
                relay.close()

    def close(self) -> None:
        """Cancel the calls still running, then stop their loop and thread."""
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(_cancel_all(), loop).result(timeout=5)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            if not thread.is_alive():
                loop.close()


def _flush_all(relays: list[DeltaRelay]) -> None:
    for relay in relays:
        relay.flush()


async def _cancel_all() -> None:
    calls = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in calls:
        task.cancel()
    await asyncio.gather(*calls, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()
