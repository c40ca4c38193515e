"""A background import gives way to a busy main thread (#46: the first real call froze the screen).

The main thread's CPU clock is the test's own, so "busy" does not depend on how loaded this machine is: a
clock that advances with the wall clock is a main thread using a whole core.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from debate_tui.giving_way import LONGEST_WAIT_S, STALE_S, giving_way, main_thread_cpu

MODULES = 20
BUSY_S = 0.15
assert BUSY_S < LONGEST_WAIT_S, "the busy spell must be shorter than an import's longest wait"


class MainClock:
    """A main thread's CPU seconds: advancing with the wall clock while `busy`, still otherwise."""

    def __init__(self) -> None:
        self.busy_until = 0.0
        self.spent = 0.0

    def __call__(self) -> float:
        return min(time.monotonic(), self.busy_until) - self.spent


@pytest.fixture
def fresh_modules(tmp_path: Path) -> Iterator[list[str]]:
    """`MODULES` modules on sys.path, never imported before."""
    names = [f"gw_{tmp_path.name}_{index}".replace("-", "_") for index in range(MODULES)]
    for name in names:
        (tmp_path / f"{name}.py").write_text("VALUE = 1\n")
    sys.path.insert(0, str(tmp_path))
    try:
        yield names
    finally:
        sys.path.remove(str(tmp_path))
        for name in names:
            sys.modules.pop(name, None)


def import_in_a_thread(names: list[str], polite: bool, clock: MainClock) -> list[float]:
    """When each module was imported by a thread that starts as the main thread turns busy for `BUSY_S`."""
    go, times = threading.Event(), []

    def importer() -> None:
        with giving_way(clock) if polite else contextlib.nullcontext():
            go.wait()
            for name in names:
                __import__(name)
                times.append(time.monotonic())

    thread = threading.Thread(target=importer)
    thread.start()
    time.sleep(STALE_S * 1.5)  # the importer waits inside the block, its last look at the main thread stale
    now = time.monotonic()
    clock.spent, clock.busy_until = now, now + BUSY_S  # from here the main thread's clock runs: busy
    go.set()
    thread.join(timeout=10)
    return times


def test_a_thread_importing_waits_while_the_main_thread_is_busy(fresh_modules: list[str]) -> None:
    clock = MainClock()
    times = import_in_a_thread(fresh_modules, polite=True, clock=clock)
    assert len(times) == MODULES
    assert min(times) >= clock.busy_until, "a module was imported while the main thread was busy"


def test_without_giving_way_the_same_imports_run_during_the_busy_spell(fresh_modules: list[str]) -> None:
    clock = MainClock()
    times = import_in_a_thread(fresh_modules, polite=False, clock=clock)
    assert max(times) < clock.busy_until


def test_an_idle_main_thread_does_not_hold_the_import_up(fresh_modules: list[str]) -> None:
    """The main thread waiting (as the loop does between frames): the modules are imported at once."""
    clock, done = MainClock(), []

    def importer() -> None:
        with giving_way(clock):
            started = time.monotonic()
            for name in fresh_modules:
                __import__(name)
            done.append(time.monotonic() - started)

    thread = threading.Thread(target=importer)
    thread.start()
    thread.join(timeout=10)
    assert done and done[0] < LONGEST_WAIT_S


def test_a_main_thread_busy_for_good_does_not_stop_the_import(fresh_modules: list[str]) -> None:
    """A main thread that never rests (or waits for this very import) is waited for at most LONGEST_WAIT_S
    at a time: every module still comes."""
    clock = MainClock()
    clock.busy_until = float("inf")
    times: list[float] = []

    def importer() -> None:
        with giving_way(clock):
            for name in fresh_modules[:3]:
                __import__(name)
                times.append(time.monotonic())

    thread = threading.Thread(target=importer)
    thread.start()
    thread.join(timeout=10)
    assert len(times) == 3


def test_on_the_main_thread_it_changes_nothing(fresh_modules: list[str]) -> None:
    before = list(sys.meta_path)
    with giving_way():
        assert sys.meta_path == before
        __import__(fresh_modules[0])
    assert sys.meta_path == before


def test_the_finder_is_gone_when_no_thread_gives_way(fresh_modules: list[str]) -> None:
    before = list(sys.meta_path)
    seen: list[int] = []

    def importer() -> None:
        with giving_way():
            seen.append(len(sys.meta_path))
            __import__(fresh_modules[0])

    thread = threading.Thread(target=importer)
    thread.start()
    thread.join(timeout=10)
    assert seen == [len(before) + 1]
    assert sys.meta_path == before


def test_the_main_threads_clock_is_read_from_another_thread() -> None:
    clock = main_thread_cpu()
    if clock is None:
        pytest.skip("this platform has no per-thread CPU clock")
    before, readings = clock(), []
    for _ in range(200_000):  # the main thread's own work, which the other thread must see
        pass
    thread = threading.Thread(target=lambda: readings.append(clock()))
    thread.start()
    thread.join()
    assert readings[0] > before
