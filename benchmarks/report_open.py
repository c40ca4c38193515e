"""Issue 46, opening the report: `r` to the report screen's first frame, at 1 and at 500 turns.

The report of a long debate was built whole before its screen could draw (the
Markdown of every turn, the quoted passages, the text's lines), so `r` took
0.66-1.7 s with no feedback. The target is the first frame within 200 ms at
any size, the rest filled in as it is built. Both sessions are the shipped
MATEval example (26 turns, a located error), its turns cut to 1 or cycled to
500; each is opened REPEATS times in one headless app at 120x36, from the call
`r` makes (`DebateTUI.open_report`) to the first refresh of the report screen,
and to the report being complete (a detail). An empty screen pushed the same
way, side by side in the same run, is the machine's baseline.
"""

from __future__ import annotations

import asyncio
import sys
import time

from benchmarks.common import Row, Section, emit, median, quiet_env, run_child, work_dir

SIZES = (1, 500)
REPEATS = 5
TARGET_S = 0.2


def session_of(turns: int):  # type: ignore[no-untyped-def]  # the Session type is imported in the child only
    from debate_tui.locations import examples_dir
    from debate_tui.store import read_session

    session = read_session(examples_dir() / "mateval-example.json")
    base = list(session.turns)
    session.turns = [base[i % len(base)].model_copy(update={"slot": i, "round": 1 + i // len(base)})
                     for i in range(turns)]
    return session


async def time_open(turns: int, repeats: int = REPEATS) -> dict[str, float]:
    """Seconds from opening the report to its first frame, and to the report being complete."""
    from textual.screen import Screen

    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.screens.report import ReportScreen

    session = session_of(turns)
    app = DebateTUI()
    first, built, bare, first_cpu, bare_cpu = [], [], [], [], []

    async def frame_of(kind: type[Screen], cpu: list[float]) -> float:
        """When a screen of `kind` on top was first refreshed (checked right after each refresh); the event
        loop's thread's CPU time until then goes to `cpu` (what the load of other processes does not change)."""
        started = time.thread_time()
        while not isinstance(app.screen, kind):
            await asyncio.sleep(0.0005)
        drawn: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        app.screen.call_after_refresh(lambda: drawn.done() or drawn.set_result(time.perf_counter()))
        at = await drawn
        cpu.append(time.thread_time() - started)
        return at

    async def complete() -> float:
        screen = app.screen
        while not getattr(screen, "ready", True):  # a report built in one go is complete at its first frame
            await asyncio.sleep(0.001)
        return time.perf_counter()

    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.5)
        for _ in range(repeats + 1):
            started = time.perf_counter()
            app.push_screen(Screen())
            bare.append(await frame_of(Screen, bare_cpu) - started)
            await app.pop_screen()
            started = time.perf_counter()
            app.open_report(session)
            first.append(await frame_of(ReportScreen, first_cpu) - started)
            built.append(await complete() - started)
            await app.pop_screen()
            await asyncio.sleep(0.2)  # not `pilot.pause()`: it waits for every widget, thousands after a long report
    return {name: median(values[1:]) for name, values in
            (("first", first), ("built", built), ("bare", bare), ("first_cpu", first_cpu), ("bare_cpu", bare_cpu))}


def child(repeats: int = REPEATS) -> dict:
    return {str(turns): asyncio.run(time_open(turns, repeats)) for turns in SIZES}


def measure() -> Section:
    with work_dir("report-open") as work:
        results = run_child("report_open", ["--child"], quiet_env(work))
    rows = []
    for turns in SIZES:
        got = results[str(turns)]
        rows.append(Row("46 report", f"`r` to the report's first frame, {turns} turn{'s' * (turns > 1)}",
                        "an empty screen pushed", None, "<= 200 ms", got["first"] <= TARGET_S,
                        f"empty screen {got['bare'] * 1000:.0f} ms; the event loop's CPU until the frame "
                        f"{got['first_cpu'] * 1000:.0f} ms (empty screen {got['bare_cpu'] * 1000:.0f} ms); "
                        "whole report built in "
                        f"{got['built'] * 1000:.0f} ms, the screen answering keys meanwhile",
                        value=f"{got['first'] * 1000:.0f} ms"))
    return Section(rows)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:  # --child [REPEATS]
        emit(child(*(int(n) for n in sys.argv[2:3])))
    else:
        for row in measure().rows:
            print(row.cells())
