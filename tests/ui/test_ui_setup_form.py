"""The setup form's findings of issue 46: marks that do not rely on colour, option rows that read well,
dropdowns that say what each choice is, agents named on the form as on the debate screen, the remembered setup
said in one line with a key to reset it, ctrl+l that asks before replacing edited text, and a burst of keys
typed as one edit."""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Label, Select, TextArea

from debate_tui.choices import Choices
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch, launch_from
from debate_tui.ui.screens.debate import DebateScreen
from debate_tui.ui.screens.dialogs import ConfirmDialog
from debate_tui.ui.screens.help import screen_keys
from debate_tui.ui.screens.setup import AgentRow, SetupScreen
from debate_tui.ui.state import UiState
from debate_tui.ui.widgets.text_box import TextBox
from tests.helpers import STORY
from tests.helpers.ui import args, open_setup, screen_text, wait_until

TICKED, UNTICKED = "▐X▌", "▐ ▌"


def rows_of(app, first_word: str) -> list[str]:
    return [line for line in screen_text(app).splitlines() if line.strip().startswith(first_word)]


async def test_a_criterion_s_box_is_marked_only_when_it_is_ticked():
    """Before: every criterion showed "▐X▌", ticked or not, told apart by colour alone."""
    app = DebateTUI(Launch(texts={"text": STORY}))
    async with app.run_test(size=(120, 60)) as pilot:
        setup = await open_setup(pilot)
        setup.query_one("#criteria").scroll_visible(animate=False)
        await pilot.pause()
        boxes = ["▐" + line.split("▐", 1)[1][:2] for line in screen_text(app).splitlines() if "(1-" in line
                 and "▐" in line]
        ticked = list(setup.query_one("#criteria").selected)
        assert boxes.count(TICKED) == len(ticked) == 1 and boxes.count(UNTICKED) == len(boxes) - 1 > 0
        setup.query_one("#criteria").select_all()
        await pilot.pause()
        assert UNTICKED not in screen_text(app)


@pytest.mark.parametrize("size", [(80, 60), (120, 60)])
async def test_mateval_s_options_show_their_state_uncut_no_none_and_help_as_one_paragraph(size):
    """Before: both checkboxes showed "▐X…" (cut, the same whatever their value), rounds showed "None", and the
    help of count unlocated broke at its docstring's line break ("Off" / "by" / "default")."""
    app = DebateTUI(Launch(choices=Choices(protocol="mateval"), texts={"text": STORY}))
    async with app.run_test(size=size) as pilot:
        setup = await open_setup(pilot)
        await pilot.pause()
        (feedback,), (unlocated,), (rounds,) = (rows_of(app, name) for name in ("feedback", "count unlocated",
                                                                               "rounds"))
        assert TICKED in feedback and UNTICKED in unlocated and "X…" not in feedback + unlocated
        assert "None" not in rounds and "default" in rounds
        help_line = setup.query_one("#opt-count_unlocated").parent.query_one(".form-help", Label)
        assert "\n" not in str(help_line.render()) and "Off by default" in str(help_line.render())


async def test_the_dropdowns_say_what_each_protocol_and_persona_is():
    """Before: "debate", "chateval", "strictly-negative": bare ids."""
    app = DebateTUI(Launch(texts={"text": STORY}))
    async with app.run_test(size=(120, 60)) as pilot:
        setup = await open_setup(pilot)
        setup.query_one("#protocol", Select).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: setup.query_one("#protocol", Select).expanded, what="the protocol list")
        await pilot.pause()
        listed = screen_text(app)
        assert "chateval  2-5 referees with distinct personas" in listed
        assert "mateval  evaluators discuss one error type per round" in listed
        await pilot.press("escape")
        critic = next(row for row in setup.query(AgentRow) if row.agent_name == "Critic")
        critic.query_one(Select).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert "plain  asks only whether the score is justified" in screen_text(app)


async def test_a_persona_that_renames_its_agent_shows_the_new_name_on_the_form_and_the_debate_agrees():
    """Before: picking "plain" for General Public kept "General Public" on the form; the debate said "Plain"."""
    app = DebateTUI(Launch(choices=Choices(protocol="chateval", options={"turns": 1}), texts={"text": STORY}))
    async with app.run_test(size=(120, 40)) as pilot:
        setup = await open_setup(pilot)
        row = next(row for row in setup.query(AgentRow) if row.agent_name == "General Public")
        row.query_one(Select).value = "plain"

        def first_name() -> Label | None:  # the rows may be rebuilt meanwhile (a rebuild scheduled at start-up)
            labels = setup.query(AgentRow).first().query(".agent-name")
            return labels.first(Label) if labels else None

        def renamed() -> bool:
            label = first_name()
            return label is not None and str(label.render()) == "Plain (referee)"

        await wait_until(pilot, renamed, what="the new name")
        assert "General Public" in str(getattr(first_name(), "tooltip", ""))
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what="the debate")
        assert [agent.name for agent in app.screen.session.agents][:3] == ["Plain", "Critic", "News Author"]


