"""The results file: append-only JSONL while a batch runs, rewritten atomically otherwise.

Appending one flushed line per finished item means a killed batch loses at
most the line being written; that half line is the only damage a crash can
do, so it is the only one forgiven on reading (a bad line anywhere else is a
hand edit, and is reported). Whole-file changes (dropping superseded lines
before a rerun, a reviewer's decision) go through `write_atomic`, so a reader
sees either the old file or the new one.

A batch and a review must not rewrite the same file at once: an atomic
replace would orphan the batch's open append handle and lose its lines. Each
holds an advisory lock on `RESULTS.jsonl.lock` while it works (POSIX flock; beside the file a link names,
opened without following a link, removed at the end: safefile.LockFile).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from debate_tui.inputs import InputError
from debate_tui.readfile import MissingFile, jsonl_lines, jsonl_value, read_text
from debate_tui.safefile import FULL, LockBusy, LockFile, LockRefused, lock_beside, write_problem
from debate_tui.store import write_atomic

Row = dict[str, Any]
FINAL = frozenset({"completed", "needs_human"})
"""Statuses a rerun keeps; a failed or cancelled item is run again (its session resumed)."""


class ResultsError(Exception):
    """The results file cannot be used; the message names the file and line."""


class UnreadableLine(ResultsError):
    """A line that is not a results row (not a crash's half line: that one is forgiven)."""

    def __init__(self, message: str, *, first: bool):
        super().__init__(message)
        self.first = first
        """It is the file's first line: the file may be no results file at all."""


class ResultsBusy(ResultsError):
    """Another batch or review is writing this results file."""


@dataclass
class ReadResult:
    rows: list[Row]
    truncated: bool
    """The last line was cut short by a crash and has been left out."""


def dump_row(row: Row) -> str:
    return json.dumps(row, ensure_ascii=False, separators=(", ", ": "))


def row_key(row: Row) -> tuple[str, str]:
    return str(row.get("id")), str(row.get("criterion"))


class ResultsFile:
    def __init__(self, path: Path, shard: str | None = None):
        self.path = path
        self.shard = shard
        """`--shard I/N` of the batch writing it: each appended line records it, so a merge can tell a shard missing."""
        self._handle: IO[str] | None = None

    @property
    def lock_path(self) -> Path:
        """Beside the file the path really names: a link to the results file takes the same lock."""
        return lock_beside(self.path, hidden=False)

    def exists(self) -> bool:
        return self.path.exists()

    def read(self) -> ReadResult:
        """Every row; a cut-off last line is dropped, any other unreadable line raises ResultsError."""
        try:
            text = read_text(self.path, "results")  # bounded, never a device or FIFO
        except MissingFile:
            return ReadResult([], False)
        except InputError as exc:
            raise ResultsError(str(exc)) from None
        lines = list(jsonl_lines(text))
        cut = not text.endswith("\n")  # every line is appended with its newline: only a crash leaves one without
        rows: list[Row] = []
        truncated = False
        for index, (number, line) in enumerate(lines):
            try:
                row = jsonl_value(line)
                if not isinstance(row, dict):
                    raise ValueError("not a JSON object")
            except ValueError as exc:
                if index == len(lines) - 1 and cut:  # the half line a crash leaves
                    truncated = True
                    continue
                raise UnreadableLine(f"{self.path}:{number}: unreadable results line ({exc})",
                                     first=index == 0) from None
            rows.append(row)
        return ReadResult(rows, truncated)

    def check_resumable(self, flag: str = "--out",
                        why: str = "batch only appends to or resumes a results file") -> None:
        """ResultsError unless the file is absent, empty or a results file (its rows name an id, a criterion and
        a session): `batch --out` appends to and rewrites it, so anything else would be lost."""
        try:
            mode = self.path.stat().st_mode
        except FileNotFoundError:
            if self.path.is_symlink():
                raise ResultsError(f"{flag} {self.path} is a symbolic link to nothing; it is never replaced") from None
            return
        if not stat.S_ISREG(mode):
            raise ResultsError(f"{flag} {self.path} is not a regular file; give a results file or a new path")
        try:
            rows = self.read().rows
        except UnreadableLine as exc:  # a text file's first line: not a results file (a later one: a damaged one)
            if not exc.first:
                raise
            rows = []
        first = rows[0] if rows else None
        if first is None and self.path.stat().st_size == 0:
            return
        if first is None or not {"id", "criterion", "session"} <= first.keys():
            raise ResultsError(f"{flag} {self.path} exists and is not a results file (its first line is not a "
                               f"results row); {why}: give a new path")

    def rewrite(self, rows: Iterable[Row]) -> None:
        write_atomic(self.path, "".join(dump_row(row) + "\n" for row in rows))

    def append(self, rows: Iterable[Row]) -> None:
        """Add lines and flush them to the OS at once, so a killed process keeps them."""
        try:
            if self._handle is None:
                self._handle = self.path.open("a", encoding="utf-8")
            tag = {"shard": self.shard} if self.shard else {}
            self._handle.write("".join(dump_row(row | tag) + "\n" for row in rows))
            self._handle.flush()
        except OSError as exc:  # a full disk: at most a half line, which the next read forgives
            raise OSError(exc.errno, exc.strerror, str(self.path)) from exc

    def close(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            try:
                handle.flush()
                os.fsync(handle.fileno())
            except OSError as exc:
                raise OSError(exc.errno, exc.strerror, str(self.path)) from exc
            finally:
                with contextlib.suppress(OSError):  # its buffer could not be written: it is lost either way
                    handle.close()

    def replace_session(self, session_id: str, rows: list[Row]) -> None:
        """Swap the rows of one session for new ones, in place, atomically."""
        current = self.read().rows
        out: list[Row] = []
        inserted = False
        for row in current:
            if row.get("session") != session_id:
                out.append(row)
            elif not inserted:
                out.extend(rows)
                inserted = True
        if not inserted:
            out.extend(rows)
        self.rewrite(out)

    @contextmanager
    def locked(self, purpose: str) -> Iterator[None]:
        """Hold the file's advisory lock, or raise ResultsBusy at once if someone else does; the lock file is
        removed when done."""
        lock = LockFile(self.lock_path)
        try:
            lock.acquire(f"{purpose}, pid {os.getpid()}\n")
        except LockBusy as exc:
            holder = exc.holder or "another process"
            raise ResultsBusy(f"{self.path} is in use ({holder}); wait for it to finish") from None
        except LockRefused as exc:
            raise ResultsError(str(exc)) from None
        except OSError as exc:
            where = self.lock_path if exc.errno in FULL else f"beside {self.path}"
            raise ResultsError(write_problem(exc, where, "or give another path")) from None
        try:
            yield
        finally:
            lock.release()


def settled(rows: Iterable[Row]) -> dict[tuple[str, str], Row]:
    """The last final row of each (id, criterion); superseded and unfinished ones are left out."""
    latest: dict[tuple[str, str], Row] = {}
    for row in rows:
        latest[row_key(row)] = row
    return {key: row for key, row in latest.items() if row.get("status") in FINAL}
