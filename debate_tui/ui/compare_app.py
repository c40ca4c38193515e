"""The small app of `debate-tui compare A B --tui`: one screen (two sessions, or the changed items of two
results files), the user's keymap and themes, F1 help; Escape on that first screen closes it."""

from __future__ import annotations

from textual.app import App
from textual.screen import Screen

from debate_tui.ui.keymap import apply_keymap
from debate_tui.ui.locations import theme_dirs
from debate_tui.ui.opening import DEFAULT_THEME
from debate_tui.ui.themes import load_themes


class CompareApp(App[None]):
    TITLE = "debate-tui compare"

    def __init__(self, first: Screen[None]) -> None:
        super().__init__()
        self.first = first
        themes, self.problems = load_themes(theme_dirs())
        for theme in themes:
            self.register_theme(theme)
        if DEFAULT_THEME in self.available_themes:
            self.theme = DEFAULT_THEME

    def on_mount(self) -> None:
        apply_keymap(self)
        for problem in self.problems:
            self.notify(problem, severity="warning", markup=False)
        self.push_screen(self.first, callback=lambda _: self.exit())

    def action_help(self) -> None:
        from debate_tui.ui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))
