"""Textual messages the TUI's own parts exchange."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from debate_tui.engine.events import Event


@dataclass
class RunEvent(Message):
    """One engine event, posted to the debate screen so it is handled in order, off the runner's stack."""

    event: Event
