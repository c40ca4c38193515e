"""What `export` writes, for the command line and the TUI alike: nothing in it can act on a terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from debate_tui.domain import Session
from debate_tui.report.html import render_html
from debate_tui.report.markdown import render
from debate_tui.textsafe import inert_json

ExportFormat = Literal["md", "json", "html"]


def export_text(session: Session, fmt: ExportFormat) -> str:
    """The Markdown report, the HTML report, or the whole session as JSON with DEL, C1 and bidi characters
    escaped (same meaning)."""
    if fmt == "html":
        return render_html(session)
    return render(session) if fmt == "md" else inert_json(session.model_dump_json(indent=1)) + "\n"


def report_text(session: Session, path: Path) -> str:
    """The report for a file the person named: HTML for .html or .htm, Markdown otherwise (the default)."""
    return render_html(session) if path.suffix.lower() in (".html", ".htm") else render(session)
