"""A child process on a pseudo-terminal, as a person's terminal would run it.

A TUI measured headless skips the work of turning frames into terminal
output, so start-up and streaming are measured on a real pty instead: the
child writes its frames to it and a reader thread here drains them (the
terminal's own cost stays in this process, not the child's, as a terminal
emulator's would). The reader notes when given byte strings first appear,
which is how "first frame" is timed without any hook in the app.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Sequence
from pathlib import Path

CTRL_Q = b"\x11"


class PtyRun:
    """Start `argv` on a fresh pty of `size` (columns, rows); watch its output for markers."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], *, cwd: Path | None = None,
                 size: tuple[int, int] = (120, 36), markers: Sequence[bytes] = ()) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        self.markers = {marker: None for marker in markers}
        self.seen: dict[bytes, float | None] = dict(self.markers)
        self.output = bytearray()
        self._found = threading.Condition()
        self.started = time.perf_counter()
        self.process = subprocess.Popen(list(argv), stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
                                        env={**env, "TERM": "xterm-256color"}, start_new_session=True)
        os.close(slave)
        self._reader = threading.Thread(target=self._read, name="pty-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.master], [], [], 0.2)
                if not ready:
                    if self.process.poll() is not None:
                        return
                    continue
                data = os.read(self.master, 65536)
            except OSError:  # the child closed its end
                return
            if not data:
                return
            now = time.perf_counter()
            start = len(self.output)
            self.output += data
            with self._found:
                for marker, at in self.seen.items():
                    if at is None and self.output.find(marker, max(0, start - len(marker))) >= 0:
                        self.seen[marker] = now - self.started
                        self._found.notify_all()

    def wait_for(self, marker: bytes, timeout: float) -> float | None:
        """Seconds from the launch to the first output containing `marker`; None on timeout."""
        with self._found:
            self._found.wait_for(lambda: self.seen.get(marker) is not None or self.process.poll() is not None,
                                 timeout=timeout)
            return self.seen.get(marker)

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def wait(self, timeout: float) -> int:
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=5)
        return code

    def close(self, quit_keys: bytes = CTRL_Q) -> None:
        """Ask the app to quit as a person would, then make sure it is gone (it is our own child)."""
        if self.process.poll() is None:
            try:
                self.send(quit_keys)
                self.process.wait(timeout=3)
            except (OSError, subprocess.TimeoutExpired):
                self.process.send_signal(signal.SIGKILL)
                self.process.wait(timeout=5)
        self._reader.join(timeout=5)
        os.close(self.master)
