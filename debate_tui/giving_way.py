"""Imports in a background thread that give way to a busy main thread.

`import litellm` is about 3,000 modules and seconds of CPU. Imported in a
thread, it still holds the GIL half of the time the screen needs it, and for
a whole C call (a compiled module, a pydantic schema) when it has it: keys
pressed while the first real run started were answered 0.4-9 s later. Inside
`giving_way()`, the importing thread checks at each new module whether the
main thread has been using its CPU; while it has (a key being answered, a
screen being drawn), the import waits, so it fills the main thread's idle
time instead of competing with it. Where a thread's CPU clock cannot be read
(not Linux or BSD) imports simply run.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType

BUSY = 0.3
"""The main thread is busy while it uses more than this share of a core."""
CHECK_EVERY_S = 0.002
"""At most one look at the main thread's clock per this many seconds of importing."""
PAUSE_S = 0.005
"""How long a waiting import sleeps between looks."""
LONGEST_WAIT_S = 0.25
"""An import waits at most this long at a time, then runs for at least `SLICE_S`: a main thread that is busy
for good (or waiting for this very import) does not stop it."""
SLICE_S = 0.025
STALE_S = 0.1
"""A last look older than this says nothing of now: a fresh one is taken over `PAUSE_S`."""


def main_thread_cpu() -> Callable[[], float] | None:
    """The main thread's CPU seconds, read from any thread; None where the platform cannot tell."""
    try:
        clock = time.pthread_getcpuclockid(threading.main_thread().ident or 0)
    except (AttributeError, OSError):
        return None
    return lambda: time.clock_gettime(clock)


class _GiveWay:
    """First on `sys.meta_path` while a thread gives way: finds nothing, only waits its turn. (A finder needs
    only `find_spec`; `importlib.abc` and its base class cost 1.5 ms before the first frame.)"""

    def __init__(self, main_cpu: Callable[[], float]) -> None:
        self.main_cpu = main_cpu
        self.threads: set[int] = set()
        self.seen = (time.monotonic(), main_cpu())
        self.free_until = 0.0

    def _busy_since_seen(self) -> bool:
        wall, cpu = time.monotonic(), self.main_cpu()
        then_wall, then_cpu = self.seen
        self.seen = (wall, cpu)
        return cpu - then_cpu > BUSY * (wall - then_wall)

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> None:
        if threading.get_ident() not in self.threads:
            return None
        now = time.monotonic()
        if now < self.free_until or now - self.seen[0] < CHECK_EVERY_S:
            return None
        waited = 0.0
        if now - self.seen[0] > STALE_S:
            self.seen = (now, self.main_cpu())
            time.sleep(PAUSE_S)
            waited = PAUSE_S
        while self._busy_since_seen() and waited < LONGEST_WAIT_S:
            time.sleep(PAUSE_S)
            waited += PAUSE_S
        if waited >= LONGEST_WAIT_S:
            self.free_until = time.monotonic() + SLICE_S
        return None


_finder: _GiveWay | None = None
_lock = threading.Lock()


@contextlib.contextmanager
def giving_way(main_cpu: Callable[[], float] | None = None) -> Iterator[None]:
    """Imports made by this thread inside the block wait while the main thread is busy (no-op on the main thread).

    `main_cpu`: the main thread's CPU seconds (`main_thread_cpu` unless a test gives its own clock).
    """
    global _finder
    main_cpu = main_cpu or main_thread_cpu()
    if threading.current_thread() is threading.main_thread() or main_cpu is None:
        yield
        return
    me = threading.get_ident()
    with _lock:
        if _finder is None:
            _finder = _GiveWay(main_cpu)
            sys.meta_path.insert(0, _finder)
        finder = _finder
        finder.threads.add(me)
    try:
        yield
    finally:
        with _lock:
            finder.threads.discard(me)
            if not finder.threads:
                sys.meta_path.remove(finder)
                _finder = None
