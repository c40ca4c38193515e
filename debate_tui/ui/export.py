"""Writing a session in one of `report.exports.FORMATS` to a file the person chose.

In a browser (`debate-tui serve`) the file goes to the browser as a download, named as the person chose,
instead of onto the machine that serves the app.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from textual.screen import Screen

from debate_tui.domain import Session
from debate_tui.report.exports import BY_NAME, export_text
from debate_tui.safefile import TargetError, check_target, write_problem
from debate_tui.store import write_atomic
from debate_tui.ui.host import tui
from debate_tui.ui.screens.dialogs import ConfirmDialog, ExportAnswer, ExportDialog, ExportFormat


async def export_session(session: Session, path: Path, fmt: ExportFormat) -> Path:
    """Render in the loop (a consistent snapshot), write in a thread."""
    text = export_text(session, fmt)
    path = check_target(path, force=True, flag="export to")  # a file the person named, never a device or FIFO
    await asyncio.to_thread(write_atomic, path, text)
    return path


def export_stem(session: Session) -> str:
    """The file name says the protocol, e.g. chateval-20260102-030405-ab12."""
    return f"{session.protocol}-{session.id}"


def deliver_export(screen: Screen, session: Session, answer: ExportAnswer) -> None:
    """In a browser: the export as a download named like the chosen file; nothing is written here."""
    name = answer.path.name or export_stem(session)
    screen.app.deliver_text(io.StringIO(export_text(session, answer.format)), save_filename=name,
                            mime_type=BY_NAME[answer.format].mime)
    screen.notify(f"Sent {name} to the browser as a download.", markup=False)


def start_export(screen: Screen, session: Session) -> None:
    """Ask where, then write (an existing file only once the person said yes); the notification says where
    it went or why it did not."""
    async def write(answer: ExportAnswer) -> None:
        try:
            path = await export_session(session, answer.path, answer.format)
        except TargetError as exc:
            screen.notify(f"Export failed: {exc}", severity="error", markup=False)
            return
        except OSError as exc:  # a full disk, a read-only folder: the path, the reason, where else
            screen.notify(f"Export failed: {write_problem(exc, answer.path, 'or export elsewhere')}",
                          severity="error", markup=False)
            return
        screen.notify(f"Exported to {path}", markup=False)

    def confirmed(answer: ExportAnswer, yes: bool | None) -> None:
        if yes:
            screen.run_worker(write(answer), group="export", description=f"export to {answer.path}")
        else:
            screen.notify(f"Not exported: {answer.path} kept as it was.", markup=False)

    def done(answer: ExportAnswer | None) -> None:
        if answer is None:
            return
        if screen.app.is_web:
            deliver_export(screen, session, answer)
        elif answer.path.exists():
            screen.app.push_screen(ConfirmDialog(f"{answer.path} exists. Replace it?"),
                                   lambda yes: confirmed(answer, yes))
        else:
            confirmed(answer, True)

    folder = tui(screen).launch.config.export_dir or Path.cwd()  # unset: where debate-tui was started
    stem = Path(export_stem(session)) if screen.app.is_web else folder.absolute() / export_stem(session)
    screen.app.push_screen(ExportDialog(stem), done)
