"""Markdown for model text: rendered as Markdown, but links never open and control bytes stay visible."""

from __future__ import annotations

from typing import Any

from textual.await_complete import AwaitComplete
from textual.widgets import Markdown

from debate_tui.textsafe import inert


class SafeMarkdown(Markdown):
    """A Markdown widget whose links are inert: a click only says where it would have gone.

    A model can write `[click me](https://...)`; opening it would let model
    output act on the user's machine, so it is shown, never followed.
    """

    def __init__(self, markdown: str = "", **kwargs: Any) -> None:
        super().__init__(inert(markdown), open_links=False, **kwargs)

    def update(self, markdown: str) -> AwaitComplete:
        """New text, made inert as the first was."""
        return super().update(inert(markdown))

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        event.stop()
        self.notify(f"Links in model output are not opened: {inert(event.href)}", markup=False, timeout=4)
