"""The setup form's text boxes: Textual's TextArea, repainted whole when its text is wrapped again."""

from __future__ import annotations

from textual.widgets import TextArea


class TextBox(TextArea):
    """A TextArea that draws every line again after it re-wraps its text.

    TextArea re-wraps on a resize without asking for a repaint. When the form's scroll bar
    appeared (the form's controls mount after the first frame), the box was drawn at its new
    width with the old wrap before the re-wrap, and only the cursor's line was drawn again:
    the other lines kept the old wrap, so a word at the edge went missing on screen ("He / to
    the pool", "went" lost at 80x24) while the text itself was intact.
    """

    def _rewrap_and_refresh_virtual_size(self) -> None:
        super()._rewrap_and_refresh_virtual_size()
        self.refresh()
