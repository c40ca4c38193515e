"""The TUI's session saver: every save returns once the session as it was asked for is on disk."""

from __future__ import annotations

import asyncio
import json

from debate_tui.domain import Session, Task
from debate_tui.ui.saving import SessionSaver


def session() -> Session:
    return Session(protocol="single", task=Task(text="A text."), criteria=[], agents=[])


async def test_saves_asked_together_are_written_once_or_twice_and_hold_every_change(tmp_path):
    live, saver = session(), SessionSaver(tmp_path / "s.json")

    async def change_and_save(number: int) -> None:
        live.state[f"turn {number}"] = number
        await saver(live)
        assert json.loads(saver.path.read_text())["state"][f"turn {number}"] == number, "on disk when it returns"

    await asyncio.gather(*(change_and_save(number) for number in range(5)))
    assert saver.saves <= 2, "five turns ending together: one write, and one for those asked during it"
    before = saver.saves
    for number in range(5, 8):
        await change_and_save(number)
    assert saver.saves == before + 3, "one after another: a write each"
    assert len(json.loads(saver.path.read_text())["state"]) == 8
