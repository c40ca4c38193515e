"""The export formats, declared once: what `export`, `run --report`, the TUI's export dialog and the browser
download all offer and write. Nothing a format renders can act on a terminal.

Adding a format is one `FileFormat` in `FORMATS`: the command line's `--format` choices and help, the report
flags' help, the dialog's choices and the download's MIME type are all read from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from debate_tui.domain import Session
from debate_tui.report.html import render_html
from debate_tui.report.markdown import render
from debate_tui.textsafe import inert_json

ExportFormat = str
"""A format's `name` (md, html, json): what `--format` takes and an export dialog answers."""


def session_json(session: Session) -> str:
    """The whole session as JSON, with DEL, C1 and bidi characters escaped (same meaning)."""
    return inert_json(session.model_dump_json(indent=1)) + "\n"


@dataclass(frozen=True)
class FileFormat:
    name: ExportFormat
    """What `--format` takes (and the dialog's widget id, `fmt-NAME`)."""
    label: str
    """How the dialog names it."""
    help: str
    """How `--format`'s help describes it."""
    suffix: str
    """The file name's ending an export is given (the dialog switches the path's suffix to it)."""
    mime: str
    """The MIME type of the browser download (`debate-tui serve`)."""
    render: Callable[[Session], str]
    report: bool = True
    """A report (`--report PATH` picks it by the file's suffix); False: not a report (the session as data)."""
    other_suffixes: tuple[str, ...] = ()
    """Further endings `--report` recognizes it by (.htm)."""

    @property
    def suffixes(self) -> tuple[str, ...]:
        return (self.suffix, *self.other_suffixes)


FORMATS: tuple[FileFormat, ...] = (
    FileFormat("md", "Markdown", "md (default)", ".md", "text/markdown", render),
    FileFormat("json", "JSON (the whole session)", "json (the whole session)", ".json", "application/json",
               session_json, report=False),
    FileFormat("html", "HTML (one page, for a browser)", "html (one self-contained page)", ".html", "text/html",
               render_html, other_suffixes=(".htm",)),
)
"""The default first: the dialog preselects it, `export` writes it without --format, `--report` falls back to it."""
BY_NAME = {fmt.name: fmt for fmt in FORMATS}
DEFAULT = FORMATS[0]


def export_text(session: Session, fmt: ExportFormat) -> str:
    """The session rendered in the format named `fmt`."""
    return BY_NAME[fmt].render(session)


def report_format(path: Path) -> FileFormat:
    """The report for a file the person named: the report format its suffix names (case aside), else the
    default (Markdown)."""
    suffix = path.suffix.lower()
    return next((fmt for fmt in FORMATS if fmt.report and suffix in fmt.suffixes), DEFAULT)


def report_text(session: Session, path: Path) -> str:
    return report_format(path).render(session)


def format_help() -> str:
    """`--format`'s help: every format, the default first."""
    return ", ".join(fmt.help for fmt in FORMATS[:-1]) + f" or {FORMATS[-1].help}"


def report_help(default: str) -> str:
    """A report flag's help: which suffix writes which format, then where it goes by `default`."""
    others = " or ".join(f"{fmt.name.upper()} when the name ends in {fmt.suffix}"
                         for fmt in FORMATS if fmt.report and fmt is not DEFAULT)
    return f"write the report here: {others}, else {DEFAULT.label} (default: {default})"


def formats_named() -> str:
    """The formats' short names for a sentence: "Markdown, HTML or JSON"."""
    names = [fmt.label.split(" (")[0] for fmt in FORMATS]
    return ", ".join(names[:-1]) + f" or {names[-1]}"
