"""The TUI's quick start: a first frame from an unvalidated read, then the validated state and config."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from textual.color import Color
from textual.widgets import Input, Select, TextArea

from debate_tui.ui.app import SCREENS_CSS, DebateTUI
from debate_tui.ui.locations import config_dir, ui_state_path
from debate_tui.ui.opening import DEFAULT_THEME, read_opening
from debate_tui.ui.screens.setup import SetupScreen
from tests.helpers.ui import args, open_setup, wait_until


def remember(state: object) -> None:
    ui_state_path().parent.mkdir(parents=True, exist_ok=True)
    ui_state_path().write_text(json.dumps(state))


def top(opening) -> tuple[str | None, str]:
    """The protocol and text file the first frame offers."""
    return opening.choices.protocol, opening.choices.text_path


def test_the_quick_read_takes_remembered_strings_and_lets_arguments_win(tmp_path: Path):
    assert top(read_opening(args())) == ("debate", "") and read_opening(args()).theme == DEFAULT_THEME
    remember({"theme": "debate-paper", "setup": {"protocol": "chateval", "text_path": "old.txt"}})
    opening = read_opening(args())
    assert (opening.theme, top(opening)) == ("debate-paper", ("chateval", "old.txt"))
    remember({"setup": {"protocol": "chateval", "inputs": {"text": "new.txt"}}})  # as saved now
    assert top(read_opening(args())) == ("chateval", "new.txt")
    text = tmp_path / "t.txt"
    text.write_text("A text to judge.")
    opening = read_opening(args("--protocol", "single", "--text", str(text)))
    assert top(opening) == ("single", str(text)) and opening.texts == {"text": "A text to judge."}
    assert opening.choices.origins["protocol"] == "command line"
    remember({"theme": 3, "setup": ["not", "a", "table"]})
    assert top(read_opening(args())) == ("debate", "") and read_opening(args()).theme == DEFAULT_THEME
    ui_state_path().write_text("{ not json")
    assert top(read_opening(args())) == ("debate", "")


def test_no_pydantic_before_the_first_frame():
    """What the first frame needs imports no pydantic; the state and config are validated after it."""
    code = ("import sys; from debate_tui.cli import parse; parse(['tui', '--demo', '--step']); "
            "import debate_tui.cli.tui, debate_tui.ui.app; print('pydantic' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


async def test_the_form_shows_the_validated_choices_after_the_first_frame():
    remember({"theme": "debate-paper", "setup": {"protocol": "chateval", "text_path": "old.txt",
                                                  "options": "not a table"}})  # invalid: the defaults are used
    app = DebateTUI(read_opening(args()))
    async with app.run_test(size=(120, 36)) as pilot:
        setup = await open_setup(pilot)
        assert app.theme == DEFAULT_THEME and app.launch.choices.protocol == "debate"
        assert setup.query_one("#protocol", Select).value == "debate"
        assert setup.query_one("#text-path", Input).value == ""


async def test_remembered_choices_and_texts_reach_the_form(tmp_path: Path):
    remember({"theme": "debate-paper", "setup": {"protocol": "single", "model": "openai/x", "options": {"samples": 2}}})
    text = tmp_path / "t.txt"
    text.write_text("A text to judge.")
    app = DebateTUI(read_opening(args("--text", str(text))))
    async with app.run_test(size=(120, 36)) as pilot:
        setup = await open_setup(pilot)
        assert app.theme == "debate-paper" and setup.query_one("#protocol", Select).value == "single"
        assert setup.query_one("#model", Input).value == "openai/x"
        assert setup.query_one("#opt-samples", Input).value == "2"
        assert setup.query_one("#text-text", TextArea).text == "A text to judge."
        assert setup.query_one("#text-path", Input).value == str(text)


async def test_the_first_frame_is_the_text_box_and_the_controls_follow(monkeypatch):
    """The stylesheet is parsed once at start (no re-parse for the theme); Load waits for its controls, Start is
    offered from the first frame (pressed then, it waits for the form: the next test)."""
    drawn: dict[str, object] = {}
    mount_details = SetupScreen._mount_details

    async def first_frame_then_details(screen: SetupScreen) -> None:
        drawn.update(text=bool(screen.query("#text-text")), protocol=bool(screen.query("#protocol")),
                     start=screen.check_action("start", ()), load=screen.check_action("load_text", ()))
        await mount_details(screen)

    monkeypatch.setattr(SetupScreen, "_mount_details", first_frame_then_details)
    app = DebateTUI(read_opening(args()))
    reparsed: list[bool] = []
    app.stylesheet.reparse = lambda: reparsed.append(True)
    async with app.run_test(size=(120, 36)) as pilot:
        setup = await open_setup(pilot)
        assert drawn == {"text": True, "protocol": False, "start": True, "load": None}
        assert setup.check_action("start", ()) and setup.check_action("load_text", ())
        assert [w.id for w in setup.query_one("#setup").children if w.id] == [
            "demo-notice", "protocol-row", "protocol-desc", "text-text", "remembered", "setup-rest", "setup-errors",
            "start"]
        assert setup.styles.background == Color.parse(app.get_theme(DEFAULT_THEME).background)
    assert not reparsed


async def test_the_form_is_the_first_screen_and_the_other_screens_layout_comes_with_the_first_pushed():
    """Issue 46 (start-up): the form is the bottom of the stack, not pushed over a blank screen drawn first, and
    the first frame parses only app.tcss; the first screen pushed (F1's help) has screens.tcss' layout."""
    app = DebateTUI(read_opening(args()))
    async with app.run_test(size=(120, 36)) as pilot:
        setup = await open_setup(pilot)
        assert app.screen_stack == [setup]
        assert not app.stylesheet.has_source(str(SCREENS_CSS), "")
        await pilot.press("f1")
        await wait_until(pilot, lambda: app.screen is not setup and app.screen.query(".help-box"), what="the help")
        assert app.stylesheet.has_source(str(SCREENS_CSS), "")
        assert app.screen.query_one(".help-box").outer_size.width == 96
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is setup, what="the form again")


async def test_ctrl_r_pressed_on_the_first_frame_starts_the_run_once_the_form_is_ready(monkeypatch):
    """Issue 46: ctrl+r pressed in the first second, with the text already drawn, was dropped silently."""
    from debate_tui.ui.screens.debate import DebateScreen

    mount_details = SetupScreen._mount_details

    async def pressed_on_the_first_frame(screen: SetupScreen) -> None:
        await screen.run_action("start")
        await mount_details(screen)

    monkeypatch.setattr(SetupScreen, "_mount_details", pressed_on_the_first_frame)
    app = DebateTUI(read_opening(args("--demo", "--text", str(Path(__file__).parents[2] / "examples/story.txt"))))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what="the debate the early key started")


async def test_a_bad_config_stops_the_tui_with_the_same_error():
    config_dir().mkdir(parents=True, exist_ok=True)
    path = config_dir() / "config.toml"
    path.write_text("[limits]\ntimeout = 0")
    app = DebateTUI(read_opening(args()))
    async with app.run_test() as pilot:
        await pilot.pause()
    assert app.return_code == 2
    assert app.config_error.startswith(f"{path}: limits.timeout: Input should be greater than 0")


async def test_a_theme_chosen_after_the_quick_start_is_remembered():
    app = DebateTUI(read_opening(args()))
    async with app.run_test() as pilot:
        await open_setup(pilot)
        app.theme = "debate-paper"
        await wait_until(pilot, lambda: ui_state_path().exists() and "debate-paper" in ui_state_path().read_text())
    assert read_opening(args()).theme == "debate-paper"


async def test_a_theme_named_by_the_config_wins_over_the_remembered_one_from_the_first_frame(monkeypatch):
    remember({"theme": "debate-paper"})
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text('theme = "textual-light"\n')
    assert read_opening(args()).theme == "textual-light"
    monkeypatch.setenv("DEBATE_TUI_THEME", "debate-dark")
    assert read_opening(args()).theme == "debate-dark", "the environment over the file"
    monkeypatch.delenv("DEBATE_TUI_THEME")
    app = DebateTUI(read_opening(args()))
    async with app.run_test() as pilot:
        assert app.theme == "textual-light", "in the first frame"
        await open_setup(pilot)
        assert app.theme == "textual-light" and app.launch.theme == "textual-light", "and once the config is validated"
        await pilot.pause()
    assert json.loads(ui_state_path().read_text())["theme"] == "debate-paper", "the configured theme is not a pick"


def test_the_first_frame_reads_config_toml_with_the_configuration_s_own_reader(monkeypatch):
    """Issue 43: ui/opening.py kept a second reader of config.toml; both read it with `readfile.read_config`,
    which imports no pydantic, so the first frame and the validated configuration see the same tables."""
    from debate_tui import readfile
    from debate_tui.config import files, load_config
    from debate_tui.refusal import ConfigError
    from debate_tui.ui.opening import configured_in_file

    assert (files.read_config_bytes, files.parse_file) == (readfile.read_config_bytes, readfile.parse_config)
    config_dir().mkdir(parents=True, exist_ok=True)
    path = config_dir() / "config.toml"
    path.write_bytes('\ufefftheme = "textual-light"\r\nprotocol = "chateval"\r\n'.encode())
    read: list[Path] = []
    monkeypatch.setattr(readfile, "parse_config", lambda at, raw: read.append(at) or files.parse_file(at, raw))
    assert (configured_in_file("theme"), configured_in_file("protocol")) == ("textual-light", "chateval")
    assert read == [path, path] and load_config().theme == "textual-light"
    path.write_text('theme = "unclosed\n')
    assert configured_in_file("theme") is None, "the first frame falls back; the validated config says why"
    with pytest.raises(ConfigError) as first_frame:
        readfile.read_config(path)
    assert str(first_frame.value).startswith(f"{path}: not valid TOML")
    with pytest.raises(ConfigError) as validated:
        load_config()
    assert str(validated.value) == str(first_frame.value)
