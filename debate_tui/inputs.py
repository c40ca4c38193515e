"""Reading the texts a person hands us, with one clear reason when we cannot."""

from __future__ import annotations

import codecs
import io
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from debate_tui.readfile import CannotRead, MissingFile, NotAFile, OverLimit, open_checked, read_bounded
from debate_tui.refusal import ConfigError as ConfigError  # re-exported: the command line catches it from here
from debate_tui.refusal import InputError

DEFAULT_MAX_CHARS = 200_000
BYTES_PER_CHAR = 4
"""The most a character can take (UTF-8 and UTF-32): a text within the character limit is never cut short
by the byte limit that bounds reading."""


def max_chars() -> int:
    configured = os.environ.get("DEBATE_TUI_MAX_TEXT_CHARS", "")
    try:
        return int(configured) if configured.strip() else DEFAULT_MAX_CHARS
    except ValueError:
        raise InputError("DEBATE_TUI_MAX_TEXT_CHARS must be a whole number of characters, "
                         f"not {configured!r}") from None


_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32", "utf-32"), (codecs.BOM_UTF32_BE, "UTF-32", "utf-32"),
         (codecs.BOM_UTF8, "UTF-8", "utf-8-sig"), (codecs.BOM_UTF16_LE, "UTF-16", "utf-16"),
         (codecs.BOM_UTF16_BE, "UTF-16", "utf-16"))
"""Byte-order marks and what they announce; UTF-32 LE's mark starts like UTF-16 LE's, so it is tried first."""


def _wide_without_bom(raw: bytes) -> str | None:
    """"UTF-16LE" or "UTF-16BE" when NUL bytes sit where mostly-ASCII UTF-16 text has them, else None."""
    sample = raw[:4096]
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    if len(sample) >= 4 and odd >= len(sample) // 4 and even == 0:
        return "UTF-16LE"
    if len(sample) >= 4 and even >= len(sample) // 4 and odd == 0:
        return "UTF-16BE"
    return None


def decode_text(raw: bytes, what: str, warn: Callable[[str], None] = lambda message: None) -> str:
    """Bytes to text: UTF-8, or UTF-8/16/32 with a byte-order mark; refuse binary, replace invalid UTF-8
    (with a warning), unify line endings.

    Line endings become "\\n" so that character offsets (located errors) mean the
    same on every platform; a byte-order mark is not part of the text.
    Everything else, control characters and escape sequences included, is kept
    as given: it is data, made inert only where it is displayed.
    """
    for bom, name, codec in _BOMS:
        if raw.startswith(bom) and codec != "utf-8-sig":
            try:
                return check_text(unify_line_endings(raw.decode(codec)), what)
            except UnicodeDecodeError as exc:
                raise InputError(f"{what} starts with a {name} byte-order mark but is not valid {name} "
                                 f"(bad bytes at offset {exc.start})") from None
    if b"\x00" in raw:
        wide = _wide_without_bom(raw)
        if wide:
            raise InputError(f"{what} looks like {wide} text without a byte-order mark: save it as UTF-8 "
                             "(or as UTF-16 with its byte-order mark)")
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


def max_text_bytes() -> int:
    """Bytes read of a text at most (a byte-order mark and the character limit's widest encoding)."""
    return max_chars() * BYTES_PER_CHAR + 4


def standard_input(what: str, limit: int) -> BinaryIO:
    """Standard input as bytes (at most `limit` and one more, read now, from a text stream without a buffer), or
    InputError when the process was started with it closed (`<&-`)."""
    if sys.stdin is None:
        raise InputError(f"{what}: standard input is closed; give a file, or pipe the text in")
    buffer: BinaryIO | None = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a test (or an embedding program) may hand a text stream without a buffer
        return io.BytesIO(sys.stdin.read(limit + 1).encode("utf-8"))
    return buffer


def utf8_name(ref: str, what: str) -> str:
    """`ref` when it is valid UTF-8; a name that is not (its bytes came through as surrogates) cannot be kept in a
    session file, a report or a JSON line, so it is refused at once, shown with its bytes escaped."""
    try:
        ref.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(ref).decode("ascii", "backslashreplace")
        raise InputError(f"{what}: the file name {shown} is not valid UTF-8; rename the file (or pass it on "
                         "standard input: - < FILE)") from None
    return ref


def read_text(ref: str, what: str, warn: Callable[[str], None] = lambda message: None) -> str:
    """Read a file path, or standard input for '-', up to `max_text_bytes()`.

    A path is opened by `readfile.open_checked` as a stream may be (`--text <(cmd)`, /dev/stdin): a FIFO or
    a character device is read up to the limit, a directory, socket or block device refused unread."""
    limit = max_text_bytes()
    over = (f"{what}: {'standard input' if ref == '-' else ref} is over the limit of {max_chars():,} characters "
            "(DEBATE_TUI_MAX_TEXT_CHARS)")
    stopped = f"{over}; stopped reading after {limit:,} bytes"
    if ref == "-":
        raw = read_bounded(standard_input(what, limit), limit, stopped)
    else:
        path = Path(utf8_name(ref, what)).expanduser()
        try:
            with open_checked(path, limit, over, streams=True) as handle:
                raw = read_bounded(handle, limit, stopped)
        except MissingFile:
            raise InputError(f"{what}: no such file {ref}") from None
        except NotAFile as exc:
            raise InputError(f"{what}: {ref} is a directory" if exc.kind == "a directory"
                             else f"{what}: {ref} is {exc.kind}, not a regular file; not read") from None
        except OverLimit as exc:
            raise InputError(f"{over}: {exc.size:,} bytes, not read") from None
        except CannotRead as exc:
            raise InputError(f"{what}: cannot read {ref} ({exc.reason})") from None
        except OSError as exc:  # while reading
            raise InputError(f"{what}: cannot read {ref} ({exc.strerror})") from None
    return decode_text(raw, what, warn)


def check_api_base(url: str, what: str) -> str:
    """Refuse credentials inside an API base URL (`https://user:key@host`): they would be saved with the
    session and the settings, and printed with every error. Keys belong in environment variables."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s]*@", url.strip()):
        raise InputError(f"{what}: the URL holds credentials (user:key@host); put the key in an environment "
                         "variable instead (the provider's usual one, or api_key_env in config.toml)")
    return url
