"""Agreement statistics between a judge and human judgments.

Correlations follow the meta-evaluation conventions of G-Eval, UniEval and
Chiang & Lee 2023: Pearson, Spearman and Kendall tau-b (scipy's defaults)
either over all rows ("turn" level) or per group and averaged ("summary"
level). Verdict statistics follow ChatEval (accuracy, Cohen's kappa) and
ScaleEval (example- and system-level agreement).

numpy and scipy are imported inside functions: `scipy.stats` alone costs
1.6 s and must never sit on the path to the TUI's first frame.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

METHODS = ("pearson", "spearman", "kendall")
VERDICTS = ("1", "2", "0")
"""ScaleEval's convention: submission 1 better, submission 2 better, tie."""

Interval = list[float | None]
MAX_BOOTSTRAP = 100_000
"""The most resamples any `--bootstrap` takes (`meta`, `compare`, ...): a 95% percentile interval is settled long
before; 10^9 asked numpy for 447 GiB. Check a flag with `check_bootstrap`."""
DRAW_CELLS = 1_000_000
"""Resampled cells drawn at once (about 8 MB a matrix): more resamples are drawn in slices of this size, so the
memory a bootstrap takes does not grow with the number of items times resamples."""


def check_bootstrap(resamples: int, flag: str = "--bootstrap") -> int:
    """`resamples` when 0 (no interval) to MAX_BOOTSTRAP, else ValueError in one line naming `flag`."""
    if not 0 <= resamples <= MAX_BOOTSTRAP:
        raise ValueError(f"{flag} must be between 0 and {MAX_BOOTSTRAP:,} (resamples), got {resamples:,}")
    return resamples


def draws(count: int, b: int, seed: int, width: int = 1) -> Iterator[Any]:
    """`b` seeded resamples of `count` positions with replacement, as index matrices of at most DRAW_CELLS cells
    (`width` values drawn per position): the same draws as one (b, count) matrix, in bounded memory."""
    import numpy as np

    rng = np.random.default_rng(seed)
    step = max(1, DRAW_CELLS // max(1, count * width))
    for start in range(0, check_bootstrap(b), step):
        yield rng.integers(0, count, size=(min(step, b - start), count))


OFF_SCALE = 1e9
"""A score beyond this magnitude is on no criterion's scale (1e308 was read from a "1-5" answer): it is left out
and counted as off-scale, and the sums of squares behind a correlation stay far from overflowing."""


def _scored(pred: Sequence[float | None]) -> tuple[list[int], int, int]:
    """Indices of rows with a finite prediction on a scale, how many were unscored and how many off any scale."""
    keep = [i for i, p in enumerate(pred) if p is not None and math.isfinite(p) and abs(p) <= OFF_SCALE]
    unscored = sum(1 for p in pred if p is None or not math.isfinite(p))
    return keep, unscored, len(pred) - len(keep) - unscored


def _constant(values: Sequence[float]) -> bool:
    return len(set(values)) <= 1


def correlations(pred: Sequence[float], human: Sequence[float]) -> dict[str, float | None]:
    """Pearson, Spearman and Kendall tau-b; None where undefined (a constant side)."""
    if len(pred) != len(human):
        raise ValueError("predictions and human scores differ in length")
    if _constant(pred) or _constant(human):
        return dict.fromkeys(METHODS)
    from scipy import stats

    return {
        "pearson": float(stats.pearsonr(pred, human).statistic),
        "spearman": float(stats.spearmanr(pred, human).statistic),
        "kendall": float(stats.kendalltau(pred, human).statistic),
    }


def _interval(samples: Any) -> Interval:
    """Percentile 95% interval of the finite bootstrap samples (degenerate draws dropped)."""
    import numpy as np

    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return [None, None]
    low, high = np.percentile(finite, [2.5, 97.5])
    return [float(low), float(high)]


def canonical(units: Any) -> Any:
    """The rows of `units` (a 2-D array, one row per resampled item) sorted by their values.

    A bootstrap draws row positions, so unsorted it would draw other items when
    the same result lines come in another order; sorted, the same data gives the
    same intervals in any order (NaN sorts last, identical rows are interchangeable).
    """
    import numpy as np

    return units[np.lexsort(units.T[::-1])] if len(units) else units


def _rowwise_pearson(x: Any, y: Any) -> Any:
    """Pearson r of each row pair of two matrices; NaN where a row is constant."""
    import numpy as np

    dx = x - x.mean(axis=1, keepdims=True)
    dy = y - y.mean(axis=1, keepdims=True)
    denom = np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (dx * dy).sum(axis=1) / denom, np.nan)


