"""What the TUI remembers and how it is configured: choices, theme, keymap, palette, arguments, validation."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input, Select, SelectionList

from debate_tui.cli import build_parser
from debate_tui.cli.tui import tui_request
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch, launch_from
from debate_tui.ui.locations import config_dir, ui_state_path
from debate_tui.ui.screens.debate import DebateScreen
from debate_tui.ui.state import UiState, load_state
from tests.helpers import STORY
from tests.helpers.sessions import make_session
from tests.helpers.ui import RecordingDemo, configure_and_start, open_setup, wait_until


async def test_last_choices_are_remembered_and_prefill_the_next_setup():
    app = DebateTUI(Launch(), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        setup = await open_setup(pilot)
        setup.query_one("#criteria", SelectionList).select("summeval/fluency")
        await configure_and_start(pilot, rounds="3")
        await wait_until(pilot, ui_state_path().exists, what="the state file")
    state = json.loads(ui_state_path().read_text())
    assert state["setup"]["options"]["rounds"] == 3
    assert set(state["setup"]["criteria"]) == {"summeval/coherence", "summeval/fluency"}

    again = DebateTUI(Launch(state=load_state(), choices=load_state().setup))
    async with again.run_test(size=(120, 36)) as pilot:
        setup = await open_setup(pilot)
        assert setup.query_one("#opt-rounds", Input).value == "3"
        assert set(setup.query_one("#criteria", SelectionList).selected) == {"summeval/coherence", "summeval/fluency"}


async def test_theme_choice_persists_and_our_themes_are_registered():
    """Each app leaves with its form mounted: `run_test` closes an app without the app's own exit, which waits
    for a mounting form (on a loaded machine the test closed one under its dropdowns' mount)."""
    app = DebateTUI(Launch())
    async with app.run_test() as pilot:
        assert {"debate-dark", "debate-paper"} <= set(app.available_themes)
        assert app.theme == "debate-dark"
        app.theme = "debate-paper"
        await wait_until(pilot, lambda: ui_state_path().exists() and "debate-paper" in ui_state_path().read_text())
        await open_setup(pilot)
    again = DebateTUI(Launch(state=load_state()))
    async with again.run_test() as pilot:
        assert again.theme == "debate-paper"
        await open_setup(pilot)


async def test_a_corrupt_state_file_falls_back_to_defaults():
    ui_state_path().parent.mkdir(parents=True, exist_ok=True)
    ui_state_path().write_text("{ not json")
    assert load_state() == UiState()


async def test_keymap_from_config_toml_remaps_bindings():
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text('[keymap]\n"debate.pause" = "z"\n"debate.next" = "n"\n')

    app = DebateTUI(Launch(session=make_session(), demo=True, step=True), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen))
        debate = app.screen
        await pilot.press("z")
        assert debate.control.paused
        await pilot.press("p")
        assert debate.control.paused, "p no longer pauses once remapped"
        await pilot.press("z")
        await pilot.press("n")
        await wait_until(pilot, lambda: len(debate.session.turns) == 1, what="a step on the remapped key")


def test_a_broken_keymap_is_reported_not_fatal():
    from debate_tui.ui.keymap import load_keymap

    config_dir().mkdir(parents=True, exist_ok=True)
    path = config_dir() / "config.toml"
    path.write_text("[keymap\n")
    assert load_keymap(path)[0] == {} and "keymap ignored" in load_keymap(path)[1]
    path.write_text('[keymap]\n"debate.pause" = 3\n"debate.next" = "n"\n')
    keymap, problem = load_keymap(path)
    assert keymap == {"debate.next": "n"} and "debate.pause" in problem


async def test_every_debate_binding_is_in_the_command_palette():

    app = DebateTUI(Launch(session=make_session(), demo=True, step=True), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen))
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {"Step", "Auto", "Pause", "Inject", "Override", "Report", "Export", "Stop", "Sessions"} <= titles
        step = next(c for c in app.get_system_commands(app.screen) if c.title == "Step")
        await step.callback()
        await wait_until(pilot, lambda: len(app.screen.session.turns) == 1, what="a step from the palette")


