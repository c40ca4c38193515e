"""Model and user text is data: it must never act as Rich markup or as terminal control.

Every Static or Label that shows such text gets a Textual `Content` built
here (never a markup string), after `textsafe.inert` has made control
characters visible. `Content` is used rather than `rich.text.Text` because
its styles may name theme variables such as `$accent`. Markdown panes use `widgets.safe_markdown.SafeMarkdown` instead.
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content

from debate_tui.textsafe import inert


def literal(text: str, style: str = "") -> Content:
    """`text` exactly as written: `[bold]` stays brackets, ESC shows as `\\x1b`."""
    return Content.styled(inert(text), style)


def cell(text: str, style: str = "") -> Text:
    """For DataTable cells: a plain `str` there is parsed as markup, and a `Content` is not measured."""
    return Text(inert(text), style=style)


def one_line(text: str, limit: int = 80) -> str:
    """Collapse whitespace and cut, for list rows and headers."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
