"""Two judges' results on the same items, paired: did B score differently, flip verdicts, agree with people more?

Lines pair by (id, criterion), as calibrate joins its tiers (a later line of a
file supersedes an earlier one). Over the pairs with a number on both sides:
the mean delta B - A with a paired bootstrap interval and the two-sided Wilcoxon
signed-rank test (scipy's defaults: zero deltas dropped, exact for small
samples). Over the pairs with a verdict on both sides: the flips. Over the
labelled pairs: agreement with people as `domain.agrees` defines it, the paired
bootstrap interval of its delta and the exact McNemar test (a two-sided binomial
test, p 0.5, on the pairs where exactly one side agrees).

Every bootstrap draws from the values alone (their distinct values and counts,
see `paired_interval`), so the same pairs give the same interval in any line
order, and the same seed the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from debate_tui.domain import AGREE_TOLERANCE, agrees
from debate_tui.meta.stats import VERDICTS, Interval, _interval
from debate_tui.meta.trust import Judgment, Key, Row, finite_number, reading

CHUNK_CELLS = 2_000_000
"""Resampled values held at once: the bootstrap draws in chunks of this many, whatever N and the pair count."""
FEW_VALUES = 8
"""Deltas count as few distinct values (drawn as counts) when the pairs are at least this many times as many."""


@dataclass(frozen=True)
class Pair:
    """One (id, criterion) judged by both sides, its figures read once (`pair_of`); `label` is the human one,
    from A's line or else B's."""

    key: Key
    a: Judgment
    b: Judgment
    scores: tuple[float | None, float | None]
    verdicts: tuple[str | None, str | None]
    label: float | str | None

    @property
    def delta(self) -> float | None:
        a, b = self.scores
        return None if a is None or b is None else b - a

    @property
    def flipped(self) -> bool:
        a, b = self.verdicts
        return a is not None and b is not None and a != b

    def agreement(self, tolerance: float) -> tuple[bool, bool] | None:
        """Whether A and B agree with the label; None when the pair has none."""
        if self.label is None:
            return None
        return agrees(self.a.answer, self.label, tolerance), agrees(self.b.answer, self.label, tolerance)


def pair_of(key: Key, a: Judgment, b: Judgment) -> Pair:
    return Pair(key, a, b, (finite_number(a.row.get("predicted")), finite_number(b.row.get("predicted"))),
                (_verdict(a.row), _verdict(b.row)), a.human if a.human is not None else b.human)


def _verdict(row: Row) -> str | None:
    verdict = row.get("predicted_verdict")
    return verdict if verdict in VERDICTS else None


@dataclass(frozen=True)
class Changed:
    """A pair whose score moved by more than the tolerance, or whose verdict flipped: a row of "changed most"."""

    pair: Pair
    tolerance: float

    def data(self) -> dict[str, Any]:
        a, b = self.pair.scores
        verdict_a, verdict_b = self.pair.verdicts
        agreed = self.pair.agreement(self.tolerance)
        return {"id": self.pair.a.row.get("id"), "criterion": self.pair.a.row.get("criterion"),
                "a": a, "b": b, "delta": self.pair.delta, "verdict_a": verdict_a, "verdict_b": verdict_b,
                "flip": self.pair.flipped, "human": self.pair.label,
                "a_agrees": None if agreed is None else agreed[0], "b_agrees": None if agreed is None else agreed[1],
                "session_a": _session(self.pair.a.row), "session_b": _session(self.pair.b.row)}


def _session(row: Row) -> str | None:
    """The session a line came from, where this product wrote it."""
    return row["session"] if isinstance(row.get("session"), str) else None


@dataclass(frozen=True)
class ResultsComparison:
    """The pairs in key order, what only one side judged, the JSON summary and the changed pairs, most first."""

    pairs: list[Pair]
    only_a: list[Key]
    only_b: list[Key]
    summary: dict[str, Any]
    changed: list[Changed]


def by_key(rows: Sequence[tuple[int, Row]], name: str) -> dict[Key, Judgment]:
    """A file's (line number, row)s by (id, criterion), a later line superseding an earlier one; TrustError
    names a line without an id."""
    out: dict[Key, Judgment] = {}
    for line, row in rows:
        judged = reading(row, f"{name}:{line}")
        out[judged.key] = judged
    return out


def pair_up(a: dict[Key, Judgment], b: dict[Key, Judgment]) -> tuple[list[Pair], list[Key], list[Key]]:
    """The pairs sorted by key, and the keys only A or only B has (sorted too)."""
    pairs = [pair_of(key, a[key], b[key]) for key in sorted(a.keys() & b.keys())]
    return pairs, sorted(a.keys() - b.keys()), sorted(b.keys() - a.keys())


def paired_interval(deltas: Sequence[float], bootstrap: int, seed: int) -> Interval:
    """The percentile 95% interval of the mean of `deltas` over `bootstrap` resamples of the pairs; [None, None]
    with no resampling or fewer than 2 pairs.

    A resample's mean depends only on how many times it drew each distinct value, so where the values are few
    (a score scale's steps; agreement's -1, 0, 1) those counts are drawn at once, multinomially: the same
    distribution as drawing pairs, in time that does not grow with the pairs. Otherwise pairs are drawn from
    the sorted values. Either way the draws depend on the values alone, never on the lines' order."""
    if bootstrap <= 0 or len(deltas) < 2:
        return [None, None]
    import numpy as np

    values, counts = np.unique(np.asarray(deltas, dtype=float), return_counts=True)
    n, rng = len(deltas), np.random.default_rng(seed)
    few = values.size * FEW_VALUES <= n
    width = values.size if few else n
    rows = max(1, CHUNK_CELLS // width)
    sizes = [min(rows, bootstrap - done) for done in range(0, bootstrap, rows)]
    if few:
        means = [rng.multinomial(n, counts / n, size=size) @ values / n for size in sizes]
    else:
        ordered = np.repeat(values, counts)
        means = [ordered[rng.integers(0, n, size=(size, n))].mean(axis=1) for size in sizes]
    return _interval(np.concatenate(means))


def wilcoxon_p(deltas: Sequence[float]) -> float | None:
    """Two-sided Wilcoxon signed-rank p of the deltas (scipy's defaults); None when every delta is 0 (nothing
    to rank) or there is none."""
    if not any(deltas):
        return None
    from scipy import stats

    p = float(stats.wilcoxon(deltas).pvalue)
    return p if math.isfinite(p) else None


def mcnemar_p(only_a: int, only_b: int) -> float:
    """The exact McNemar p: two-sided binomial test, p 0.5, of the pairs where only B agrees among those where
    exactly one side does; 1 when there is no such pair (no evidence either way)."""
    if only_a + only_b == 0:
        return 1.0
    from scipy import stats

    return float(stats.binomtest(only_b, only_a + only_b, 0.5).pvalue)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _scores(pairs: Sequence[Pair], tolerance: float, bootstrap: int, seed: int) -> dict[str, Any]:
    scored = [(a, b) for a, b in (p.scores for p in pairs) if a is not None and b is not None]
    deltas = [b - a for a, b in scored]
    return {"pairs": len(scored), "mean_a": _mean([a for a, _ in scored]), "mean_b": _mean([b for _, b in scored]),
            "mean_delta": _mean(deltas), "ci95": paired_interval(deltas, bootstrap, seed),
            "wilcoxon_p": wilcoxon_p(deltas), "changed": sum(abs(d) > tolerance + 1e-9 for d in deltas)}


def _verdicts(pairs: Sequence[Pair]) -> dict[str, Any]:
    judged = [p for p in pairs if None not in p.verdicts]
    flips = sum(p.flipped for p in judged)
    return {"pairs": len(judged), "flips": flips, "flip_rate": flips / len(judged) if judged else None}


def _agreement(pairs: Sequence[Pair], tolerance: float, bootstrap: int, seed: int) -> dict[str, Any] | None:
    agreed = [ok for p in pairs if (ok := p.agreement(tolerance)) is not None]
    if not agreed:
        return None
    n = len(agreed)
    share_a, share_b = sum(a for a, _ in agreed) / n, sum(b for _, b in agreed) / n
    ci95 = paired_interval([float(b) - float(a) for a, b in agreed], bootstrap, seed)
    low, high = ci95
    better = None if low is None or high is None or low <= 0 <= high else ("b" if low > 0 else "a")
    return {"labelled": n, "a": share_a, "b": share_b, "delta": share_b - share_a, "ci95": ci95,
            "mcnemar_p": mcnemar_p(sum(a and not b for a, b in agreed), sum(b and not a for a, b in agreed)),
            "better": better}


def _total(pairs: Sequence[Pair], side: str, field: str) -> float | None:
    """A field summed over one side's paired lines; None when no line carries it."""
    values = [finite_number(getattr(p, side).row.get(field)) for p in pairs]
    carried = [v for v in values if v is not None]
    return sum(carried) if carried else None


def _cost(pairs: Sequence[Pair]) -> dict[str, Any]:
    calls = {side: _total(pairs, side, "calls") for side in ("a", "b")}
    return {"a_usd": _total(pairs, "a", "cost_usd"), "b_usd": _total(pairs, "b", "cost_usd"),
            "a_calls": None if calls["a"] is None else int(calls["a"]),
            "b_calls": None if calls["b"] is None else int(calls["b"])}


def changed_most(pairs: Sequence[Pair], tolerance: float) -> list[Changed]:
    """The pairs that flipped or moved by more than the tolerance: flips first, then by |delta|, then by key."""
    moved = [(p.flipped, abs(d) if (d := p.delta) is not None else 0.0, p) for p in pairs]
    moved = [m for m in moved if m[0] or m[1] > tolerance + 1e-9]
    moved.sort(key=lambda m: (not m[0], -m[1], m[2].key))
    return [Changed(p, tolerance) for _, _, p in moved]


def compare_results(a: dict[Key, Judgment], b: dict[Key, Judgment], *, tolerance: float = AGREE_TOLERANCE,
                    bootstrap: int = 1000, seed: int = 0) -> ResultsComparison:
    """The comparison of two files' judgments (see the module's docstring); `summary` is the command's JSON line."""
    pairs, only_a, only_b = pair_up(a, b)
    agreement = _agreement(pairs, tolerance, bootstrap, seed)
    high = None if agreement is None else agreement["ci95"][1]
    summary = {"kind": "results", "pairs": len(pairs), "only_a": len(only_a), "only_b": len(only_b),
               "scores": _scores(pairs, tolerance, bootstrap, seed), "verdicts": _verdicts(pairs),
               "agreement": agreement, "cost": _cost(pairs),
               "worse": None if agreement is None else high is not None and high < 0}
    return ResultsComparison(pairs, only_a, only_b, summary, changed_most(pairs, tolerance))
