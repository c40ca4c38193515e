"""Dropdown entries that say what each choice is: "name  what it does", not a bare id."""

from __future__ import annotations

from collections.abc import Mapping

from textual.content import Content

from debate_tui.ui.literal import literal, one_line

DESCRIPTION_CHARACTERS = 70
"""A description is cut to one line of this many characters: the dropdown is one row per choice."""


def described(choices: Mapping[str, str]) -> list[tuple[Content, str]]:
    """(label, value) pairs for a Select: each name, bold, then its one-line description, dimmed."""
    return [(Content.assemble(literal(name, "bold"), literal(f"  {one_line(text, DESCRIPTION_CHARACTERS)}", "dim"))
             if text.strip() else literal(name), name) for name, text in choices.items()]