def test_debate_bindings_have_ids_and_tooltips():
    from debate_tui.ui.screens.debate import DebateScreen
    from debate_tui.ui.screens.report import ReportScreen
    from debate_tui.ui.screens.sessions import SessionsScreen
    from debate_tui.ui.screens.setup import SetupScreen

    keys = {b.id: b.key for b in DebateScreen.BINDINGS}
    assert keys == {"debate.next": "space", "debate.auto": "a", "debate.pause": "p", "debate.inject": "i",
                    "debate.override": "o", "debate.report": "r", "debate.export": "e",
                    "debate.turn_previous": "left_square_bracket", "debate.turn_next": "right_square_bracket",
                    "debate.fork": "f", "debate.compare": "c", "debate.back": "escape",
                    "debate.leave": "escape"}
    for screen in (DebateScreen, ReportScreen, SessionsScreen, SetupScreen, DebateTUI):
        for binding in screen.BINDINGS:
            assert binding.id and binding.tooltip, (screen.__name__, binding)
    assert any(b.key == "ctrl+q" and b.id == "app.quit" for b in DebateTUI.BINDINGS)


async def test_validation_says_what_is_wrong():
    app = DebateTUI(Launch(), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        setup = await open_setup(pilot)
        await pilot.press("ctrl+r")
        assert "Text to judge is empty" in str(setup.query_one("#setup-errors").render())
        setup.query_one("#text-text").text = "Some text."
        setup.query_one("#opt-rounds", Input).value = "0"
        await pilot.press("ctrl+r")
        assert "rounds" in str(setup.query_one("#setup-errors").render())
        setup.query_one("#opt-rounds", Input).value = "2"
        setup.query_one("#criteria", SelectionList).deselect_all()
        await pilot.press("ctrl+r")
        assert "at least one criterion" in str(setup.query_one("#setup-errors").render())
        assert isinstance(app.screen, type(setup))


async def test_write_a_criterion_in_the_editor_and_load_a_toml_file(tmp_path: Path):
    toml = tmp_path / "mine.toml"
    toml.write_text('[[criterion]]\nname = "clarity"\ndescription = "Easy to follow."\nlow = 0\nhigh = 10\n')
    app = DebateTUI(Launch(), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        setup = await open_setup(pilot)
        setup.query_one("#new-name", Input).value = "tone"
        setup.query_one("#new-low", Input).value = "5"
        setup.query_one("#new-high", Input).value = "1"
        setup.query_one("#new-description", Input).value = "Polite and calm."
        await setup.add_criterion()
        assert "must be below high" in str(setup.query_one("#setup-errors").render())
        setup.query_one("#new-high", Input).value = "9"
        await setup.add_criterion()
        setup.query_one("#criteria-path", Input).value = str(toml)
        setup.load_criteria_pressed()
        await wait_until(pilot, lambda: "clarity" in setup.query_one("#criteria", SelectionList).selected, timeout=3,
                         what=str(setup.query_one("#setup-errors").render())
                         + str([n.message for n in app._notifications]))
        assert {"tone", "clarity", "summeval/coherence"} <= set(setup.query_one("#criteria", SelectionList).selected)
        setup.query_one("#text-text").text = "Some text to judge."
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen))
        criteria = {c.name: c for c in app.screen.session.criteria}
        assert criteria["tone"].scale == "5-9" and criteria["clarity"].scale == "0-10"