def _bootstrap_rows(pred: Sequence[float], human: Sequence[float], b: int, seed: int) -> dict[str, Interval]:
    """Resample rows with replacement `b` times; percentile intervals per method."""
    import numpy as np
    from scipy import stats

    x, y = np.asarray(pred, dtype=float), np.asarray(human, dtype=float)  # in canonical order (turn_level)
    pearson, spearman, kendall = [], [], []
    for idx in draws(len(x), b, seed):
        xs, ys = x[idx], y[idx]
        varied = (xs.min(axis=1) < xs.max(axis=1)) & (ys.min(axis=1) < ys.max(axis=1))
        taus = np.full(len(idx), np.nan)
        for i in np.flatnonzero(varied):
            taus[i] = stats.kendalltau(xs[i], ys[i]).statistic
        pearson.append(_rowwise_pearson(xs, ys))
        spearman.append(_rowwise_pearson(stats.rankdata(xs, axis=1), stats.rankdata(ys, axis=1)))
        kendall.append(taus)
    return {
        "pearson": _interval(np.concatenate(pearson)),
        "spearman": _interval(np.concatenate(spearman)),
        "kendall": _interval(np.concatenate(kendall)),
    }


def _no_interval() -> dict[str, Interval]:
    return {m: [None, None] for m in METHODS}


