"""A user's own labelled file (CSV or JSONL) as batch input lines, and as labels to join with results.

Columns are named by the user (`Columns`); the output lines have the shape of
the built-in data sets (see `datasets`), so `batch` and `meta` treat them
alike. Every problem is a `LabelsError` whose message is the one line the
user sees: the file, the row, the column and what was wrong.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from debate_tui.inputs import InputError
from debate_tui.readfile import jsonl_objects, read_text

Line = dict[str, Any]
VERDICTS = ("1", "2", "0")
SUFFIXES = {".csv": ",", ".tsv": "\t", ".jsonl": None, ".ndjson": None}


class LabelsError(ValueError):
    """The labelled file cannot be used; the message is the one-line reason."""


@dataclass(frozen=True)
class Columns:
    """Which column holds what; None leaves that field out (`id` None: the row number, from 1)."""

    text: str | None = "text"
    text_b: str | None = None
    source: str | None = None
    id: str | None = None
    human: dict[str, str] = field(default_factory=dict)
    """criterion -> column of its human score."""
    human_verdict: str | None = None
    group: str | None = None


def is_table(name: str) -> bool:
    """Whether `name` is a path this module reads (by its suffix), rather than a built-in data set's name."""
    return Path(name).suffix.lower() in SUFFIXES


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The file's records (CSV/TSV by header, JSONL one object a line); raises LabelsError."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise LabelsError(f"{path}: give a .csv, .tsv or .jsonl file")
    try:
        text = read_text(path, "labels")  # bounded (DEBATE_TUI_MAX_LABELS_BYTES), never a device or FIFO
    except InputError as exc:
        raise LabelsError(f"{exc}; save it as UTF-8" if "not UTF-8" in str(exc) else str(exc)) from None
    if not text.strip():
        raise LabelsError(f"{path}: empty file")
    delimiter = SUFFIXES[suffix]
    rows = _csv_rows(path, text, delimiter) if delimiter else _jsonl_rows(path, text)
    if not rows:
        raise LabelsError(f"{path}: no rows below the header")
    return rows


def _csv_rows(path: Path, text: str, delimiter: str) -> list[dict[str, Any]]:
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows: list[dict[str, Any]] = []
    ended = 0  # the line the last whole record (the header first) ended on
    try:
        if reader.fieldnames is not None:
            ended = reader.line_num
        for row in reader:
            rows.append(row)
            ended = reader.line_num
    except csv.Error as exc:  # strict: a quote left open swallowed every line after it (unstrict, silently)
        if "unexpected end of data" in str(exc):
            raise LabelsError(f"{path}:{ended + 1}: a quoted field opened on this record is never closed (every "
                              "line after it would be read as one field); close the quote") from None
        raise LabelsError(f"{path}:{ended + 1}: not a readable CSV ({exc})") from None
    header = reader.fieldnames or []
    if len(set(header)) != len(header):
        twice = sorted({h for h in header if header.count(h) > 1})
        raise LabelsError(f"{path}: the header names a column twice: {', '.join(twice)}")
    return rows


def _jsonl_rows(path: Path, text: str) -> list[dict[str, Any]]:
    try:
        return [row for _, row in jsonl_objects(text, str(path))]
    except InputError as exc:
        raise LabelsError(str(exc)) from None


def _present(rows: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(row))
    return [str(k) for k in seen if k is not None]


def check_columns(path: Path, rows: list[dict[str, Any]], columns: Columns) -> None:
    """Raise LabelsError naming the first asked-for column the file does not have, and the ones it has."""
    wanted = [("--text", columns.text), ("--text-b", columns.text_b), ("--source", columns.source),
              ("--id", columns.id), ("--human-verdict", columns.human_verdict), ("--group", columns.group)]
    wanted += [(f"--human {c}={col}", col) for c, col in columns.human.items()]
    present = _present(rows)
    for flag, name in wanted:
        if name is not None and name not in present:
            raise LabelsError(f"{path}: no column {name!r} ({flag}); columns present: {', '.join(present)}")