async def test_changing_protocol_rebuilds_options_agents_and_inputs():
    app = DebateTUI(Launch(), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        setup = await open_setup(pilot)
        shown = {key for key in ("text_b", "source", "context") if setup.query_one(f"#input-{key}").display}
        assert shown == {"source", "context"}  # DEBATE's inputs, from the start (not only after a protocol change)
        setup.query_one("#opt-tie_breaker", Select).value = "agent"
        await wait_until(pilot, lambda: "Tie-Breaker" in {r.agent_name for r in setup.query("AgentRow")})
        if "scaleeval" in setup.catalog.protocols:
            setup.query_one("#protocol", Select).value = "scaleeval"
            await wait_until(pilot, lambda: setup.query("#opt-on_no_consensus"), what="ScaleEval's options")
            assert setup.query_one("#input-text_b").display
            await wait_until(pilot, lambda: {r.agent_name for r in setup.query("AgentRow")} >= {"Speaker 1"})


def test_an_agent_row_still_mounting_reads_as_it_was_made():
    from debate_tui.ui.screens.setup import AgentRow

    row = AgentRow("Critic", "critic", "strictly-negative", "plain", ["plain", "strictly-negative"], "gpt-x ", "")
    assert row.read() == ("plain", "gpt-x")
    assert AgentRow("Scorer", "scorer", None, None, ["plain"], "", "").read() == (None, "")


def parse(*argv: str):
    return tui_request(build_parser().parse_args(["tui", *argv]))


def test_tui_arguments_prefill_or_autostart(tmp_path: Path):
    text = tmp_path / "t.txt"
    text.write_text("A short text to judge. A short text to judge.")
    launch = launch_from(parse("--text", str(text), "--rounds", "3", "--model", "gpt-4o-mini",
                                    "--api-base", "http://localhost:9"), UiState())
    assert launch.session is None and launch.texts["text"].startswith("A short text")
    assert launch.choices.options["rounds"] == 3 and launch.choices.model == "gpt-4o-mini"
    assert launch.choices.api_base == "http://localhost:9"

    launch = launch_from(parse("--text", str(text), "--demo", "--autostart", "--step"), UiState())
    assert launch.session is not None and launch.demo and launch.step
    assert launch.session.task.text.startswith("A short text")


async def test_setup_uses_the_models_of_config_toml():
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text(
        'default_model = "openai/judge-a"\n[roles]\ncritic = "openai/judge-b"\n'
        '[models."openai/judge-a"]\napi_base = "http://127.0.0.1:9/v1"\n')
    app = DebateTUI(Launch(texts={"text": "A text to judge."}), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        setup = await open_setup(pilot)
        assert "Model: openai/judge-a" in str(setup.query_one("#demo-notice").render())
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen))
        agents = {a.name: a for a in app.screen.session.agents}
        assert agents["Scorer"].model == "openai/judge-a" and agents["Critic"].model == "openai/judge-b"
        assert agents["Scorer"].params.get("api_base") == "http://127.0.0.1:9/v1"


async def test_switching_to_mateval_drops_the_criteria_it_cannot_judge_and_lists_only_its_own():
    """Issue 46: criteria ticked for DEBATE stayed ticked under MATEval, which refused to start ("criterion
    'coherence' is not one of them"); its five error types sat at the bottom of a 25-entry list."""
    app = DebateTUI(Launch(texts={"text": STORY}), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        setup = await open_setup(pilot)
        picker = setup.query_one("#criteria", SelectionList)
        picker.select(next(name for name in setup.catalog.criteria if name.endswith("/fluency")))
        await pilot.pause()
        setup.query_one("#protocol", Select).value = "mateval"
        await wait_until(pilot, lambda: picker.option_count == 5, what="MATEval's own criteria")
        assert sorted(picker.selected) == sorted(setup.catalog.default_criteria("mateval"))
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what="MATEval's debate")
        assert app.screen.session.protocol == "mateval"


def test_remembered_criteria_give_way_when_the_command_line_picks_mateval(tmp_path: Path):
    """The remembered criteria belong to the remembered protocol: a protocol from the command line takes its own."""
    text = tmp_path / "t.txt"
    text.write_text(STORY)
    launch = launch_from(parse("--text", str(text), "--protocol", "mateval"),
                         UiState.model_validate({"setup": {"protocol": "debate", "criteria": ["coherence"]}}))
    assert launch.choices.criteria is None