def turn_level(
    pred: Sequence[float | None], human: Sequence[float], *, bootstrap: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """Correlation over all scored rows, with a row-bootstrap 95% interval."""
    keep, unscored, off_scale = _scored(pred)
    # in a canonical order, so that the figures (to the last bit) and their intervals ignore the lines' order
    pairs = sorted((float(pred[i]), float(human[i])) for i in keep)  # type: ignore[arg-type]
    p, h = [x for x, _ in pairs], [y for _, y in pairs]
    result: dict[str, Any] = correlations(p, h)
    defined = bootstrap > 0 and result["pearson"] is not None
    result.update(
        n=len(p),
        groups_used=None,
        groups_skipped=None,
        unscored=unscored,
        ci=_bootstrap_rows(p, h, bootstrap, seed) if defined else _no_interval(),
    )
    return _with_off_scale(result, off_scale)


def summary_level(
    pred: Sequence[float | None],
    human: Sequence[float],
    groups: Sequence[Hashable],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Per-group correlation averaged over groups (G-Eval's summary level).

    A group whose human or predicted scores are all equal (including a group
    of one) has no defined correlation and is skipped, as in G-Eval and
    Chiang & Lee; unscored rows are dropped before that test, so a group
    left with one scored row is skipped too. The interval resamples groups,
    so it reflects the spread between documents.
    """
    import numpy as np

    keep, unscored, off_scale = _scored(pred)
    by_group: dict[Hashable, list[tuple[float, float]]] = {g: [] for g in groups}
    for i in keep:
        by_group[groups[i]].append((float(pred[i]), float(human[i])))  # type: ignore[arg-type]
    # each group's pairs, then the groups, in a canonical order: see turn_level
    values = canonical(np.array([_group_figures(sorted(pairs)) for pairs in by_group.values()], dtype=float)
                       .reshape(-1, len(METHODS)))
    used = np.isfinite(values[:, 0])
    result: dict[str, Any] = {
        m: (float(values[used, j].mean()) if used.any() else None) for j, m in enumerate(METHODS)
    }
    result.update(
        n=len(keep),
        groups_used=int(used.sum()),
        groups_skipped=int((~used).sum()),
        unscored=unscored,
        ci=_bootstrap_groups(values, bootstrap, seed) if bootstrap > 0 and used.any() else _no_interval(),
    )
    return _with_off_scale(result, off_scale)


def _with_off_scale(result: dict[str, Any], off_scale: int) -> dict[str, Any]:
    """`off_scale` is there only when some prediction was: a result's shape stays as it was for sound data."""
    return {**result, "off_scale": off_scale} if off_scale else result


def _group_figures(pairs: list[tuple[float, float]]) -> list[float]:
    """One group's correlations, NaN where undefined (a constant side, fewer than two pairs)."""
    figures = correlations([p for p, _ in pairs], [h for _, h in pairs])
    return [math.nan if v is None else v for v in figures.values()]


def _bootstrap_groups(values: Any, b: int, seed: int) -> dict[str, Interval]:
    """Resample groups (rows of `values`, in canonical order; NaN = skipped) and average the defined ones."""
    import numpy as np

    parts = []
    for idx in draws(len(values), b, seed, width=len(METHODS)):
        drawn = values[idx]  # (resamples, groups, methods)
        defined = np.isfinite(drawn)
        with np.errstate(invalid="ignore", divide="ignore"):
            parts.append(np.where(defined, drawn, 0.0).sum(axis=1) / defined.sum(axis=1))
    means = np.concatenate(parts)
    return {m: _interval(means[:, j]) for j, m in enumerate(METHODS)}


def _check_verdicts(verdicts: Sequence[str | None]) -> None:
    bad = {v for v in verdicts if v is not None and v not in VERDICTS}
    if bad:
        raise ValueError(f"verdicts must be one of {VERDICTS} or None, got {sorted(bad)}")


def cohen_kappa(pred: Sequence[str], human: Sequence[str]) -> float | None:
    """Cohen's kappa: observed agreement corrected for the agreement the marginals predict.

    None when chance agreement is already 1 (both sides use one and the same label).
    """
    n = len(pred)
    if n == 0 or n != len(human):
        return None
    observed = sum(p == h for p, h in zip(pred, human, strict=True)) / n
    p_counts, h_counts = Counter(pred), Counter(human)
    expected = sum(p_counts[k] * h_counts[k] for k in p_counts) / (n * n)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def preferred(verdicts: Sequence[str]) -> str:
    """The mode of the verdicts (ScaleEval's system-level choice); a tie for the top means "0"."""
    ranked = Counter(verdicts).most_common()
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return "0"
    return ranked[0][0]


def verdict_agreement(pred: Sequence[str | None], human: Sequence[str]) -> dict[str, Any]:
    """Accuracy and Cohen's kappa (ChatEval), ScaleEval's example- and system-level agreement.

    Unscored predictions (None) are excluded and counted. Example-level
    agreement is the share of items where the verdicts match, i.e. the
    accuracy; system-level agreement compares the modes of the two sides.
    """
    _check_verdicts(pred)
    _check_verdicts(human)
    pairs = [(p, h) for p, h in zip(pred, human, strict=True) if p is not None]
    ps, hs = [p for p, _ in pairs], [h for _, h in pairs]
    accuracy = sum(p == h for p, h in pairs) / len(pairs) if pairs else None
    confusion = {h: {p: 0 for p in VERDICTS} for h in VERDICTS}
    for p, h in pairs:
        confusion[h][p] += 1
    return {
        "accuracy": accuracy,
        "kappa": cohen_kappa(ps, hs),
        "n": len(pairs),
        "unscored": len(pred) - len(pairs),
        "example_agreement": accuracy,
        "system_agreement": preferred(ps) == preferred(hs) if pairs else None,
        "preferred": {"predicted": preferred(ps), "human": preferred(hs)} if pairs else None,
        "confusion": confusion,
    }


def position_consistency(pairs: Sequence[tuple[str | None, str | None]]) -> dict[str, Any]:
    """How often a verdict survives swapping the two texts.

    Each pair is (verdict, verdict with the texts swapped, mapped back to the
    original numbering): a position-blind judge gives the same verdict twice.
    Pairs with an unscored side are excluded and counted.
    """
    _check_verdicts([v for pair in pairs for v in pair])
    scored = [(a, b) for a, b in pairs if a is not None and b is not None]
    n, flipped = len(scored), sum(a != b for a, b in scored)
    return {
        "consistent": (n - flipped) / n if n else None,
        "flipped": flipped / n if n else None,
        "n": n,
        "unscored": len(pairs) - len(scored),
    }
