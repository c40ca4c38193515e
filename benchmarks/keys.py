"""Keys typed into the setup form's text box per second: an unbracketed paste, before and after.

A terminal without bracketed paste sends a pasted text as one key per
character (issue 46: 3,000 words froze the app 26.8 s, against 0.45 s for the
same text pasted bracketed). Each variant runs in a child process: a Textual
app holding only the box, at 120x36, is sent the keys of a text as the
terminal driver sends them (`events.Key` messages posted to the app), and the
CPU time until the box holds the whole text is measured. The baseline is
Textual's own TextArea, which the box was before (one edit per key); the
measured is `TextBox`, which takes a burst of waiting keys as one edit.

    python -m benchmarks.keys --box textbox --keys 3000    (one child: prints its JSON line)
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from benchmarks.common import Row, Section, emit, quiet_env, run_child, work_dir

KEYS = 6_000
"""About 1,000 words: long enough that the per-key cost dominates the app's start."""
TARGET = 3.0
"""keys per second against TextArea's, at least (issue 46 asks for a burst of keys taken cheaply)."""
WORDS = "Tom wanted to learn to swim. He went to the pool every morning, and after a month he swam.\n"


async def typed(box_kind: str, count: int) -> dict[str, Any]:
    from textual import events
    from textual.app import App, ComposeResult
    from textual.widgets import TextArea

    from debate_tui.ui.widgets.text_box import TextBox

    kind = TextBox if box_kind == "textbox" else TextArea

    class OneBox(App[None]):
        def compose(self) -> ComposeResult:
            yield kind("", id="box", soft_wrap=True, show_line_numbers=False)

    text = (WORDS * (count // len(WORDS) + 1))[:count]
    app = OneBox()
    async with app.run_test(size=(120, 36)) as pilot:
        box = app.query_one("#box", TextArea)
        box.focus()
        await pilot.pause()
        wall, cpu = time.perf_counter(), time.process_time()
        for character in text:  # as the driver posts a key per character read from the terminal
            key = "enter" if character == "\n" else "space" if character == " " else character
            app.post_message(events.Key(key, None if character == "\n" else character))
        while len(box.text) < len(text):
            await asyncio.sleep(0.005)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        assert box.text == text, "the keys typed are not the text sent"
    return {"keys": count, "cpu_s": cpu, "wall_s": wall}


def measure() -> Section:
    with work_dir("keys") as work:
        env = quiet_env(work)
        before, after = (run_child("keys", ["--box", kind, "--keys", str(KEYS)], env)
                         for kind in ("textarea", "textbox"))
    rate_before, rate_after = before["keys"] / before["cpu_s"], after["keys"] / after["cpu_s"]
    ratio = rate_after / rate_before
    return Section([Row(
        "keys typed into the text box (unbracketed paste)", f"TextBox: {rate_after:,.0f} keys/s of CPU",
        f"Textual's TextArea: {rate_before:,.0f} keys/s", ratio, f">= {TARGET:.0f}x", ratio >= TARGET,
        f"{KEYS:,} keys: {after['cpu_s']:.2f} s CPU ({after['wall_s']:.2f} s wall) against {before['cpu_s']:.2f} s "
        f"({before['wall_s']:.2f} s)")])


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.keys")
    parser.add_argument("--box", choices=("textbox", "textarea"), required=True)
    parser.add_argument("--keys", type=int, default=KEYS)
    args = parser.parse_args()
    emit(asyncio.run(typed(args.box, args.keys)))


if __name__ == "__main__":
    main()
