"""Session files: one JSON file per session, written atomically, read tolerantly.

A write goes to a temporary file in the same directory, is fsynced, then
renamed over the old one, so a crash leaves either the previous or the new
version, never half of one. A file that cannot be read is reported by name and
left untouched.

Listing reads only what changed: each directory's summaries are kept in an
index (a cache, see `SummaryIndex`), so opening the list with a thousand
sessions costs a directory scan, not a thousand parsed files.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from debate_tui.domain import SCHEMA_VERSION, Session
from debate_tui.inputs import InputError
from debate_tui.readfile import FileError, MissingFile, read_json, read_text
from debate_tui.safefile import held, write_atomic

SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


class SessionFileError(Exception):
    """A session file or id that cannot be used; the message names it."""


Migration = Callable[[dict[str, Any]], dict[str, Any]]
MIGRATIONS: dict[int, Migration] = {}
"""Schema version N -> a function turning a version-N file's data into version N+1's. When
SCHEMA_VERSION goes up, the step from the old version is added here; the file itself is
rewritten in the new version only by the next save, so reading never changes it."""


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Bring an older session file's data up to SCHEMA_VERSION, one version at a time."""
    if not isinstance(data, dict):
        raise ValueError("the file holds JSON, but not a session object")
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or version < 1:
        raise ValueError(f"schema_version {version!r} is not a version number")
    if version > SCHEMA_VERSION:
        raise ValueError(f"written by a newer debate-tui (schema {version}, this one reads up to {SCHEMA_VERSION})")
    while version < SCHEMA_VERSION:
        if version not in MIGRATIONS:
            raise ValueError(f"no migration from schema {version}")
        data = {**MIGRATIONS[version](data), "schema_version": version + 1}
        version += 1
    return data


