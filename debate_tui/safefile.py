"""Writing files safely: never half a file, never a file the person did not mean to replace.

Every write goes to a temporary file in the same directory, is fsynced, then
renamed over the target, so a crash or a full disk leaves the previous version
or the new one, never half of one, and no temporary file behind. A path the
person names (`--report`, `--session`, `export --out`) is checked first: an
existing file is replaced only with `--force`, and something that is not a
regular file (a directory, a device, a FIFO) never. A session being run is
locked (`SessionLock`), so a second writer is refused instead of running it twice.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from debate_tui.inputs import InputError


class TargetError(InputError):
    """A path that must not be written; the message is the one-line reason."""


def check_target(path: Path, *, force: bool, flag: str) -> Path:
    """The file to write for `path` (a symlink's target, so the link survives), or TargetError.

    The one check every file a person names for writing goes through (`--report`, `--session`, `--out`, the
    default report beside a session): an existing file needs `force`; a directory, device, FIFO, socket or a
    symbolic link to nothing is never replaced. Use `check_distinct` too when a command writes several files
    or reads some.
    """
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):  # absent (a directory that cannot be made is said when written)
        if path.is_symlink():  # a dangling link: writing would replace the link, not create its target
            raise TargetError(f"{flag} {path} is a symbolic link to {os.readlink(path)}, which does not exist; "
                              "it is never replaced") from None
        return path
    except OSError as exc:
        raise TargetError(f"{flag} {path}: cannot use it ({exc.strerror})") from None
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
        raise TargetError(f"{flag} {path} is {kind}, not a regular file; it is never replaced")
    if not force:
        raise TargetError(f"{flag} {path} exists; pass --force to overwrite it")
    return path.resolve()


def _identity(path: Path) -> tuple[int, int] | str:
    """What makes two paths one file: device and inode when it exists, else the resolved path."""
    try:
        found = path.stat()
        return found.st_dev, found.st_ino
    except OSError:
        return str(path.resolve())


def check_distinct(outputs: dict[str, Path], inputs: dict[str, Path] | None = None) -> None:
    """TargetError when two outputs are one file (`--session X --report X`) or an output is one of the command's
    inputs (`batch ITEMS --out ITEMS`): keys are the flags, as the message names them."""
    seen: dict[tuple[int, int] | str, str] = {}
    for flag, path in (inputs or {}).items():
        seen.setdefault(_identity(path), flag)
    for flag, path in outputs.items():
        other = seen.get(_identity(path))
        if other is not None:
            what = "an input" if other in (inputs or {}) else "another output"
            raise TargetError(f"{flag} {path} is the same file as {other} ({what}); give another path")
        seen[_identity(path)] = flag


def is_report_of(path: Path, session_id: str) -> bool:
    """Whether `path` is the Markdown report of that session (its header names it): the default report beside
    a session is replaced by a resume of that session without --force, anything else is not."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return False
        with path.open("rb") as handle:
            head = handle.read(2048).decode("utf-8", errors="replace")
    except OSError:
        return False
    return f"**Session:** `{session_id}`" in head


FULL = {errno.ENOSPC: "free some space there", errno.EDQUOT: "free some space there (your disk quota is used up)",
         errno.EROFS: "the file system is read-only"}
"""Write failures no retry fixes (a full disk, a used-up quota, a read-only file system) and what to do."""


def write_problem(exc: OSError, what: Path | str, remedy: str = "or write elsewhere") -> str:
    """One line for a write that failed: `what` ("the session file PATH"), the reason and, for a full or
    read-only disk, the remedy (`remedy`: how to write elsewhere, e.g. "or pass --out elsewhere")."""
    reason = exc.strerror or str(exc)
    if exc.errno in FULL:
        reason = f"{reason}: {FULL[exc.errno]}, {remedy}"
    elif exc.errno in (errno.EACCES, errno.EPERM):  # a read-only home: where to write instead
        reason = f"{reason}: {remedy.removeprefix('or ')}"
    return f"cannot write {what}: {reason}"


def disk_problem(exc: BaseException) -> OSError | None:
    """The full-disk, quota or read-only error behind `exc` (inside an exception group or a chain), if any:
    the failures the command line turns into one line wherever they happen."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in FULL:
            return current
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend((current.__cause__, current.__context__))
    return None


def write_atomic(path: Path, text: str | bytes) -> None:
    """Temporary file beside `path`, fsync, rename over it, fsync the directory; the temporary file is
    removed whatever fails. Text is written as UTF-8."""
    write_all_atomic([(path, text)])


def write_all_atomic(files: Sequence[tuple[Path, str | bytes]], *, durable: bool = True) -> None:
    """`write_atomic` for many files, each directory synced once for all its renames.

    `durable=False` skips the fsyncs: still never half a file after a crash of the process, but a power
    cut may lose the newest versions. For files that are only resume points (a batch's item sessions).
    """
    directories = list(dict.fromkeys(path.parent for path, _ in files))
    for directory in directories:
        directory.mkdir(parents=True, exist_ok=True)
    for path, text in files:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(text.encode("utf-8") if isinstance(text, str) else text)
                if durable:
                    handle.flush()
                    os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException as exc:
            Path(tmp).unlink(missing_ok=True)
            if isinstance(exc, OSError) and exc.filename is None:  # a failed write names no file: name the target
                raise OSError(exc.errno, exc.strerror, str(path)) from exc
            raise
    for directory in directories if durable else ():
        _sync_directory(directory)


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


_ELSEWHERE = "or point --session or --sessions-dir (DEBATE_TUI_SESSIONS_DIR) elsewhere"


class SessionLocked(InputError):
    """Another process is running this session; the message names it."""


class SessionLock:
    """An OS lock on a session while it runs, so two writers never run (and pay for) the same session.

    The lock is held on a hidden file beside the session (`.ID.json.lock`): the session file itself is
    replaced by every save, so a lock on it would not outlive the first save. The operating system
    releases it when the process ends, a crash or `kill -9` included; the file stays, unlocked.
    """

    def __init__(self, session_path: Path, name: str):
        self.path = session_path.with_name(f".{session_path.name}.lock")
        self.name = name
        self._handle: IO[str] | None = None

    def acquire(self) -> SessionLock:
        """Take the lock, or raise at once (never wait): SessionLocked, or InputError when the directory
        cannot be written (the run could not save anything there either)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - the open handle is the lock, until release()
        except OSError as exc:
            raise InputError(write_problem(exc, f"in {self.path.parent}", _ELSEWHERE)) from None
        try:
            lock_file(handle)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip()
            handle.close()
            raise SessionLocked(f"session {self.name} is being run by another process"
                                f"{f' (pid {holder})' if holder.isdigit() else ''}; not started twice") from None
        try:  # the pid helps a person see who holds it; a full disk refuses even that
            handle.truncate(0)
            handle.write(str(os.getpid()))
            handle.flush()
        except OSError as exc:
            unlock_file(handle)
            with contextlib.suppress(OSError):  # its buffer cannot be written either
                handle.close()
            raise InputError(write_problem(exc, self.path, _ELSEWHERE)) from None
        self._handle = handle
        return self

    def release(self) -> None:
        if self._handle is not None:
            self._handle.truncate(0)
            unlock_file(self._handle)
            self._handle.close()
            self._handle = None

    def __enter__(self) -> SessionLock:
        return self.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def held(session_path: Path) -> bool:
    """Whether a process holds the session's lock now: False when there is no lock file or it is free (the
    process that ran it is gone, a crash or `kill -9` included). Tried without creating or keeping anything."""
    try:
        handle = open(session_path.with_name(f".{session_path.name}.lock"), encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError:  # opened apart from the `with`: only a failed open means "no lock file"
        return False
    with handle:
        try:
            lock_file(handle)
        except OSError:
            return True
        unlock_file(handle)
        return False


def lock_file(handle: IO[str]) -> None:
    """Exclusive and non-blocking, OSError when held: msvcrt.locking on Windows, fcntl.flock on POSIX, and
    os.lockf where Python has no fcntl module (a per-process lock: enough to keep two processes apart)."""
    if sys.platform == "win32":
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        return
    try:
        import fcntl
    except ImportError:
        os.lockf(handle.fileno(), os.F_TLOCK, 0)
        return
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


def unlock_file(handle: IO[str]) -> None:
    if sys.platform == "win32":
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        return
    try:
        import fcntl
    except ImportError:
        os.lockf(handle.fileno(), os.F_ULOCK, 0)
        return
    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
