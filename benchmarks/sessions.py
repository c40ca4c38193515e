"""Target 5, sessions: opening the sessions list with 1,000 saved sessions against 10.

The sessions are the shipped example sessions (one per protocol, 2-19 KB)
copied under new ids and dates. Two things are timed, each the median of
several opens after a first one (a person opens the list many times; the
first open after an upgrade builds the index and is reported beside):

- `SessionStore.list()`, the engine's listing;
- the sessions screen in the TUI (headless `run_test`), from the key that
  opens it to its first screenful drawn (the target: what the person sees and
  can act on), and to the table holding every row (a detail: the rows past
  the first screenful are added a chunk a frame after it). Once full, End
  must put the cursor on the oldest session, or the run fails.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks.common import Row, Section, emit, median, quiet_env, run_child, work_dir
from debate_tui.locations import examples_dir

SMALL, LARGE = 10, 1000
REPEATS = 9


def populate(directory: Path, count: int) -> None:
    """`count` session files cycled from the examples, each with its own id and date."""
    examples = [json.loads(p.read_text()) for p in sorted(examples_dir().glob("*.json"))]
    directory.mkdir(parents=True, exist_ok=True)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for index in range(count):
        data = dict(examples[index % len(examples)])
        created = start + timedelta(minutes=17 * index)
        data["id"] = f"{created:%Y%m%d-%H%M%S}-{index:04d}"
        data["created_at"] = data["updated_at"] = created.isoformat()
        (directory / f"{data['id']}.json").write_text(json.dumps(data, indent=1))


def time_store(directory: Path) -> dict:
    from debate_tui.config import load_config

    started = time.perf_counter()
    rows = load_config().session_store(directory).list()
    first = time.perf_counter() - started
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        rows = load_config().session_store(directory).list()
        times.append(time.perf_counter() - started)
    assert not any(r.problem for r in rows), [r.problem for r in rows if r.problem][:3]
    return {"first": first, "median": median(times), "rows": len(rows)}


async def time_screen(directory: Path, expected: int) -> dict[str, float]:
    """Seconds from F2 to the first screenful drawn, and to a table holding every row (examples excluded)."""
    from textual.widgets import DataTable

    import debate_tui.ui.app as app_module
    from debate_tui.cli import build_parser
    from debate_tui.cli.tui import tui_request
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.launch import launch_from
    from debate_tui.ui.screens import sessions as screen_module
    from debate_tui.ui.state import load_state

    app_module.examples_dir = lambda: directory / "no-examples"  # type: ignore[assignment]
    app = DebateTUI(launch_from(tui_request(build_parser().parse_args(["tui", "--sessions-dir", str(directory)])),
                                     load_state()))
    first, full = [], []

    async def rows_in_table(count: int) -> DataTable:
        while True:
            tables = app.screen.query(DataTable) if isinstance(app.screen, screen_module.SessionsScreen) else []
            if tables and tables.first().row_count >= count:
                return tables.first()
            await asyncio.sleep(0.001)

    async def drawn_with(count: int) -> float:
        """When the screen was first up to date with `count` rows laid out in the table.

        Checked in a callback run right after each refresh (polling could see the rows
        a frame late, or before they were drawn); a table's height counts its header.
        """
        table = await rows_in_table(0)
        drawn: asyncio.Future[float] = asyncio.get_running_loop().create_future()

        def check() -> None:
            if table.row_count >= count and table.virtual_size.height > count:
                drawn.set_result(time.perf_counter())
            else:
                table.call_after_refresh(check)

        table.call_after_refresh(check)
        return await drawn

    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.5)
        for _ in range(REPEATS + 1):
            started = time.perf_counter()
            press = asyncio.create_task(pilot.press("f2"))  # it returns only once the screen is quiet: the full table
            first.append(await drawn_with(min(expected, app.size.height)) - started)  # a screenful: a row a line
            full.append(await drawn_with(expected) - started)
            await press
            table = await rows_in_table(expected)
            await pilot.press("end")
            assert table.cursor_row == expected - 1, f"End reached row {table.cursor_row} of {expected}"
            await pilot.press("escape")
            await pilot.pause()
    return {"first": median(first[1:]), "full": median(full[1:])}


def child(work: Path) -> dict:
    results = {}
    for count in (SMALL, LARGE):
        directory = work / f"sessions-{count}"
        populate(directory, count)
        results[count] = {"store": time_store(directory), "screen": asyncio.run(time_screen(directory, count))}
    return results


def measure() -> Section:
    with work_dir("sessions") as work:
        results = {int(k): v for k, v in run_child("sessions", ["--child", str(work)], quiet_env(work)).items()}
    small, large = results[SMALL], results[LARGE]
    first, full = (large["screen"][k] / small["screen"][k] for k in ("first", "full"))
    store = large["store"]["median"] / small["store"]["median"]
    return Section([
        Row("5 sessions", f"sessions screen open to first screenful drawn, {LARGE:,} sessions", f"{SMALL} sessions",
            first, "<= 2x", first <= 2,
            f"{large['screen']['first'] * 1000:.0f} vs {small['screen']['first'] * 1000:.0f} ms"),
        Row("5 sessions", f"sessions screen open to every row in the table, {LARGE:,} sessions", f"{SMALL} sessions",
            full, "(detail)", True, f"{large['screen']['full'] * 1000:.0f} vs {small['screen']['full'] * 1000:.0f} ms; "
            "rows past the first screenful are added a chunk a frame"),
        Row("5 sessions", f"SessionStore.list(), {LARGE:,} sessions", f"{SMALL} sessions", store, "(detail)", True,
            f"{large['store']['median'] * 1000:.1f} vs {small['store']['median'] * 1000:.2f} ms; first listing "
            f"(builds the index) {large['store']['first'] * 1000:.0f} ms"),
    ])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        emit(child(Path(sys.argv[2])))
    else:
        for row in measure().rows:
            print(row.cells())
