"""Shards: a deterministic part of a batch's input, and the merge of the parts' results.

`--shard i/n` (i from 1 to n, like Slurm's `--array=1-n`; a Kubernetes indexed
job passes `$((JOB_COMPLETION_INDEX + 1))/n`) keeps the items whose id hashes
to i-1 modulo n. The hash is SHA-256 of the id, not Python's `hash` (salted
per process) and not the position, so every machine, every rerun and an input
whose lines were reordered or extended put an item in the same shard.

Merging reads each shard's results, keeps the latest line of each (id,
criterion) within a file (a resumed shard appends), and joins the files so
that every line appears exactly once. The same line in two files (a shard
run twice) is kept once; two different judgments of the same (id, criterion)
are a conflict and nothing is written. Bookkeeping that differs between two
runs of the same work (session id, calls, cache hits, tokens, cost) does not
count as a difference; a final line (completed, needs_human) beats a failed one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from debate_tui.batch.results import FINAL, ResultsError, ResultsFile, Row, row_key

BOOKKEEPING = frozenset({"session", "calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd",
                         "shard"})
"""Row fields that say how a result was obtained, not what it is."""

T = TypeVar("T")


class ShardError(ValueError):
    """A malformed `--shard` value; one line for the user."""


class MergeConflict(ResultsError):
    """Two shard files disagree about one (id, criterion)."""


@dataclass(frozen=True)
class Shard:
    index: int
    """1-based."""
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        index, sep, count = text.partition("/")
        try:
            shard = cls(int(index), int(count)) if sep else None
        except ValueError:
            shard = None
        if shard is None or shard.count < 1 or not 1 <= shard.index <= shard.count:
            raise ShardError(f"--shard must be I/N with 1 <= I <= N (e.g. 1/4), got {text!r}")
        return shard

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, item_id: str) -> bool:
        return shard_of(item_id, self.count) == self.index

    def select(self, items: Iterable[T], ident: str = "id") -> list[T]:
        return [item for item in items if self.holds(str(getattr(item, ident)))]


def shard_of(item_id: str, count: int) -> int:
    """The 1-based shard of an item id among `count`: the same on every machine and run."""
    digest = hashlib.sha256(item_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def judgment(row: Row) -> dict[str, object]:
    return {k: v for k, v in row.items() if k not in BOOKKEEPING}


@dataclass
class Merged:
    rows: dict[tuple[str, str], Row] = field(default_factory=dict)
    origin: dict[tuple[str, str], Path] = field(default_factory=dict)
    duplicates: int = 0
    """Lines found in more than one file (the same judgment), kept once."""
    shards: dict[str, Path] = field(default_factory=dict)
    """The `--shard I/N` each file's lines record -> the file."""

    def missing_shards(self) -> list[str]:
        """Shards of each set (N) some file belongs to that no file holds, as "I/N"; [] for unsharded files."""
        sets = {Shard.parse(label).count for label in self.shards}
        return [f"{i}/{n}" for n in sorted(sets) for i in range(1, n + 1) if f"{i}/{n}" not in self.shards]

    def add(self, row: Row, path: Path) -> None:
        key = row_key(row)
        held = self.rows.get(key)
        if held is None or (held.get("status") not in FINAL and row.get("status") in FINAL):
            self.rows[key], self.origin[key] = row, path
            return
        if row.get("status") not in FINAL:
            return  # a failed attempt where another file has the result, or a second failure
        if judgment(held) != judgment(row):
            raise MergeConflict(f"conflict: id {key[0]!r} criterion {key[1]!r} differs between "
                                f"{self.origin[key]} and {path}; nothing written")
        self.duplicates += 1


def merge_files(paths: Sequence[Path]) -> Merged:
    """Every (id, criterion) of the files once, or MergeConflict / ResultsError naming the file."""
    merged = Merged()
    for path in paths:
        if not path.exists():
            raise ResultsError(f"{path}: no such file")
        latest: dict[tuple[str, str], Row] = {}
        for row in ResultsFile(path).read().rows:
            latest[row_key(row)] = row
            if (shard := _recorded_shard(row)) is not None:
                merged.shards.setdefault(str(shard), path)
        for row in latest.values():
            merged.add(row, path)
    return merged


def _recorded_shard(row: Row) -> Shard | None:
    """The shard a line says it came from; None for a line of an unsharded batch (or a hand-edited field)."""
    label = row.get("shard")
    try:
        return Shard.parse(label) if isinstance(label, str) else None
    except ShardError:
        return None
