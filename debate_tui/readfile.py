"""Reading every file the product reads: bounded, checked, and one line naming the file when it cannot.

Use it for any file a person, another process or a past run may have left for us (sessions, results,
TOML of every kind, ui-state, labels, the session index, batch input), never `Path.read_text`:

    from debate_tui.readfile import read_json, read_toml, read_text, jsonl_lines, parse_json
    data = read_json(path, "session")            # FileError (an InputError) naming the file and line
    table = read_toml(path, "toml")              # config.toml, criteria, personas, themes, key maps
    for number, line in jsonl_lines(read_text(path, "results")):
        row = parse_json(line, f"{path}:{number}")

What it guarantees, whatever the file is:
- The file type is checked before it is opened, and again on the open handle: a device (a symlink to
  /dev/zero), a FIFO, a socket or a directory is refused, never read.
- At most the kind's limit is read (`LIMITS`, each overridable by its environment variable, as
  DEBATE_TUI_MAX_TEXT_CHARS bounds a text): a larger file is refused by its size, unread.
- Every decoding failure, RecursionError from a deeply nested JSON or TOML file included, becomes a
  FileError whose message is one line naming the file (and the line, where there is one).
- JSON Lines are split at "\\n" only (`jsonl_lines`): a raw U+2028 inside a JSON string is valid JSON and
  no line break, which `str.splitlines()` would make one.

A missing file raises `MissingFile` (a FileError), so a caller to whom absence is normal catches that alone.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from debate_tui.refusal import ConfigError, InputError


class FileError(InputError):
    """A file that cannot be read as what it should be; the message is one line naming it."""


class MissingFile(FileError):
    """The file does not exist."""


class NotAFile(FileError):
    """The path is no regular file (nor a stream where one may be read): refused unread."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind
        """What it is, in words: "a directory", "a FIFO", "a socket", "a device"."""


class OverLimit(FileError):
    """The file is larger than its limit: refused by its size, unread."""

    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size


class CannotRead(FileError):
    """The system refused to open it (permissions, a dangling link, ...)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
        """The system's words, for a caller that names the file its own way."""


@dataclass(frozen=True)
class Limit:
    what: str
    """How the file is named in a message: "session file"."""
    variable: str
    """The environment variable that overrides the default."""
    default: int
    """Bytes read at most."""
    streams: bool = False
    """Whether a pipe or a character device may be read (bounded by the limit), as batch input may come from
    `<(zcat items.jsonl.gz)`; every other kind is a file, and anything else is refused unread."""


LIMITS: dict[str, Limit] = {
    "session": Limit("session file", "DEBATE_TUI_MAX_SESSION_BYTES", 512_000_000),
    "results": Limit("results file", "DEBATE_TUI_MAX_RESULTS_BYTES", 1_000_000_000),
    "toml": Limit("TOML file", "DEBATE_TUI_MAX_TOML_BYTES", 1_000_000),
    "ui-state": Limit("ui-state file", "DEBATE_TUI_MAX_UI_STATE_BYTES", 1_000_000),
    "labels": Limit("labels file", "DEBATE_TUI_MAX_LABELS_BYTES", 100_000_000),
    "index": Limit("session index", "DEBATE_TUI_MAX_INDEX_BYTES", 100_000_000),
    "batch": Limit("batch input", "DEBATE_TUI_MAX_BATCH_BYTES", 100_000_000, streams=True),
    "json": Limit("JSON file", "DEBATE_TUI_MAX_JSON_BYTES", 100_000_000),
}
"""Kind -> its bound. A session holds a debate's whole transcript (a 100 MB reply fits); a results
file a whole batch; configuration and state files are small, so a huge one is a mistake or an attack."""


def limit(kind: str) -> int:
    """The kind's bound in bytes: its environment variable when set, else the default."""
    bound = LIMITS[kind]
    configured = os.environ.get(bound.variable, "")
    try:
        value = int(configured) if configured.strip() else bound.default
    except ValueError:
        value = -1
    if value <= 0:
        raise InputError(f"{bound.variable} must be a positive whole number of bytes, not {configured!r}")
    return value


