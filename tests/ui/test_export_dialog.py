"""The export dialog (issue 46, "Find and keep your work"): typing edits the offered path instead of erasing it,
the formats answer the arrows and Enter after a click, the chosen format and the full path are said in words,
the footer shows the dialog's own keys, and `export_dir` says where the file goes. Its choices are the one
table of formats (issue 43)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, RadioButton, Static
from textual.widgets._footer import FooterKey

from debate_tui.config import Config
from debate_tui.report.exports import FORMATS
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from debate_tui.ui.screens.dialogs import ExportDialog
from debate_tui.ui.screens.report import ReportScreen
from tests.helpers.sessions import make_session
from tests.helpers.ui import wait_until


async def open_dialog(pilot, app: DebateTUI) -> ExportDialog:
    app.open_report(make_session())
    await wait_until(pilot, lambda: isinstance(app.screen, ReportScreen), what="the report")
    await pilot.press("e")
    await wait_until(pilot, lambda: isinstance(app.screen, ExportDialog), what="the export dialog")
    await pilot.pause()
    return app.screen


async def test_the_first_key_typed_edits_the_offered_path_and_the_footer_shows_the_dialogs_keys(tmp_path,
                                                                                                monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = DebateTUI(Launch(sessions_dir=tmp_path / "sessions"))
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(pilot, app)
        path = dialog.query_one("#export-path", Input)
        offered = path.value
        assert app.focused is path and Path(offered).is_absolute() and Path(offered).parent == tmp_path
        await pilot.press("x")
        assert path.value == offered + "x"
        keys = {key.description for key in dialog.query(FooterKey)}
        report_only = {binding.description for binding in ReportScreen.BINDINGS} - {"Export", "Help", "Cancel"}
        assert {"Export", "Cancel"} <= keys and report_only and not keys & report_only
        assert dialog.query_one("#export-where", Static).render().plain == f"Markdown to {offered}x"


async def test_with_the_focus_in_the_path_the_arrows_choose_a_format_as_the_dialog_says(tmp_path, monkeypatch):
    """The dialog's line says "arrows choose a format"; with the focus where it starts (the path) Down did nothing
    and Enter then wrote Markdown."""
    monkeypatch.chdir(tmp_path)
    app = DebateTUI(Launch(sessions_dir=tmp_path / "sessions"))
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(pilot, app)
        assert isinstance(app.focused, Input)
        await pilot.press("down", "down")
        await pilot.pause()
        target = Path(dialog.query_one("#export-path", Input).value)
        assert dialog.format == "html" and target.suffix == ".html" and isinstance(app.focused, Input)
        await pilot.press("enter")
        await wait_until(pilot, target.exists, what="the HTML export")
        assert target.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")


async def test_after_a_click_on_a_format_down_chooses_the_next_and_enter_exports_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = DebateTUI(Launch(sessions_dir=tmp_path / "sessions"))
    async with app.run_test(size=(120, 36)) as pilot:
        dialog = await open_dialog(pilot, app)
        await pilot.click("#fmt-html")
        await pilot.pause()
        assert dialog.format == "html" and dialog.query_one("#export-path", Input).value.endswith(".html")
        assert "chosen" in str(dialog.query_one("#fmt-html", RadioButton).label)
        assert "chosen" not in str(dialog.query_one("#fmt-md", RadioButton).label)
        await pilot.press("down")
        await pilot.pause()
        target = Path(dialog.query_one("#export-path", Input).value)
        assert dialog.format == "md" and target.suffix == ".md"  # html is the last: Down goes round to the first
        assert dialog.query_one("#export-where", Static).render().plain == f"Markdown to {target}"
        await pilot.press("up", "up")
        await pilot.pause()
        target = Path(dialog.query_one("#export-path", Input).value)
        assert dialog.format == "json" and target.suffix == ".json"
        await pilot.press("enter")
        await wait_until(pilot, target.exists, what="the JSON export")
        assert target.read_text(encoding="utf-8").startswith("{")


async def test_the_dialog_offers_the_configured_export_dir_and_every_format_of_the_table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exports = tmp_path / "exports"
    exports.mkdir()
    app = DebateTUI(Launch(sessions_dir=tmp_path / "sessions", config=Config(export_dir=exports)))
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(pilot, app)
        assert [button.id for button in dialog.query(RadioButton)] == [f"fmt-{fmt.name}" for fmt in FORMATS]
        target = Path(dialog.query_one("#export-path", Input).value)
        assert target.parent == exports
        await pilot.press("enter")
        await wait_until(pilot, target.exists, what="the export in export_dir")


async def test_enter_on_the_cancel_button_cancels(tmp_path, monkeypatch):
    """Enter exports from the path and the formats (a priority key), but on a button it presses that button."""
    monkeypatch.chdir(tmp_path)
    app = DebateTUI(Launch(sessions_dir=tmp_path / "sessions"))
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(pilot, app)
        target = Path(dialog.query_one("#export-path", Input).value)
        dialog.query_one("#export-cancel").focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReportScreen), what="back to the report")
        await pilot.pause(0.2)
        assert not target.exists()
