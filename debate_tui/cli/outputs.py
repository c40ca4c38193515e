"""What a headless run writes, and how each write can fail without a traceback.

The session file and the report can meet an unwritable directory or a full
disk: the run stops with one line naming the file and the reason (exit 2). The
stream on stderr and the JSON line on stdout can lose their reader (`| head`, a
closed terminal): the stream stops, the judgment does not.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TextIO

from debate_tui.cli.exits import Exit
from debate_tui.domain import Session
from debate_tui.engine.control import RunControl
from debate_tui.inputs import InputError
from debate_tui.safefile import write_problem
from debate_tui.store import write_session
from debate_tui.textsafe import inert


class SaveGuard:
    """The run's save function: a session file that cannot be written stops the run, with the reason."""

    def __init__(self, path: Path, control: RunControl):
        self.path = path
        self.control = control
        self.error: str | None = None

    def __call__(self, session: Session) -> None:
        try:
            write_session(self.path, session)
        except OSError as exc:
            if self.error is None:
                self.error = write_problem(exc, f"the session file {self.path}",
                                           "or point --session or --sessions-dir elsewhere; the last complete "
                                           "version is kept")
                self.control.stop(self.error)

    def mark_failed(self, session: Session) -> None:
        """Save the session as failed where that is still possible (a full disk may have room for it)."""
        assert self.error is not None
        session.status, session.error = "failed", self.error
        with contextlib.suppress(OSError):
            write_session(self.path, session)


def standard_output(instead: str) -> TextIO:
    """Standard output, or InputError when the process was started with it closed (`>&-`): `instead` says what
    to pass to write elsewhere ("--out FILE")."""
    if sys.stdout is None:
        raise InputError(f"standard output is closed; pass {instead} to write to a file")
    return sys.stdout


def silence(stream: TextIO) -> None:
    """Point a stream whose reader went away at the null device: later writes and the flush at exit
    then succeed quietly instead of raising BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor (a test's capture): nothing is left to flush anyway
        pass


def print_line(text: str, stream: TextIO | None = None) -> None:
    """Print one line; a reader that went away is not an error."""
    stream = stream or sys.stdout
    try:
        print(text, file=stream, flush=True)
    except BrokenPipeError:
        silence(stream)


def fail(message: str) -> Exit:
    """The one-line refusal every command gives ("debate-tui: error: ..."), model or user text made inert, and
    the exit code for input that cannot be used (nothing was called)."""
    print_line(f"debate-tui: error: {inert(message)}", sys.stderr)
    return Exit.BAD_INPUT
