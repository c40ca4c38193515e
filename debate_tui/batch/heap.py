"""The collector's settings for a process that runs a long batch, once its imports are done.

What is loaded by then (litellm's many objects) lives as long as the process, so
`gc.freeze()` spares the collector rescanning it while items come and go (a
tenth or so of the CPU per call against a fast server). And each item leaves a
few thousand short-lived objects: the youngest generation is collected every
10,000 allocations instead of 700 (about half the collector's time an item,
measured). A one-process batch and every worker process of `--processes N`
settle so.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000
"""Allocations between two collections of the youngest generation (Python's default: 700)."""


def settle() -> None:
    """Freeze what is loaded and collect the young generation less often; for the program's own processes only
    (a test process whose objects were frozen would never collect the ones that became garbage)."""
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])
