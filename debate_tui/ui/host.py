"""The app a screen or widget of the debate TUI runs in, typed: `self.app` is only `App[Any]` to Textual."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.dom import DOMNode

if TYPE_CHECKING:
    from debate_tui.ui.app import DebateTUI


def tui(node: DOMNode) -> DebateTUI:
    """The DebateTUI running `node` (its screens exist only inside it)."""
    return cast("DebateTUI", node.app)
