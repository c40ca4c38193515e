"""The TUI's quick start: a first frame from an unvalidated read, then the validated state and config."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from textual.widgets import Input, Select, TextArea

from debate_tui.cli import build_parser
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.locations import config_dir, ui_state_path
from debate_tui.ui.opening import DEFAULT_THEME, TopOfForm, read_opening
from tests.test_ui_flows import open_setup
from tests.test_ui_helpers import wait_until


def args(*argv: str):
    return build_parser("tui").parse_args(["tui", *argv])


def remember(state: object) -> None:
    ui_state_path().parent.mkdir(parents=True, exist_ok=True)
    ui_state_path().write_text(json.dumps(state))


def test_the_quick_read_takes_remembered_strings_and_lets_arguments_win(tmp_path: Path):
    assert read_opening(args()).top == TopOfForm() and read_opening(args()).theme == DEFAULT_THEME
    remember({"theme": "debate-paper", "setup": {"protocol": "chateval", "text_path": "old.txt"}})
    opening = read_opening(args())
    assert (opening.theme, opening.top) == ("debate-paper", TopOfForm("chateval", "old.txt"))
    text = tmp_path / "t.txt"
    text.write_text("A text to judge.")
    opening = read_opening(args("--protocol", "single", "--text", str(text)))
    assert opening.top == TopOfForm("single", str(text)) and opening.texts == {"text": "A text to judge."}
    remember({"theme": 3, "setup": ["not", "a", "table"]})
    assert read_opening(args()).top == TopOfForm() and read_opening(args()).theme == DEFAULT_THEME
    ui_state_path().write_text("{ not json")
    assert read_opening(args()).top == TopOfForm()


def test_no_pydantic_before_the_first_frame():
    """What the first frame needs imports no pydantic; the state and config are validated after it."""
    code = ("import sys; from debate_tui.cli import build_parser; build_parser('tui'); "
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