async def test_the_remembered_setup_is_one_line_on_the_form_and_its_key_goes_back_to_the_defaults():
    """Before: what came from the last setup was told only in a tooltip, and nothing reset it."""
    state = UiState(setup=Choices(protocol="mateval", options={"strategy": "SR", "rounds": 2}))
    app = DebateTUI(launch_from(args("--text", "examples/story.txt"), state))
    async with app.run_test(size=(80, 24)) as pilot:
        setup = await open_setup(pilot)
        await pilot.pause()
        typed = setup.read_texts()["text"]
        line = [row for row in screen_text(app).splitlines() if "From your last setup" in row]
        assert len(line) == 1 and "(^o: defaults): protocol mateval, options" in line[0]
        assert ("^o", "Defaults", "setup.reset") in [row[:3] for row in screen_keys(setup)]
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen is not setup,
                         what="the fresh form")
        fresh = await open_setup(pilot)
        assert str(fresh.query_one("#protocol", Select).value) == "debate"
        assert fresh.query_one("#text-text", TextArea).text == typed != ""
        assert not fresh.query_one("#remembered").display and app.state.setup == Choices()
        assert not fresh.check_action("reset", ())


async def test_nothing_remembered_offers_no_reset_and_no_line():
    app = DebateTUI(launch_from(args("--text", "examples/story.txt"), UiState()))
    async with app.run_test(size=(80, 24)) as pilot:
        setup = await open_setup(pilot)
        assert not setup.query_one("#remembered").display and not setup.check_action("reset", ())


OTHER_STORY = "An other story."


async def with_a_file_to_load(pilot, tmp_path) -> tuple[SetupScreen, TextArea]:
    """The form, the path of a file holding OTHER_STORY typed beside the text, and the focus in the text box."""
    other = tmp_path / "other.txt"
    other.write_text(OTHER_STORY, encoding="utf-8")
    setup = await open_setup(pilot)
    box = setup.query_one("#text-text", TextArea)
    setup.query_one("#text-path").value = str(other)
    box.focus()
    return setup, box


async def test_ctrl_l_asks_before_replacing_edited_text_and_moves_the_focus_off_the_text(tmp_path):
    """Before: the edited text was replaced unasked, and the focus stayed in the box for the next key typed."""
    app = DebateTUI(Launch(texts={"text": STORY}))
    async with app.run_test(size=(80, 24)) as pilot:
        setup, box = await with_a_file_to_load(pilot, tmp_path)
        await pilot.press("end", "!")
        edited = box.text
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        assert "Replace the text you edited" in screen_text(app)
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is setup, what="the form again")
        assert box.text == edited and box.has_focus
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question again")
        await pilot.press("y")
        await wait_until(pilot, lambda: box.text == OTHER_STORY, what="the file's text")
        assert setup.query_one("#protocol", Select).has_focus
        await pilot.press("x")  # a key typed next no longer lands in the text judged
        assert box.text == OTHER_STORY


async def test_ctrl_l_over_text_not_edited_replaces_it_without_asking(tmp_path):
    app = DebateTUI(Launch(texts={"text": STORY}))
    async with app.run_test(size=(80, 24)) as pilot:
        setup, box = await with_a_file_to_load(pilot, tmp_path)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: box.text == OTHER_STORY, what="the file's text")
        assert app.screen is setup and setup.query_one("#protocol", Select).has_focus


async def test_a_burst_of_keys_is_typed_in_order_as_few_edits():
    """Before: one edit (and one Changed) per key: 1.6 ms each, 26.8 s for 3,000 words (benchmarks/keys.py)."""
    from textual.app import App, ComposeResult

    changes: list[str] = []

    class OneBox(App[None]):
        def compose(self) -> ComposeResult:
            yield TextBox("", id="box")

        def on_text_area_changed(self, event: TextArea.Changed) -> None:
            changes.append(event.text_area.text)

    app = OneBox()
    async with app.run_test(size=(80, 24)) as pilot:
        box = app.query_one(TextBox)
        box.focus()
        await pilot.pause()
        burst = "Tom swam.\nHe was happy."
        for character in burst:
            key = {"\n": "enter", " ": "space", ".": "full_stop"}.get(character, character)
            app.post_message(events.Key(key, None if character == "\n" else character))
        await pilot.press("backspace", "!", "!")  # not typed: what was gathered goes in first, then these
        await wait_until(pilot, lambda: box.text == "Tom swam.\nHe was happy!!", what="the keys typed")
        assert len(changes) <= 4 < len(burst)
