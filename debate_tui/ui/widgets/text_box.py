"""The setup form's text boxes: Textual's TextArea, repainted whole when its text is wrapped again, and
taking a burst of typed keys as one edit."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.widgets import TextArea

TYPED_AS = {"enter": "\n"}
"""Keys that type a character without being printable: a terminal without bracketed paste sends a pasted
line break as enter."""


class TextBox(TextArea):
    """A TextArea that draws every line again after it re-wraps its text, and types a burst of keys at once.

    TextArea re-wraps on a resize without asking for a repaint. When the form's scroll bar
    appeared (the form's controls mount after the first frame), the box was drawn at its new
    width with the old wrap before the re-wrap, and only the cursor's line was drawn again:
    the other lines kept the old wrap, so a word at the edge went missing on screen ("He / to
    the pool", "went" lost at 80x24) while the text itself was intact.

    A terminal without bracketed paste sends a pasted text as one key per character, and
    TextArea makes each its own edit (the document, the wrap, the cursor, a scroll, a repaint):
    1.6 ms a key, so 3,000 words froze the app for 26.8 s. Here the characters of the keys
    already waiting are gathered and inserted as one edit once they are read, in their order:
    any other key (a cursor move, a deletion, a binding) first inserts what is gathered.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._typed: list[str] = []
        """Characters typed and not yet inserted: the burst gathered so far."""

    def _rewrap_and_refresh_virtual_size(self) -> None:
        super()._rewrap_and_refresh_virtual_size()
        self.refresh()

    def on_key(self, event: events.Key) -> None:
        """Gather a typed character (TextArea's own handler is skipped); any other key inserts the gathered ones
        first and goes on to TextArea and the bindings as before."""
        character = TYPED_AS.get(event.key) or (event.character if event.is_printable else None)
        if self.read_only or character is None:
            self.flush_typed()
            return
        event.stop()
        event.prevent_default()
        if not self._typed:
            self.call_later(self.flush_typed)  # queued behind the keys already waiting, so they join this burst
        self._typed.append(character)

    def flush_typed(self) -> None:
        """Insert the characters gathered, as one edit over the selection, as typing them one by one would."""
        if not self._typed:
            return
        typed, self._typed = "".join(self._typed), []
        self.replace(typed, *self.selection, maintain_selection_offset=False)
