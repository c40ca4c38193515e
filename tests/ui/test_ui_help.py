"""Help and commands as a first-time user looks for them (issue 18): F1 and ?, the palette, the footer at 80 columns."""

from __future__ import annotations

import re

import pytest
from textual.content import Content
from textual.widgets import TextArea

from debate_tui.protocols import PROTOCOLS
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from debate_tui.ui.screens.debate import DebateScreen
from debate_tui.ui.screens.help import HelpScreen, KeyRows
from debate_tui.ui.screens.setup import SetupScreen
from tests.helpers import REPO, STORY
from tests.helpers.sessions import make_session
from tests.helpers.ui import RecordingDemo, screen_text, wait_until

DEBATE_IDS = ["debate.next", "debate.auto", "debate.pause", "debate.inject", "debate.override", "debate.report",
              "debate.export", "debate.back", "debate.fork", "debate.turn_previous", "debate.turn_next", "app.help",
              "app.quit", "app.sessions", "app.setup"]


def debate_app() -> DebateTUI:
    return DebateTUI(Launch(session=make_session(rounds=1), demo=True, step=True), client=RecordingDemo())


async def on_debate(pilot) -> DebateScreen:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, DebateScreen), what="the debate screen")
    await pilot.pause(0.2)
    return pilot.app.screen


@pytest.mark.parametrize("key", ["f1", "question_mark"])
async def test_f1_and_question_mark_list_every_key_of_the_screen_with_its_id_and_the_protocols(key):
    app = debate_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await on_debate(pilot)
        await pilot.press(key)
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        listed = [binding_id for _, _, binding_id, _ in app.screen.keys]
        assert listed == DEBATE_IDS
        shown = " ".join(" ".join(str(rows.render()).split()) for rows in app.screen.query(KeyRows))
        for line in PROTOCOLS.values():
            assert line in shown
        assert "space" in shown and "Step" in shown and "debate.pause" in shown
        await pilot.press(key)
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what="the help closed")


async def test_question_mark_in_a_text_box_types_a_question_mark():
    app = DebateTUI(Launch(texts={"text": ""}))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen.query(TextArea),
                         what="the setup form")
        area = app.screen.query_one("#text-text", TextArea)
        area.focus()
        await pilot.press("question_mark")
        assert area.text == "?" and not isinstance(app.screen, HelpScreen)


async def test_the_palette_offers_the_screens_commands_first_and_no_text_editor_commands():
    app = DebateTUI(Launch(texts={"text": STORY}))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen.query(TextArea),
                         what="the setup form")
        app.screen.query_one("#text-text", TextArea).focus()
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert titles[:6] == ["Start", "Load text", "Help", "Quit", "Sessions", "New"]
        assert "Switch theme" in titles
        for editing in ("Cursor left", "Select all", "Delete line", "Undo", "Focus Next"):
            assert editing not in titles
        assert len(titles) == len(set(titles)) <= 10
    app = debate_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await on_debate(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert titles[:12] == ["Step", "Auto", "Pause", "Inject", "Override", "Report", "Export", "Stop", "Fork",
                               "Turn before", "Turn after", "Help"]
        helps = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert helps["Auto"].endswith("(key: a)") and "Keys" not in helps  # the palette reads markup: no [..]
        assert "[" not in helps["Help"]


@pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
async def test_the_footer_keeps_the_debate_keys_that_matter_at_80_columns(size):
    """Issue 46: at 80 columns Quit fell off; Help, Quit and Stop come first, then the screen's keys in order."""
    app = debate_app()
    async with app.run_test(size=size) as pilot:
        await on_debate(pilot)
        footer = screen_text(app).splitlines()[-1]
        for key in ("f1 Help", "space Step", "a Auto", "p Pause", "i Inject", "o Override", "r Report", "esc Stop",
                    "^q Quit"):
            assert key in footer, footer


def footer_keys(app) -> list[str]:
    """The keys the footer holds, as it draws them ("^q Quit")."""
    from textual.widgets import Footer

    footer = app.screen.query_one(Footer)
    return [f"{key.key_display} {key.description}" for key in footer.children if hasattr(key, "key_display")]


async def footer_fits(pilot, where: str, *needed: str) -> None:
    """The footer's row is its keys, each whole, in order (wide: padded, the palette's hint docked right)."""
    app = pilot.app
    await wait_until(pilot, lambda: all(key in footer_keys(app) for key in needed), what=f"the {where} footer")
    await pilot.pause(0.1)
    keys = footer_keys(app)
    row = screen_text(app).splitlines()[-1].rstrip()
    assert " ".join(row.replace("▏", " ").split()) == " ".join(keys) and len(row) <= app.size.width, (where, row)


@pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
async def test_a_finished_debate_footer_offers_only_keys_that_act(size):
    """Issue 46: after the end the footer still offered esc Stop (and i Inject, which only said it could not):
    once the run is over they are gone, escape reads Back and goes back."""
    app = debate_app()
    async with app.run_test(size=size) as pilot:
        debate = await on_debate(pilot)
        await footer_fits(pilot, "running debate", "esc Stop", "i Inject")
        assert "esc Back" not in footer_keys(app)
        await pilot.press("a")
        await wait_until(pilot, lambda: debate.finished, what="the end of the run")
        await footer_fits(pilot, "finished debate", "esc Back", "r Report")
        shown = footer_keys(app)
        for dead in ("esc Stop", "space Step", "a Auto", "p Pause", "i Inject"):
            assert dead not in shown, shown
        await pilot.press("i")
        await pilot.pause(0.1)
        assert app.screen is debate, "a hidden key opens no prompt"
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, DebateScreen), what="back from the debate")


