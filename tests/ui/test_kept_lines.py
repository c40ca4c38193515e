"""Widgets that keep their lines between repaints still show every change."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widgets import Static

from debate_tui.ui.widgets.kept_lines import KeptLines


class Kept(Static, KeptLines):
    pass


class KeptApp(App):
    CSS = "Kept { width: 20; height: 2; } Kept.hot { background: red; }"

    def compose(self) -> ComposeResult:
        yield Kept("first")


async def test_kept_lines_are_handed_out_again_until_content_class_or_theme_changes():
    app = KeptApp()
    async with app.run_test(size=(40, 6)) as pilot:
        widget = app.query_one(Kept)
        await pilot.pause()
        whole = Region(0, 0, 20, 2)
        first = widget.render_lines(whole)
        assert widget.render_lines(whole) is first, "nothing changed: the same lines"
        assert widget.render_lines(Region(0, 1, 20, 1)) != first, "another crop is drawn for that crop"

        widget.update("second")
        updated = widget.render_lines(whole)
        assert "second" in updated[0].text

        widget.add_class("hot")
        await pilot.pause()
        hot = widget.render_lines(whole)
        assert hot[0].text == updated[0].text and hot[0] != updated[0], "a class that restyles it is drawn"

        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await pilot.pause()
        widget.remove_class("hot")
        await pilot.pause()
        assert widget.render_lines(whole)[0] != hot[0]
