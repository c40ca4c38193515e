"""Batch input: one JSON object a line, checked in full before the first call.

    {"id", "text", "text_b"?, "source"?, "context"?, "group"?,
     "human"?: {criterion: number}, "human_verdict"?: "1"|"2"|"0", "errors"?: [...]}

A batch that dies on line 4,000 after an hour of calls is worse than one that
refuses at once, so every line is read and validated first, and the first
problem is reported with its line number.

Streamed. A regular file is not held in memory: `open_items` checks it a line
at a time and keeps only the ids (for duplicates, --limit and --shard), and
`ItemFile` reads it again, a line at a time, whenever the items are walked; so
memory stays flat however long the input is. Standard input, a pipe or a
device cannot be read twice: it is read whole (bounded), as before.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from debate_tui.domain import Task, Verdict
from debate_tui.inputs import InputError, check_text, read_bounded, standard_input
from debate_tui.readfile import FileError, decode, jsonl_lines, jsonl_value, limit, opened, read_text
from debate_tui.textsafe import one_line

VERDICTS = ("1", "2", "0")
TEXT_FIELDS = ("text", "text_b", "source", "context")


@dataclass(frozen=True)
class Item:
    """One thing to judge, with the human judgments it will be compared with."""

    id: str
    task: Task
    line: int
    group: str | int | None = None
    human: dict[str, float] = field(default_factory=dict)
    human_verdict: Verdict | None = None
    human_errors: list[Any] | None = None
    """MATEval's annotated error locations, passed through for `meta`'s error-location check."""


def max_input_bytes() -> int:
    """DEBATE_TUI_MAX_BATCH_BYTES, else 100 MB: an endless input (/dev/zero, `yes |`) is refused, not read."""
    return limit("batch")


def read_items(ref: str | Path) -> list[Item]:
    """All items of a JSONL file ('-': standard input, which may be a pipe), read up to `max_input_bytes()`
    through `readfile` (a path: never a device or FIFO); raises InputError naming the first bad line."""
    if str(ref) != "-":
        return parse_items(read_text(Path(ref), "batch"), str(ref))
    most = max_input_bytes()
    over = f"{ref}: over the limit of {most:,} bytes (DEBATE_TUI_MAX_BATCH_BYTES); stopped reading there"
    try:
        raw = read_bounded(standard_input(str(ref), most), most, over)
    except OSError as exc:
        raise InputError(f"standard input: cannot read ({exc.strerror or exc})") from None
    return parse_items(decode(raw, "<stdin>"), "<stdin>")


@dataclass(frozen=True)
class ItemFile:
    """The items of a checked input file (`open_items`), read from the file each time they are walked."""

    path: Path
    keep: frozenset[str]
    """The ids walked: every item's, or those of a --limit, a --shard, a worker's part."""

    def __iter__(self) -> Iterator[Item]:
        for number, raw in file_lines(self.path):
            try:
                item = parse_item(raw, number)
            except InputError as exc:  # it was checked before the batch began
                raise InputError(f"{self.path}:{number}: changed while the batch ran: {exc}") from None
            if item.id in self.keep:
                yield item

    def only(self, ids: Collection[str]) -> ItemFile:
        return ItemFile(self.path, frozenset(ids))


Items = list[Item] | ItemFile
"""A batch's items: in memory (standard input, a pipe, a test), or walked from their file."""


def only(items: Items, ids: Collection[str]) -> Items:
    """The items whose id is among `ids`, in input order."""
    if isinstance(items, ItemFile):
        return items.only(ids)
    wanted = set(ids)
    return [item for item in items if item.id in wanted]


def ids_of(items: Items) -> Iterable[str]:
    """The items' ids, without walking a file (planning needs nothing else)."""
    return items.keep if isinstance(items, ItemFile) else (item.id for item in items)


def first(items: Iterable[Item]) -> Item:
    return next(iter(items))


