"""The setup form's generation inputs are made from the settings table: label, placeholder and input type come
from each setting's row (`settings.REPLY`, `SETTINGS["structured"]`), the ids stay as tests and users know them."""

from __future__ import annotations

from dataclasses import replace

from textual.widgets import Input, Label, Select

from debate_tui.settings import REPLY, SETTINGS
from debate_tui.ui import screens
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from tests.helpers import STORY
from tests.helpers.ui import open_setup


def _label_of(widget) -> str:
    return str(widget.parent.query_one(Label).render())


async def test_the_generation_inputs_come_from_the_table(monkeypatch):
    renamed = tuple(replace(setting, form_label=f"{setting.name} here", placeholder=f"say {setting.name}")
                    for setting in REPLY)
    monkeypatch.setattr(screens.setup_details, "REPLY", renamed)
    app = DebateTUI(Launch(texts={"text": STORY}))
    async with app.run_test(size=(120, 60)) as pilot:
        setup = await open_setup(pilot)
        shown = {(box.id, box.placeholder, box.type, _label_of(box))
                 for box in (setup.query_one(f"#{setting.form}", Input) for setting in REPLY)}
        structured = setup.query_one("#structured", Select)
        assert _label_of(structured) == SETTINGS["structured"].form_label == "JSON answers"
    assert shown == {("max-reply-tokens", "say max_reply_tokens", "integer", "max_reply_tokens here"),
                     ("temperature", "say temperature", "number", "temperature here")}