def _kind_of(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    return "a socket" if stat.S_ISSOCK(mode) else "a device"


def read_bytes(path: Path, kind: str) -> bytes:
    """The file's bytes, at most `limit(kind)`; FileError (MissingFile when absent) otherwise."""
    with opened(path, kind) as (handle, most, over):
        try:
            return read_bounded(handle, most, f"{path}: {over}; stopped reading there")
        except OSError as exc:
            raise FileError(f"{path}: cannot read ({exc.strerror or exc})") from None


def read_bounded(stream: BinaryIO, limit: int, refuse: str) -> bytes:
    """At most `limit` bytes of a file, a device or a pipe (/dev/zero, `yes |`): reading stops one byte
    past the limit, so memory and time stay bounded whatever the input is; FileError `refuse` beyond it."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise FileError(refuse)
    return data


@contextmanager
def opened(path: Path, kind: str) -> Iterator[tuple[BinaryIO, int, str]]:
    """The file open for reading once it is known to be what `kind` may read (a regular file, or a stream where
    the kind allows one) and no larger than its limit: (handle, limit in bytes, the words for "over the limit")."""
    bound = LIMITS[kind]
    most = limit(kind)
    over = f"over the limit of {most:,} bytes ({bound.variable}) for a {bound.what}"
    with open_checked(path, most, over, streams=bound.streams) as handle:
        yield handle, most, over


@contextmanager
def open_checked(path: Path, most: int, over: str, *, streams: bool) -> Iterator[BinaryIO]:
    """`path` open for reading once it is known to be a regular file of at most `most` bytes, or (`streams`) a
    FIFO or character device, which is read as far as the caller's bound. Refusals are FileErrors whose
    message names the path and whose fields (`NotAFile.kind`, `OverLimit.size`, `CannotRead.reason`) let a
    caller word them its own way; `over` is the words for "over the limit"."""
    try:
        found = os.stat(path)  # the type first: a FIFO would block an open, a device never ends
        other = _kind_of(found.st_mode)
        stream = streams and (stat.S_ISFIFO(found.st_mode) or stat.S_ISCHR(found.st_mode))
        if other is not None and not stream:
            raise NotAFile(f"{path}: is {other}, not a regular file; not read", other)
        nonblocking = 0 if stream else getattr(os, "O_NONBLOCK", 0)
        fd = os.open(path, os.O_RDONLY | nonblocking | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise MissingFile(f"{path}: cannot read (no such file)") from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise CannotRead(f"{path}: cannot read ({reason})", reason) from None
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(handle.fileno())  # swapped between the check and the open: checked again
        if (other := _kind_of(opened.st_mode)) is not None and not (stream and opened.st_mode == found.st_mode):
            raise NotAFile(f"{path}: is {other}, not a regular file; not read", other)
        if opened.st_size > most:
            raise OverLimit(f"{path}: {opened.st_size:,} bytes, {over}; not read", opened.st_size)
        yield handle


def decode(raw: bytes, where: str) -> str:
    """UTF-8 (a byte-order mark dropped), or FileError naming the first bad byte."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileError(f"{where}: not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None


def read_text(path: Path, kind: str) -> str:
    return decode(read_bytes(path, kind), str(path))


def parse_json(text: str, where: str) -> Any:
    """JSON, or FileError: "WHERE: not valid JSON (... at line L column C)", nesting too deep included."""
    return _parsed(json.loads, text, where, "JSON")


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """TOML, or FileError naming the line; nesting too deep included."""
    return _parsed(tomllib.loads, text, where, "TOML")


def _parsed(loads: Callable[[str], Any], text: str, where: str, what: str) -> Any:
    try:
        return loads(text)
    except RecursionError:
        raise FileError(f"{where}: not readable {what} (nested too deeply)") from None
    except ValueError as exc:  # json.JSONDecodeError and tomllib.TOMLDecodeError are ValueErrors
        detail = (f"{exc.msg} at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError)
                  else str(exc))
        raise FileError(f"{where}: not valid {what} ({detail})") from None


def read_json(path: Path, kind: str) -> Any:
    return parse_json(read_text(path, kind), str(path))


def read_toml(path: Path, kind: str = "toml") -> dict[str, Any]:
    return parse_toml(read_text(path, kind), str(path))


def read_config_bytes(path: Path) -> bytes | None:
    """config.toml's bytes, None when there is none; ConfigError naming the file when it cannot be read."""
    try:
        return read_bytes(path, "toml")
    except MissingFile:
        return None
    except InputError as exc:
        raise ConfigError(str(exc)) from None


def parse_config(path: Path, raw: bytes | None) -> dict[str, Any] | None:
    """config.toml's tables from its bytes (None: no file); ConfigError naming the file and line otherwise."""
    if raw is None:
        return None
    try:
        return parse_toml(decode(raw, str(path)), str(path))
    except InputError as exc:
        raise ConfigError(str(exc)) from None


def read_config(path: Path) -> dict[str, Any] | None:
    """config.toml's tables, None when there is none: the one reader of it, for the validated configuration
    (`config.files`) and for the TUI's first frame (`ui.opening`), which must not import pydantic."""
    return parse_config(path, read_config_bytes(path))


def jsonl_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number from 1, line) of every non-blank line, split at "\\n" only (a "\\r" before it dropped).

    Inside a JSON string U+2028, U+2029 and U+0085 may stand raw (only C0 controls must be escaped);
    `str.splitlines()` breaks at them too, and so cut a valid record in two."""
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if line.strip():
            yield number, line


def jsonl_value(line: str) -> Any:
    """One JSON Lines record, or FileError with the reason alone ("not valid JSON (... at column C)"): the
    caller puts the file and line before it."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise FileError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise FileError("not readable JSON (nested too deeply)") from None


def jsonl_records(text: str, where: str) -> Iterator[tuple[int, Any]]:
    """(line number, value) of every record, split by `jsonl_lines`; FileError "WHERE:N: reason" at the first
    line that is not JSON."""
    for number, line in jsonl_lines(text):
        try:
            yield number, jsonl_value(line)
        except FileError as exc:
            raise FileError(f"{where}:{number}: {exc}") from None


def jsonl_objects(text: str, where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of every record, as `jsonl_records` reads them; FileError "WHERE:N: expected a JSON
    object, got list" at the first record that is no object (a row of labels or judgments is one)."""
    for number, value in jsonl_records(text, where):
        if not isinstance(value, dict):
            raise FileError(f"{where}:{number}: expected a JSON object, got {type(value).__name__}")
        yield number, value
