"""Batch progress on stderr: one live line on a terminal, periodic plain lines in a log.

A terminal gets a single line redrawn in place (at most ten times a second):
done/total, a bar, items per second, ETA, tokens and cost. Anything else (a
CI log, a file, a pipe) gets a plain line every `interval_s` seconds or at
each further tenth of the work, whichever comes first, so a log neither
floods nor goes silent.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from debate_tui.domain import Session, Usage

BAR_WIDTH = 20
TTY_REDRAW_S = 0.1


@dataclass
class Tally:
    """What a batch has done so far; the summary line is made from it too."""

    total: int = 0
    """Items this run has to do (already finished ones are `skipped`, not counted here)."""
    skipped: int = 0
    done: int = 0
    needs_human: int = 0
    failed: int = 0
    cancelled: int = 0
    cache_hits: int = 0
    unscored: int = 0
    """Turns of the sessions run now that were left unscored after the re-ask."""
    truncated: int = 0
    """Turns of the sessions run now that did not end on their own (token cap, deadline, cut off)."""
    spent: Usage = field(default_factory=Usage)

    @property
    def finished(self) -> int:
        return self.done + self.needs_human + self.failed

    def count_turns(self, session: Session) -> None:
        self.unscored += sum(turn.unscored for turn in session.turns)
        self.truncated += sum(turn.truncated for turn in session.turns)

    def count(self, status: str) -> None:
        if status == "completed":
            self.done += 1
        elif status in ("needs_human", "failed", "cancelled"):
            setattr(self, status, getattr(self, status) + 1)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def _tokens(count: int) -> str:
    """1234 -> "1.2k", 4_000_000_000_000 -> "4.0T": the unit grows with the number (it printed "4000000000.0k")."""
    for unit, size in (("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if abs(count) >= size:
            return f"{count / size:.1f}{unit}"
    return str(count)


class Progress:
    def __init__(self, tally: Tally, *, stream: TextIO | None = None, tty: bool | None = None,
                 interval_s: float = 10.0, clock: Callable[[], float] = time.monotonic, width: int | None = None):
        self.tally = tally
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.interval_s = interval_s
        self.clock = clock
        self.width = width
        """Terminal columns; None: asked of the terminal at each redraw (it may be resized)."""
        self.started = clock()
        self._last_print = self.started
        self._last_tenth = 0
        self._printed: int | None = None
        self._width = 0

    def line(self) -> str:
        t = self.tally
        elapsed = max(self.clock() - self.started, 1.0)  # in its first second a rate is noise ("3000000000.00 items/s")
        rate = t.finished / elapsed
        left = t.total - t.finished
        eta = _duration(left / rate) if rate > 0 and left > 0 else ("0:00" if left <= 0 else "?")
        tokens = t.spent.prompt_tokens + t.spent.completion_tokens
        parts = [f"{t.finished}/{t.total}"]
        if self.tty:
            filled = int(BAR_WIDTH * t.finished / t.total) if t.total else BAR_WIDTH
            parts.append("[" + "#" * filled + "." * (BAR_WIDTH - filled) + "]")
        parts += [f"{rate:.2f} items/s", f"ETA {eta}", f"{_tokens(tokens)} tokens", f"${t.spent.cost_usd:.4f}",
                  f"{t.spent.calls} calls", f"{t.cache_hits} cached"]
        if t.needs_human or t.failed:
            parts.append(f"{t.needs_human} need a human, {t.failed} failed")
        if t.skipped:
            parts.append(f"{t.skipped} already done")
        return "  ".join(parts)

    def update(self, force: bool = False) -> None:
        """Redraw (terminal) or print when a period or a tenth of the work has passed (log)."""
        now = self.clock()
        if self.tty:
            if force or now - self._last_print >= TTY_REDRAW_S:
                columns = self.width or shutil.get_terminal_size().columns
                text = self.line()[: columns - 1]  # a wrapped line could not be redrawn in place
                self.stream.write("\r" + text.ljust(self._width))
                self.stream.flush()
                self._width = len(text)
                self._last_print = now
            return
        tenth = 10 * self.tally.finished // self.tally.total if self.tally.total else 10
        if force or tenth > self._last_tenth or now - self._last_print >= self.interval_s:
            self.stream.write(f"batch: {self.line()}\n")
            self.stream.flush()
            self._last_print, self._last_tenth, self._printed = now, tenth, self.tally.finished

    def close(self) -> None:
        """The final state, unless a log already shows it."""
        if self.tty or self._printed != self.tally.finished:
            self.update(force=True)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
