"""The setup screen as a first-time user meets it (issue 18, "Setup"): config.toml saved after the remembered
setup wins, the form says where a value came from, ticked criteria are in view, a text that fails to load says so
where the person looks."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace

import pytest
from textual.widgets import Input, Label, SelectionList, TextArea

from debate_tui.cli import build_parser
from debate_tui.cli.tui import tui_request
from debate_tui.inputs import InputError
from debate_tui.locations import config_path
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch, launch_from
from debate_tui.ui.locations import ui_state_path
from debate_tui.ui.screens.setup import SetupScreen
from debate_tui.ui.state import load_state
from tests.helpers import STORY
from tests.helpers.ui import open_setup, screen_text, wait_until

REMEMBERED = {"theme": "debate-dark", "setup": {"protocol": "debate", "model": "demo/offline",
                                                "api_base": "http://old.example:1"}}


def write_both(config_first: bool) -> None:
    """ui-state.json and config.toml, the second one written a minute after the first."""
    state, config = ui_state_path(), config_path()
    state.parent.mkdir(parents=True, exist_ok=True)
    config.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps(REMEMBERED), encoding="utf-8")
    config.write_text('default_model = "openai/gpt-4o-mini"\nprotocol = "chateval"\n'
                      '[models."openai/gpt-4o-mini"]\napi_base = "http://new.example:2"\n', encoding="utf-8")
    now = time.time()
    older, newer = (config, state) if config_first else (state, config)
    os.utime(older, (now - 60, now - 60))
    os.utime(newer, (now, now))


def launch() -> Launch:
    return launch_from(tui_request(build_parser("tui").parse_args(["tui"])), load_state())


def test_config_saved_after_the_remembered_setup_wins_and_says_so():
    write_both(config_first=False)
    opened = launch()
    assert (opened.choices.protocol, opened.choices.model, opened.choices.api_base) == (
        "chateval", "openai/gpt-4o-mini", "")
    assert all(opened.sources[key].startswith("config.toml") for key in ("protocol", "model", "api_base"))


def test_the_remembered_setup_saved_after_the_config_wins_and_says_so():
    write_both(config_first=True)
    opened = launch()
    assert (opened.choices.protocol, opened.choices.model, opened.choices.api_base) == (
        "debate", "demo/offline", "http://old.example:1")
    assert opened.sources["model"] == "remembered from your last setup"


async def on_setup(pilot) -> SetupScreen:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SetupScreen)
                     and pilot.app.screen.query("#criteria") and pilot.app.screen.query_one("#criteria").option_count,
                     what="the setup form with its criteria")
    await pilot.pause(0.2)
    return pilot.app.screen


async def test_the_form_tells_on_hover_where_the_model_came_from():
    write_both(config_first=False)
    app = DebateTUI(launch())
    async with app.run_test(size=(120, 36)) as pilot:
        setup = await on_setup(pilot)
        assert setup.query_one("#model", Input).value == "openai/gpt-4o-mini"
        assert str(setup.query_one("#model", Input).tooltip).startswith("From: config.toml")
        assert str(setup.query_one("#protocol").tooltip).startswith("From: config.toml")


async def test_ticked_criteria_come_first_and_the_title_counts_them():
    app = DebateTUI(Launch(texts={"text": STORY}))
    async with app.run_test(size=(80, 24)) as pilot:
        setup = await on_setup(pilot)
        picker = setup.query_one("#criteria", SelectionList)
        last = picker.get_option_at_index(picker.option_count - 1).value
        picker.select(last)
        await pilot.pause()
        title = str(setup.query_one("#criteria-title", Label).render())
        assert title.startswith(f"Criteria ({len(picker.selected)} selected: ")
        setup.choices = replace(setup.choices, criteria=list(picker.selected))
        await setup._fill_criteria()  # as when the form is filled from remembered choices
        ticked = len(picker.selected)
        assert [picker.get_option_at_index(i).value in picker.selected for i in range(ticked)] == [True] * ticked
        assert last in picker.selected


async def test_a_text_that_fails_to_load_is_a_notification_and_marked_at_the_field(tmp_path):
    app = DebateTUI(Launch(texts={"text": ""}))
    async with app.run_test(size=(80, 24)) as pilot:
        setup = await on_setup(pilot)
        setup.query_one("#text-path", Input).value = str(tmp_path / "missing.txt")
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: app._notifications, what="the notification")
        note = list(app._notifications)[-1]
        assert note.severity == "error" and "missing.txt" in note.message
        field = setup.query_one("#text-path", Input)
        assert field.has_class("-invalid") and "missing.txt" in str(field.tooltip) and field.has_focus
        assert setup.query_one("#text-text", TextArea).text == ""


def test_a_referee_given_another_persona_is_named_after_it():
    from dataclasses import replace

    from debate_tui.choices import Choices
    from debate_tui.ui.session_builder import build, load_catalog

    choices = Choices(protocol="chateval", model="demo/offline", agent_personas={"General Public": "scientist"})
    session = build(load_catalog(choices), choices, {"text": "A story."}).session
    shown = [(a.name, a.persona.name) for a in session.agents if a.persona]
    assert shown == [("Scientist", "scientist"), ("Critic", "critic"), ("News Author", "news-author")]
    choices = replace(choices, agent_personas={"General Public": "news-author"})
    session = build(load_catalog(choices), choices, {"text": "A story."}).session
    assert [a.name for a in session.agents if a.persona] == ["News Author 1", "Critic", "News Author 2"]


def shown_in_box(app, area: TextArea) -> str:
    """The words the text box shows on screen, its frame and padding left out."""

    region = area.content_region
    rows = screen_text(app).splitlines()[region.y:region.y + region.height]
    return " ".join(" ".join(row[region.x:region.x + region.width].split()) for row in rows).strip()


@pytest.mark.parametrize("sizes", [[(80, 24)], [(120, 36)], [(120, 36), (80, 24)], [(80, 24), (100, 30), (80, 24)]],
                         ids=["80x24", "120x36", "120x36-to-80x24", "80x24-resized"])
async def test_the_text_box_shows_every_word_of_the_text_at_any_size(sizes):
    """Issue 33 #6: at 80x24 the box dropped a word at a wrap ("...morning. He / to the pool...", "went" missing)
    on the first frame and after a resize: lines drawn at the new width with the old wrap were never redrawn."""
    app = DebateTUI(Launch(texts={"text": STORY}))
    async with app.run_test(size=sizes[0]) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen.query("#options Select"),
                         what="the whole form")
        for size in sizes[1:]:
            await pilot.resize_terminal(*size)
            await pilot.pause(0.3)
        area = app.screen.query_one("#text-text", TextArea)
        await pilot.pause(0.3)
        assert shown_in_box(app, area) == " ".join(STORY.split()) and area.text == STORY


def remember_scaleeval() -> None:
    state = ui_state_path()
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps({"setup": {"protocol": "scaleeval", "criteria": ["helpfulness"],
                                           "agent_models": {"Speaker 1": "demo/offline"}}}), encoding="utf-8")


async def test_a_remembered_pairwise_setup_gives_way_when_one_text_is_given_and_ctrl_r_starts(tmp_path):
    """Issue 46: after one ScaleEval run, the README's first command (`--demo --text examples/story.txt`, then
    ctrl+r) failed with "give the second with --text-b"."""
    from debate_tui.ui.opening import read_opening
    from debate_tui.ui.screens.debate import DebateScreen

    remember_scaleeval()
    story = tmp_path / "story.txt"
    story.write_text(STORY, encoding="utf-8")
    opened = launch_from(tui_request(build_parser("tui").parse_args(["tui", "--demo", "--text", str(story)])),
                         load_state())
    assert opened.choices.protocol != "scaleeval" and opened.choices.criteria is None
    assert any("ScaleEval" in note and "does not fit" in note for note in opened.notes), opened.notes
    app = DebateTUI(read_opening(tui_request(build_parser("tui").parse_args(["tui", "--demo", "--text", str(story)]))))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_setup(pilot)
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what="the debate")


def test_without_a_text_the_form_shows_the_remembered_pairwise_setup() -> None:
    remember_scaleeval()
    opened = launch()
    assert opened.choices.protocol == "scaleeval" and not opened.notes


async def test_a_refusal_inside_the_tui_names_the_form_s_box_not_a_flag() -> None:
    from debate_tui.ui.session_builder import build

    app = DebateTUI(Launch(texts={"text": STORY}))
    async with app.run_test(size=(80, 24)) as pilot:
        setup = await open_setup(pilot)
        with pytest.raises(InputError) as refused:
            build(setup.catalog, replace(setup.read_choices(), protocol="scaleeval", criteria=None, options={}),
                  {"text": STORY})
    assert "the 'Second answer (pairwise)' box" in str(refused.value) and "--text-b" not in str(refused.value)