def open_items(ref: str | Path) -> tuple[Items, list[str]]:
    """The input's items and their ids in input order, every line checked (`parse_item`, duplicate ids): a
    regular file is read a line at a time and only its ids are kept; anything else is read whole. InputError
    names the first bad line."""
    path = Path(ref)
    if str(ref) == "-" or not path.is_file():
        items = read_items(ref)
        return items, [item.id for item in items]
    ids = [item.id for item in checked(file_lines(path), str(ref))]
    return ItemFile(path, frozenset(ids)), ids


def file_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(number, line) of a batch input file's non-blank lines, one line in memory at a time: split at "\\n"
    only, a "\\r" before it dropped, UTF-8 (a byte-order mark dropped), at most `max_input_bytes()` in all."""
    with opened(path, "batch") as (handle, most, over):
        offset = 0
        for number, raw in enumerate(handle, start=1):
            if offset + len(raw) > most:
                raise FileError(f"{path}: {over}; stopped reading there")
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw, offset = raw[3:], 3
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise FileError(f"{path}: not UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
                                f"{offset + exc.start})") from None
            offset += len(raw)
            line = line.removesuffix("\n").removesuffix("\r")
            if line.strip():
                yield number, line


def parse_items(text: str, path: str) -> list[Item]:
    return list(checked(jsonl_lines(text), path))


def checked(lines: Iterable[tuple[int, str]], path: str) -> Iterator[Item]:
    """Each line's item; InputError "PATH:N: ..." at the first bad line or duplicate id, or when there is none."""
    seen: dict[str, int] = {}
    for number, raw in lines:
        try:
            item = parse_item(raw, number)
        except InputError as exc:
            raise InputError(f"{path}:{number}: {exc}") from None
        if item.id in seen:
            raise InputError(f"{path}:{number}: duplicate id {item.id!r} (first on line {seen[item.id]})")
        seen[item.id] = number
        yield item
    if not seen:
        raise InputError(f"{path}: no items")


def parse_item(raw: str, line: int) -> Item:
    data = jsonl_value(raw)
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, got {type(data).__name__}")
    ident = data.get("id")
    if isinstance(ident, bool) or not isinstance(ident, str | int) or str(ident).strip() == "":
        raise InputError("missing 'id' (a non-empty string or integer)")
    texts: dict[str, str | None] = {}
    for name in TEXT_FIELDS:
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            raise InputError(f"'{name}' must be a string")
        texts[name] = value
    if texts["text"] is None:
        raise InputError("missing 'text'")
    for name in ("text", "text_b"):
        if (value := texts[name]) is not None:
            check_text(value, f"'{name}'")
    group = data.get("group")
    if group is not None and (isinstance(group, bool) or not isinstance(group, str | int)):
        raise InputError("'group' must be a string or integer")
    return Item(
        id=str(ident), task=Task.model_validate(texts), line=line, group=group,
        human=_human_scores(data.get("human")), human_verdict=_verdict(data.get("human_verdict")),
        human_errors=_errors(data.get("errors")),
    )


def _human_scores(value: Any) -> dict[str, float]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError("'human' must be an object {criterion: number}")
    scores: dict[str, float] = {}
    for name, score in value.items():
        try:
            one_line(str(name))  # a criterion's name, printed in one-line fields (meta's table)
        except ValueError as exc:
            raise InputError(f"'human': criterion {exc}") from None
        if score is None:
            continue
        if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
            raise InputError(f"'human.{name}' must be a number, got {score!r}")
        scores[str(name)] = score
    return scores


def _verdict(value: Any) -> Verdict | None:
    if value is None:
        return None
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if text not in VERDICTS:
        raise InputError(f"'human_verdict' must be \"1\", \"2\" or \"0\", got {value!r}")
    return cast(Verdict, text)


def _errors(value: Any) -> list[Any] | None:
    if value is not None and not isinstance(value, list):
        raise InputError("'errors' must be a list")
    return value
