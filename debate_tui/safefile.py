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


MAX_LOCK_BYTES = 256
"""A lock file holds one short line (who holds it); anything bigger at a lock's name is someone's file."""


class LockBusy(Exception):
    """Another process holds the lock; `holder` is what it wrote there (empty when it cannot be read)."""

    def __init__(self, holder: str):
        super().__init__(holder)
        self.holder = holder


class LockRefused(InputError):
    """What lies at a lock file's name is not a lock file this program may use (a link, someone's file)."""


def lock_beside(path: Path, hidden: bool) -> Path:
    """The lock file of `path`, named after the file it really is and beside it (`.ID.json.lock` when `hidden`,
    else `RESULTS.jsonl.lock`): a link to it, or a folder linked to its folder, takes the same lock, so two names
    of one file never run at once."""
    try:
        real = path.resolve()
    except OSError:  # the working directory is gone: the name as given is all there is
        real = path.absolute() if path.is_absolute() else path
    return real.with_name(f"{'.' if hidden else ''}{real.name}.lock")


class LockFile:
    """An OS lock held on a small file of its own, opened without following a link and never truncated unless it is
    one (a regular file with one name, at most MAX_LOCK_BYTES), and removed when released.

    The lock is the file's inode, and a releaser removes the file while still holding it: so after taking the lock
    the name is checked to be that inode still, else the file was removed in between and the new one is taken."""

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    def acquire(self, holder: str) -> None:
        """Take it at once or raise LockBusy (who holds it), LockRefused (not a lock file), or OSError (cannot be
        made). `holder` is written in it for the person a second process tells."""
        for _ in range(8):
            fd = _open_lock(self.path)
            try:
                lock_file(fd)
            except OSError:
                held_by = _read_small(fd)
                os.close(fd)
                raise LockBusy(held_by) from None
            if _names(fd, self.path):
                break
            unlock_file(fd)
            os.close(fd)
        else:
            raise LockBusy("")
        try:  # a full disk refuses even this line
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, holder.encode("utf-8", "replace"))
        except OSError:
            self._fd = fd
            self.release()
            raise
        self._fd = fd

    def release(self) -> None:
        """Remove the file (still holding it: no other process can have it then), then let go."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):  # Windows cannot remove an open file: it stays, unlocked
            if _names(fd, self.path):
                os.unlink(self.path)
        with contextlib.suppress(OSError):
            unlock_file(fd)
        os.close(fd)


def _open_lock(path: Path) -> int:
    """The lock file's descriptor: created when absent, never through a link, never a file that is not a lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) or path.is_symlink():
            raise LockRefused(f"{path} is a symbolic link (to {os.readlink(path)}); a lock file is never followed: "
                              "remove it to go on") from None
        raise
    found = os.fstat(fd)
    why = ("it is not a regular file" if not stat.S_ISREG(found.st_mode) else
           "it has other names (hard links)" if found.st_nlink > 1 else
           f"it holds {found.st_size} bytes" if found.st_size > MAX_LOCK_BYTES else None)
    if why is not None:
        os.close(fd)
        raise LockRefused(f"{path} is not a lock file of debate-tui ({why}); it is left as it is: remove it to go on")
    return fd


def _names(fd: int, path: Path) -> bool:
    """Whether `path` still names the file open as `fd` (its last holder may have removed it since it was opened)."""
    try:
        here, there = os.fstat(fd), os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _read_small(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return os.read(fd, MAX_LOCK_BYTES).decode("utf-8", "replace").strip()
    except OSError:  # Windows: the holder's locked byte cannot be read
        return ""


class SessionLock:
    """An OS lock on a session while it runs, so two writers never run (and pay for) the same session.

    The lock is held on a hidden file beside the session (`.ID.json.lock`, beside the file a link names): the
    session file itself is replaced by every save, so a lock on it would not outlive the first save. The operating
    system releases it when the process ends, a crash or `kill -9` included (the file then stays, unlocked); a
    clean end removes it.
    """

    def __init__(self, session_path: Path, name: str):
        self.path = session_lock_path(session_path)
        self.name = name
        self._lock = LockFile(self.path)

    def acquire(self) -> SessionLock:
        """Take the lock, or raise at once (never wait): SessionLocked, LockRefused (a link or someone's file at
        its name), or InputError when the directory cannot be written (the run could not save anything there)."""
        try:
            self._lock.acquire(str(os.getpid()))
        except LockBusy as exc:
            pid = f" (pid {exc.holder})" if exc.holder.isdigit() else ""
            raise SessionLocked(f"session {self.name} is being run by another process{pid}; "
                                "not started twice") from None
        except OSError as exc:
            where = self.path if exc.errno in FULL else f"in {self.path.parent}"
            raise InputError(write_problem(exc, where, _ELSEWHERE)) from None
        return self

    def release(self) -> None:
        self._lock.release()

    def __enter__(self) -> SessionLock:
        return self.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def session_lock_path(session_path: Path) -> Path:
    return lock_beside(session_path, hidden=True)


def held(session_path: Path) -> bool:
    """Whether a process holds the session's lock now: False when there is no lock file or it is free (the
    process that ran it is gone, a crash or `kill -9` included). Tried without creating, following or keeping
    anything."""
    try:
        fd = os.open(session_lock_path(session_path), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        lock_file(fd)
    except OSError:
        return True
    else:
        unlock_file(fd)
        return False
    finally:
        os.close(fd)


def lock_file(fd: int) -> None:
    """Exclusive and non-blocking, OSError when held: msvcrt.locking on Windows, fcntl.flock on POSIX, and
    os.lockf where Python has no fcntl module (a per-process lock: enough to keep two processes apart)."""
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        return
    try:
        import fcntl
    except ImportError:
        os.lseek(fd, 0, os.SEEK_SET)  # lockf locks from the offset on: always the whole file
        os.lockf(fd, os.F_TLOCK, 0)
        return
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def unlock_file(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    try:
        import fcntl
    except ImportError:
        os.lseek(fd, 0, os.SEEK_SET)
        os.lockf(fd, os.F_ULOCK, 0)
        return
    fcntl.flock(fd, fcntl.LOCK_UN)
