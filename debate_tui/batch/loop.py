"""The event loop a batch runs on: uvloop's where it is installed, asyncio's own elsewhere.

Against a fast server a batch is bound by one core, and the loop's own work (polling sockets, waking
tasks, moving bytes for litellm's HTTP client) is a share of it that uvloop does in C. Its loop is a
drop-in `asyncio` loop; it is not built for Windows, where the standard loop runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's `new_event_loop`, or None (asyncio's default) where uvloop is not installed."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
