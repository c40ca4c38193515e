"""What `export` writes, for the command line and the TUI alike: nothing in it can act on a terminal."""

from __future__ import annotations

from typing import Literal

from debate_tui.domain import Session
from debate_tui.report.markdown import render
from debate_tui.textsafe import inert_json


def export_text(session: Session, fmt: Literal["md", "json"]) -> str:
    """The Markdown report, or the whole session as JSON with DEL, C1 and bidi characters escaped (same meaning)."""
    return render(session) if fmt == "md" else inert_json(session.model_dump_json(indent=1)) + "\n"