async def test_every_footer_keeps_help_and_quit_whole_at_80_columns():
    """Issue 46: the sessions footer ended mid-word ("^q Quit f") and the debate screen's lost Quit at 80x24."""
    from debate_tui.ui.screens.report import ReportScreen
    from debate_tui.ui.screens.sessions import SessionsScreen

    app = debate_app()
    async with app.run_test(size=(80, 24)) as pilot:
        debate = await on_debate(pilot)
        await footer_fits(pilot, "running debate", "f1 Help", "^q Quit", "esc Stop", "space Step")
        await pilot.press("a")
        await wait_until(pilot, lambda: debate.finished, what="the end of the run")
        await footer_fits(pilot, "finished debate", "f1 Help", "^q Quit", "r Report", "f Fork")
        assert "space Step" not in footer_keys(app)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ReportScreen), what="the report")
        await footer_fits(pilot, "report", "f1 Help", "^q Quit", "esc Back", "f2 Sessions", "f3 New")
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen), what="the sessions")
        await footer_fits(pilot, "sessions", "f1 Help", "^q Quit", "esc Back", "o Read")
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), what="the setup")
        await footer_fits(pilot, "setup", "f1 Help", "^r Start", "^q Quit", "f2 Sessions", "f3 New")
        await pilot.resize_terminal(150, 30)
        await footer_fits(pilot, "wide setup", "f1 Help", "^q Quit")


def documented_keys(where: str) -> list[str]:
    """The keys the docs' key tables (README.md, docs/) give for a screen (`anywhere`), without those they
    limit ("outside ...")."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    rows = [line for page in pages for line in page.read_text().splitlines() if line.startswith(f"| {where} |")]
    return [key for row in rows for key, limited in re.findall(r"`([^`]+)`( \(?outside)?", row.split("|")[2])
            if not limited]


async def help_opens_from_the_text_box(key: str) -> None:
    app = DebateTUI(Launch(texts={"text": ""}))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen.query(TextArea),
                         what="the setup form")
        app.screen.query_one("#text-text", TextArea).focus()
        await pilot.pause()
        await pilot.press({"?": "question_mark"}.get(key, key))
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what=f"help opened by {key}")


async def test_every_help_key_the_readme_gives_for_anywhere_opens_help_from_the_text_box():
    """Issue 33 #3: the README said `?` anywhere, but `?` in the setup screen's text box types a question mark."""
    help_keys = [key for key in documented_keys("anywhere") if key in ("f1", "?")]
    assert help_keys
    for key in help_keys:
        await help_opens_from_the_text_box(key)


async def test_the_palette_lists_the_screens_commands_first_as_it_shows_them():
    """Issue 33 #4: get_system_commands put the screen's first, but the palette sorted them by title."""
    from textual.command import CommandList, CommandPalette

    app = DebateTUI(Launch(texts={"text": STORY}))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen.query(TextArea),
                         what="the setup form")
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
        commands = app.screen.query_one(CommandList)
        await wait_until(pilot, lambda: commands.option_count >= 6, what="the palette's commands")
        shown = [str(commands.get_option_at_index(i).prompt).split("\n")[0] for i in range(commands.option_count)]
        assert shown[:6] == ["Start", "Load text", "Help", "Quit", "Sessions", "New"], shown


async def test_help_keeps_its_hanging_indent_at_80_columns_and_says_how_to_copy_and_change_the_theme():
    """Issue 46: a wrapped tooltip went back under the keys column, and the help never said that dragging
    selects text (ctrl+c copies it) nor where themes are picked."""
    app = debate_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await on_debate(pilot)
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        await pilot.pause(0.2)
        rows = screen_text(app).splitlines()
        first = next(at for at, row in enumerate(rows) if "Let the next turn run;" in row)
        column = rows[first].index("Let the next turn run;")
        wrapped = rows[first + 1][column:].strip(" █")
        assert wrapped and rows[first + 1][:column].strip(" │█") == "", rows[first:first + 2]
        assert rows[first + 1][column - 1] == " " and not rows[first + 1][column].isspace()
        shown = " ".join(" ".join(str(rows.render()).split()) for rows in app.screen.query(KeyRows))
        assert "Drag with the mouse" in shown and "ctrl+c copies it" in shown
        assert "Switch theme" in shown and f"the {app.theme} theme" in shown


def test_key_rows_keep_keys_in_their_column_and_texts_beside_them_at_any_width():
    """The help's rows are one widget drawn as lines (a grid of two Statics a row made F1 slow): a key
    longer than its column wraps inside it, right-aligned, and every line of a text starts at the same column."""
    rows = KeyRows([("ctrl+enter ctrl+r", Content("Start the debate with the choices on the form")),
                    ("q", Content("Quit"))])
    lines = [line.plain for line in rows.lines(30)]
    assert lines == [" ctrl+enter Start the debate",
                     "     ctrl+r with the choices",
                     "            on the form",
                     "          q Quit"]