def _number(path: Path, number: int, column: str, value: Any) -> float | None:
    """A human score: a number, None for an empty cell; anything else is an error naming row and value."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        score = math.nan
    elif isinstance(value, int | float):
        score = float(value)
    else:
        try:
            score = float(str(value).strip())
        except ValueError:
            score = math.nan
    if not math.isfinite(score):
        raise LabelsError(f"{path}: row {number}: column {column!r} holds {value!r}, not a number")
    return score


def _verdict(path: Path, number: int, column: str, value: Any) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip()
    if text not in VERDICTS:
        raise LabelsError(f"{path}: row {number}: column {column!r} holds {value!r}; "
                          "a verdict is 1 (text wins), 2 (text_b wins) or 0 (a tie)")
    return text


def _text(path: Path, number: int, column: str, value: Any, required: bool) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise LabelsError(f"{path}: row {number}: column {column!r} is empty")
        return None
    if not isinstance(value, str):
        raise LabelsError(f"{path}: row {number}: column {column!r} holds {value!r}, not text")
    return value


def _ident(path: Path, number: int, row: dict[str, Any], column: str | None) -> str | int:
    if column is None:
        return number
    value = row.get(column)
    if value is None or isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        raise LabelsError(f"{path}: row {number}: id column {column!r} holds {value!r}; "
                          "an id is a non-empty string or integer")
    return value


def to_lines(path: Path, rows: list[dict[str, Any]], columns: Columns) -> list[Line]:
    """Batch input lines from the rows; ids must be unique, labels numeric, texts present."""
    check_columns(path, rows, columns)
    lines: list[Line] = []
    for number, row in enumerate(rows, start=1):
        line: Line = {"id": _ident(path, number, row, columns.id)}
        for key, column in (("text", columns.text), ("text_b", columns.text_b), ("source", columns.source)):
            if column is not None and (value := _text(path, number, column, row.get(column), key == "text")):
                line[key] = value
        if columns.group is not None and (group := row.get(columns.group)) not in (None, ""):
            line["group"] = group if isinstance(group, str | int) and not isinstance(group, bool) else str(group)
        human = {c: score for c, col in columns.human.items()
                 if (score := _number(path, number, col, row.get(col))) is not None}
        if human:
            line["human"] = human
        if columns.human_verdict is not None and (
            verdict := _verdict(path, number, columns.human_verdict, row.get(columns.human_verdict))
        ):
            line["human_verdict"] = verdict
        lines.append(line)
    return lines


def load_table(path: str | Path, columns: Columns) -> list[Line]:
    """A user's labelled file as batch input lines."""
    path = Path(path)
    lines = to_lines(path, read_rows(path), columns)
    unique(path, lines)
    return lines


def unique(path: Path, lines: list[Line]) -> dict[str, Line]:
    """The lines by id (as text); a repeated id is an error naming both rows."""
    out: dict[str, Line] = {}
    first: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        key = str(line["id"])
        if key in out:
            raise LabelsError(f"{path}: row {number}: duplicate id {key!r} (first in row {first[key]})")
        out[key], first[key] = line, number
    return out


def load_labels(path: str | Path, columns: Columns | None) -> dict[str, Line]:
    """Labels by id (as text): from the given columns, or (None) a file in the `dataset` output format."""
    path = Path(path)
    rows = read_rows(path)
    if columns is not None:
        return unique(path, to_lines(path, rows, columns))
    lines = [_dataset_line(path, number, row) for number, row in enumerate(rows, start=1)]
    return by_id(path, lines) if any("criterion" in line for line in lines) else unique(path, lines)


def by_id(path: Path, lines: list[Line]) -> dict[str, Line]:
    """Label lines of one criterion each (`debate-tui labels`) merged per id, as a `dataset` line holds them:
    human {criterion: number} and the verdict; the same (id, criterion) twice is an error naming both rows."""
    out: dict[str, Line] = {}
    first: dict[tuple[str, str], int] = {}
    for number, line in enumerate(lines, start=1):
        key = (str(line["id"]), str(line.get("criterion", "")))
        if key in first:
            about = f" on {key[1]}" if key[1] else ""
            raise LabelsError(f"{path}: row {number}: a second label for id {key[0]!r}{about} (first in row "
                              f"{first[key]})")
        first[key] = number
        merged = out.setdefault(key[0], {"id": line["id"]})
        if "human" in line:
            merged["human"] = {**merged.get("human", {}), **line["human"]}
        merged |= {name: line[name] for name in ("human_verdict", "group") if name in line}
    return out


def _dataset_line(path: Path, number: int, row: dict[str, Any]) -> Line:
    """One line of `dataset` output read back: id, group, human {criterion: number}, human_verdict; or a label
    line of `debate-tui labels`, whose `human` is the number given on its `criterion`."""
    line: Line = {"id": _ident(path, number, row, "id")}
    if row.get("group") is not None:
        line["group"] = row["group"]
    human = row.get("human")
    if isinstance(criterion := row.get("criterion"), str) and criterion:
        line["criterion"] = criterion
        if human is not None and not isinstance(human, dict):
            human = {criterion: human}
    if human is not None and not isinstance(human, dict):
        raise LabelsError(f"{path}: row {number}: 'human' must be {{criterion: number}}; "
                          "for a flat file name the columns with --human CRITERION=COL")
    scores = {str(c): s for c, v in (human or {}).items()
              if (s := _number(path, number, f"human.{c}", v)) is not None}
    if scores:
        line["human"] = scores
    if (verdict := _verdict(path, number, "human_verdict", row.get("human_verdict"))) is not None:
        line["human_verdict"] = verdict
    return line


def join(rows: list[dict[str, Any]], labels: dict[str, Line]) -> tuple[list[dict[str, Any]], int]:
    """Results rows with the labels of their id put in (human scores, verdict, group); and how many matched."""
    out, matched = [], 0
    for row in rows:
        label = labels.get(str(row.get("id")))
        if label is None:
            out.append(row)
            continue
        matched += 1
        new = dict(row)
        if "human" in label:
            new["human"] = label["human"]
        for key in ("human_verdict", "group"):
            if key in label:
                new[key] = label[key]
        out.append(new)
    return out, matched
