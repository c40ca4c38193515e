"""Reading the texts a person hands us, with one clear reason when we cannot."""

from __future__ import annotations

import os
import sys
from pathlib import Path

DEFAULT_MAX_CHARS = 200_000


class InputError(ValueError):
    """Bad input: the message is the one-line reason shown to the person."""


class ConfigError(InputError):
    """A configuration that cannot be used; each line names a setting and where its value came from.

    Defined here, not in `config` (which builds pydantic models), so the command line can catch it
    without importing pydantic before the TUI's first frame.
    """


def max_chars() -> int:
    configured = os.environ.get("DEBATE_TUI_MAX_TEXT_CHARS", "")
    try:
        return int(configured) if configured.strip() else DEFAULT_MAX_CHARS
    except ValueError:
        raise InputError("DEBATE_TUI_MAX_TEXT_CHARS must be a whole number of characters, "
                         f"not {configured!r}") from None


def decode_text(raw: bytes, what: str, warn=lambda message: None) -> str:
    """Bytes to text: refuse binary, replace invalid UTF-8 (with a warning), unify line endings.

    Line endings become "\\n" so that character offsets (located errors) mean the
    same on every platform; a UTF-8 byte-order mark is not part of the text.
    Everything else, control characters and escape sequences included, is kept
    as given: it is data, made inert only where it is displayed.
    """
    if b"\x00" in raw:
        raise InputError(f"{what} looks like a binary file (it contains NUL bytes)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8-sig", errors="replace")
        warn(f"{what} is not valid UTF-8 (first bad byte at offset {exc.start}); undecodable bytes were "
             "replaced with U+FFFD")
    return check_text(unify_line_endings(text), what)


def unify_line_endings(text: str) -> str:
    """Windows (CRLF) and old Mac (CR) line endings become LF; pasted text needs this as much as files."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def check_text(text: str, what: str) -> str:
    if not text.strip():
        raise InputError(f"{what} is empty")
    if len(text) > max_chars():
        raise InputError(f"{what} has {len(text):,} characters, over the limit of {max_chars():,} "
                         "(DEBATE_TUI_MAX_TEXT_CHARS)")
    return text


def read_text(ref: str, what: str, warn=lambda message: None) -> str:
    """Read a file path, or standard input for '-'."""
    if ref == "-":
        raw = sys.stdin.buffer.read()
    else:
        path = Path(ref).expanduser()
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise InputError(f"{what}: no such file {ref}") from None
        except IsADirectoryError:
            raise InputError(f"{what}: {ref} is a directory") from None
        except OSError as exc:
            raise InputError(f"{what}: cannot read {ref} ({exc.strerror})") from None
    return decode_text(raw, what, warn)
