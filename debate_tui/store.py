"""Session files: one JSON file per session, written atomically, read tolerantly.

A write goes to a temporary file in the same directory, is fsynced, then
renamed over the old one, so a crash leaves either the previous or the new
version, never half of one. A file that cannot be read is reported by name and
left untouched.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from debate_tui.config import load_config
from debate_tui.domain import SCHEMA_VERSION, Session

SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


class SessionFileError(Exception):
    """A session file or id that cannot be used; the message names it."""


def default_sessions_dir() -> Path:
    """DEBATE_TUI_SESSIONS_DIR, else `sessions_dir` in config.toml, else the platform's user data directory."""
    return load_config().sessions_dir


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_directory(path.parent)


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable: without this a power cut can undo it (POSIX; elsewhere a no-op)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # Windows cannot open a directory; its rename is durable enough
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


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
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Session.model_validate(migrate(data))
    except FileNotFoundError:
        raise SessionFileError(f"{path}: no such session file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SessionFileError(f"{path}: cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise SessionFileError(f"{path}: corrupt or truncated session file ({exc.msg} at line {exc.lineno})") from None
    except (ValidationError, ValueError) as exc:
        first = str(exc).splitlines()[0]
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


def summarize(session: Session, path: Path) -> SessionSummary:
    outcome = session.outcome
    result = ""
    if outcome is not None:
        if outcome.verdict is not None:
            result = f"verdict {outcome.verdict}"
        else:
            result = ", ".join(f"{k} {v:g}" if v is not None else f"{k} unscored" for k, v in outcome.scores.items())
    snippet = " ".join(session.task.text.split())[:60]
    return SessionSummary(path, session.id, session.created_at, session.protocol, session.status,
                          tuple(c.name for c in session.criteria), snippet, result)


class SessionStore:
    """The sessions directory: save by id, load by id or path, list everything readable."""

    def __init__(self, root: Path | None = None):
        self.root = root or default_sessions_dir()

    def path_for(self, session_id: str) -> Path:
        if not SESSION_ID.match(session_id) or ".." in session_id:
            raise SessionFileError(f"invalid session id {session_id!r}")
        return self.root / f"{session_id}.json"

    def save(self, session: Session) -> Path:
        path = self.path_for(session.id)
        write_session(path, session)
        return path

    def resolve(self, ref: str) -> Path:
        """An existing path, or the file of a session id in this store."""
        candidate = Path(ref).expanduser()
        if candidate.suffix == ".json" or os.sep in ref or candidate.exists():
            return candidate
        return self.path_for(ref)

    def load(self, ref: str) -> Session:
        return read_session(self.resolve(ref))

    def list(self) -> list[SessionSummary]:
        """Newest first; unreadable files are listed with their problem, not skipped."""
        rows: list[SessionSummary] = []
        if not self.root.is_dir():
            return rows
        for path in self.root.glob("*.json"):
            try:
                rows.append(summarize(read_session(path), path))
            except SessionFileError as exc:
                rows.append(SessionSummary(path, path.stem, problem=str(exc)))
        return sorted(rows, key=lambda r: r.id, reverse=True)

    def delete(self, ref: str) -> None:
        self.resolve(ref).unlink()