def read_session(path: Path) -> Session:
    """The session in `path`, read through `readfile` (bounded, never a device or FIFO), or SessionFileError
    whose message is one line naming the file."""
    try:
        text = read_text(path, "session")
    except MissingFile:
        raise SessionFileError(f"{path}: no such session file") from None
    except FileError as exc:
        raise SessionFileError(str(exc)) from None
    try:
        data = json.loads(text)
        return Session.model_validate(migrate(data))
    except json.JSONDecodeError as exc:
        raise SessionFileError(f"{path}: corrupt or truncated session file ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise SessionFileError(f"{path}: not a readable session file (nested too deeply)") from None
    except (ValidationError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SessionFileError(f"{path}: not a valid session file ({first})") from None


def write_session(path: Path, session: Session) -> None:
    write_atomic(path, session.model_dump_json(indent=1))


@dataclass(frozen=True)
class SessionSummary:
    """One row of the sessions list; `problem` is set for a file that could not be read."""

    path: Path
    id: str
    created_at: datetime | None = None
    protocol: str = ""
    status: str = ""
    criteria: tuple[str, ...] = ()
    snippet: str = ""
    result: str = ""
    problem: str | None = None
    forked_from: tuple[str, int] | None = None
    """A fork's original id and the turns copied from it (`Session.forked_from`); None: not a fork."""
    model: str = ""
    """The agents' models, each once ("gpt-4o-mini, demo"): what tells two runs on one text apart."""

    @property
    def batch(self) -> bool:
        """Written by `batch` (its ids are content hashes, not times)."""
        return self.id.startswith("batch-")

    @property
    def shown_status(self) -> str:
        """The status, except that a run saved as running whose process is gone (its lock is free) is
        "interrupted": it stopped without saying so, and can be resumed."""
        return "interrupted" if self.status == "running" and not held(self.path) else self.status


def _summary_data(summary: SessionSummary) -> dict[str, Any]:
    """A row as the index keeps it (its path is where the index found it)."""
    return {"id": summary.id, "created_at": summary.created_at.isoformat() if summary.created_at else None,
            "protocol": summary.protocol, "status": summary.status, "criteria": list(summary.criteria),
            "snippet": summary.snippet, "result": summary.result, "problem": summary.problem,
            "forked_from": list(summary.forked_from) if summary.forked_from else None, "model": summary.model}


def _summary_from(path: Path, data: dict[str, Any]) -> SessionSummary:
    created = data.get("created_at")
    origin = data.get("forked_from")
    return SessionSummary(path, str(data["id"]), listed_time(datetime.fromisoformat(created)) if created else None,
                          data.get("protocol", ""), data.get("status", ""), tuple(data.get("criteria", ())),
                          data.get("snippet", ""), data.get("result", ""), data.get("problem"),
                          (str(origin[0]), int(origin[1])) if origin else None, str(data.get("model", "")))


def summarize_file(path: Path) -> SessionSummary:
    """A file's row: read and validated in full, or its problem."""
    try:
        return summarize(read_session(path), path)
    except SessionFileError as exc:
        return SessionSummary(path, path.stem, problem=str(exc))


class SummaryIndex:
    """The summaries of one sessions directory, each valid while its file's size, mtime and inode match.

    Reading and validating every file cost about 0.4 ms a session, so a list of
    a thousand took 0.4 s; with the index only new or changed files are read.
    No save has to update it: a save replaces the file (a new inode and mtime),
    so the next listing sees the change, whoever saved (the TUI, a batch in
    another process, a copy by hand). It is a cache kept in the user's cache
    directory, not beside the sessions (the shipped examples stay untouched):
    lost, corrupt or unwritable, it is rebuilt or skipped, never trusted over
    the files. Unreadable files are indexed with their problem, so they are not
    parsed again until they change.
    """

    def __init__(self, root: Path, directory: Path):
        name = hashlib.sha256(os.fsencode(root.resolve())).hexdigest()[:24]  # a name's bytes, UTF-8 or not
        self.path = directory / f"{name}.json"

    def read(self) -> dict[str, Any]:
        try:
            data = read_json(self.path, "index")
        except InputError:  # FileError, or a bad limit in the environment: read the files instead
            return {}
        return data if isinstance(data, dict) and data.get("version") == INDEX_VERSION else {}

    def write(self, entries: dict[str, Any]) -> None:
        replace_cache(self.path, {"version": INDEX_VERSION, "entries": entries})


def replace_cache(path: Path, data: dict[str, Any]) -> None:
    """Replace a cache file atomically; no fsync, and a failure is ignored: losing a cache costs one slow listing
    (or, for `Elsewhere`, a file not listed), nothing else."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".index.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False)
        os.replace(tmp, path)
    except OSError:
        Path(locals().get("tmp", path.with_suffix(".none"))).unlink(missing_ok=True)


class Elsewhere:
    """The session files runs of this store wrote outside its directory (`run --session story.json`), so that
    every run is listed (`sessions`, the TUI's list) and found by its id. Kept beside the summary index; a file
    that is gone, or is no longer a session of that id, is dropped at the next listing."""

    def __init__(self, root: Path, directory: Path):
        name = hashlib.sha256(os.fsencode(root.resolve())).hexdigest()[:24]
        self.path = directory / f"{name}.elsewhere.json"

    def read(self) -> dict[Path, str]:
        """Each remembered file with the id of the session written there."""
        try:
            data = read_json(self.path, "index")
        except InputError:
            return {}
        files = data.get("files") if isinstance(data, dict) else None
        if not isinstance(files, dict):
            return {}
        return {Path(path): ident for path, ident in files.items() if isinstance(ident, str)}

    def write(self, files: dict[Path, str]) -> None:
        replace_cache(self.path, {"files": {str(path): ident for path, ident in files.items()}})


INDEX_VERSION = 3
"""Bumped when a summary's fields change, so older indexes are rebuilt (2: `forked_from`, 3: `model`)."""


def summarize(session: Session, path: Path) -> SessionSummary:
    outcome = session.outcome
    result = ""
    if outcome is not None:
        if outcome.verdict is not None:
            result = f"verdict {outcome.verdict}"
        else:
            result = ", ".join(f"{k} {v:g}" if v is not None else f"{k} unscored" for k, v in outcome.scores.items())
    snippet = " ".join(session.task.text.split())[:60]
    origin = session.forked_from
    return SessionSummary(path, session.id, listed_time(session.created_at), session.protocol, session.status,
                          tuple(c.name for c in session.criteria), snippet, result,
                          forked_from=(origin.session, origin.turns) if origin else None,
                          model=", ".join(dict.fromkeys(agent.model for agent in session.agents)))


def listed_time(when: datetime) -> datetime | None:
    """A session's date as a listing sorts it: one without a time zone is UTC (as this program writes them); one
    no clock can place (0001-01-01 without a zone is "year 0" in UTC-minus zones) is unknown, so the session is
    listed last with "?" instead of ending the whole listing."""
    aware = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    try:
        aware.timestamp()
    except (ValueError, OverflowError):
        return None
    return aware


def newest_first(summary: SessionSummary) -> tuple[bool, float]:
    """Interactive sessions before batch items, each newest first (an unreadable file's date is unknown: last)."""
    return summary.batch, -(summary.created_at.timestamp() if summary.created_at else float("-inf"))


class SessionStore:
    """The sessions directory: save by id, load by id or path, list everything readable."""

    def __init__(self, root: Path, index_dir: Path | None = None):
        """`index_dir` holds the listing's index (the configuration's `session-index` in the cache directory, see
        `Config.session_store`); None: no index, every listing reads the files."""
        self.root = root
        self.index_dir = index_dir

    def path_for(self, session_id: str) -> Path:
        if not SESSION_ID.match(session_id) or ".." in session_id:
            raise SessionFileError(f"invalid session id {session_id!r}")
        return self.root / f"{session_id}.json"

    def save(self, session: Session) -> Path:
        path = self.path_for(session.id)
        write_session(path, session)
        return path

    def resolve(self, ref: str) -> Path:
        """An existing path, or the file of a session id in this store (else a remembered file of that id
        written elsewhere, see `remember`)."""
        candidate = Path(ref).expanduser()
        if candidate.suffix == ".json" or os.sep in ref or candidate.exists():
            return candidate
        own = self.path_for(ref)
        if not own.exists() and self.index_dir is not None:
            return next((path for path, ident in Elsewhere(self.root, self.index_dir).read().items() if ident == ref),
                        own)
        return own

    def remember(self, path: Path, session_id: str) -> None:
        """A session file written outside this store's directory (`run --session PATH`): listed with the store's
        own from now on, while it exists. Nothing is kept without an index directory."""
        if self.index_dir is None:
            return
        absolute = path.absolute()
        if absolute.parent.resolve() == self.root.resolve():
            return
        elsewhere = Elsewhere(self.root, self.index_dir)
        known = elsewhere.read()
        if known.get(absolute) != session_id:
            elsewhere.write({**known, absolute: session_id})

    def _elsewhere(self) -> list[SessionSummary]:
        """The remembered files still there and still sessions; the others are forgotten."""
        if self.index_dir is None:
            return []
        elsewhere = Elsewhere(self.root, self.index_dir)
        known = elsewhere.read()
        rows = [summarize_file(path) for path in known if path.is_file()]
        kept = [row for row in rows if row.problem is None and known[row.path] == row.id]
        if len(kept) != len(known):
            elsewhere.write({row.path: row.id for row in kept})
        return kept

    def load(self, ref: str) -> Session:
        return read_session(self.resolve(ref))

    def list(self, newest: int | None = None) -> list[SessionSummary]:
        """Interactive sessions newest first, then batch items newest first (`newest_first`); unreadable
        files are listed with their problem, not skipped. `newest`: only that many (a first screenful),
        the files past them neither read nor looked at: picked by file name (an interactive session's file
        is named after its id, which starts with its time; batch items' names are hashes, so they come after).

        Files whose size, mtime and inode match the index are not read (see SummaryIndex). The session files
        written elsewhere (`remember`, a few) are listed too, read each time, `newest` or not.
        """
        if not self.root.is_dir():  # no session saved here yet; some may have been written elsewhere
            return sorted(self._elsewhere(), key=newest_first)
        with os.scandir(self.root) as scan:
            found = sorted((entry for entry in scan  # a device, FIFO or dangling link too: listed as unreadable
                            if not entry.name.startswith(".") and entry.name.endswith(".json") and not entry.is_dir()),
                           key=lambda entry: (not entry.name.startswith("batch-"), entry.name), reverse=True)
        index = SummaryIndex(self.root, self.index_dir) if self.index_dir is not None else None
        known = index.read().get("entries", {}) if index is not None else {}
        entries: dict[str, Any] = {entry.name: known[entry.name] for entry in found if entry.name in known}
        rows: list[SessionSummary] = []
        for entry in found[:newest]:
            path = self.root / entry.name
            try:
                stat = entry.stat()
                stamp: list[int] | None = [stat.st_size, stat.st_mtime_ns, stat.st_ino] if entry.is_file() else None
            except OSError:  # a dangling link
                stamp = None
            cached = known.get(entry.name)
            summary = None
            if isinstance(cached, dict) and cached.get("stamp") == stamp:
                with contextlib.suppress(KeyError, TypeError, ValueError, IndexError):  # a damaged entry: read the file
                    summary = _summary_from(path, cached["row"])
            if summary is None:
                summary = summarize_file(path)
                if stamp is not None:  # a regular file: remembered until it changes
                    entries[entry.name] = {"stamp": stamp, "row": _summary_data(summary)}
            rows.append(summary)
        changed = entries.keys() != known.keys() or any(entries[name] is not known[name] for name in entries)
        if index is not None and changed:
            index.write(entries)
        return sorted(rows + self._elsewhere(), key=newest_first)

    def delete(self, ref: str) -> None:
        self.resolve(ref).unlink()
