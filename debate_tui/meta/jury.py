"""How far a jury's judges agree with each other, over the items of a results file.

Rows of a jury (`--jury`) carry each judge's score (`predicted_judges`) and, for
a pair, its preference (`verdict_judges`). Per criterion: Krippendorff's alpha
with the interval metric (any number of judges, a judge's missing score simply
left out) and the mean Spearman correlation over pairs of judges; for verdicts,
Fleiss' kappa over the items every judge decided. Agreement among judges is not
agreement with the humans: a jury of one model's copies agrees perfectly and
adds nothing.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from debate_tui.meta import stats
from debate_tui.meta.stats import VERDICTS

Row = dict[str, Any]


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _squared_gaps(values: Sequence[float]) -> float:
    """The sum of (a - b)^2 over ordered pairs of distinct positions: 2 (m sum x^2 - (sum x)^2)."""
    return 2 * (len(values) * sum(v * v for v in values) - sum(values) ** 2)


def krippendorff_interval(units: Sequence[Sequence[float | None]]) -> float | None:
    """Krippendorff's alpha, interval metric: 1 - observed / expected disagreement. Units with fewer than two
    values are not pairable and are left out; None when nothing varies (or fewer than two pairable values)."""
    pairable = [[v for v in unit if v is not None] for unit in units]
    pairable = [unit for unit in pairable if len(unit) >= 2]
    n = sum(len(unit) for unit in pairable)
    if n < 2:
        return None
    observed = sum(_squared_gaps(unit) / (len(unit) - 1) for unit in pairable) / n
    expected = _squared_gaps([v for unit in pairable for v in unit]) / (n * (n - 1))
    return None if expected == 0 else 1 - observed / expected


def fleiss_kappa(units: Sequence[Sequence[str]]) -> float | None:
    """Fleiss' kappa over units each rated by the same number of raters; None when chance agreement is 1."""
    units = [list(unit) for unit in units if unit]
    if not units or len({len(unit) for unit in units}) != 1 or len(units[0]) < 2:
        return None
    raters, items = len(units[0]), len(units)
    counts = [Counter(unit) for unit in units]
    observed = sum((sum(c * c for c in count.values()) - raters) / (raters * (raters - 1)) for count in counts) / items
    shares = Counter[str]()
    for count in counts:
        shares.update(count)
    expected = sum((total / (items * raters)) ** 2 for total in shares.values())
    return None if expected == 1 else (observed - expected) / (1 - expected)


def mean_pairwise_spearman(columns: dict[str, list[float | None]]) -> float | None:
    """The mean Spearman correlation over pairs of judges, each pair on the items both scored (undefined pairs
    left out)."""
    values = []
    for a, b in combinations(columns.values(), 2):
        both = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
        if len(both) >= 2:
            rho = stats.correlations([x for x, _ in both], [y for _, y in both])["spearman"]
            if rho is not None:
                values.append(rho)
    return sum(values) / len(values) if values else None


def jury_block(rows: Sequence[Row]) -> dict[str, Any] | None:
    """Inter-judge agreement per criterion and on verdicts; None when no row comes from a jury."""
    juried = [r for r in rows if isinstance(r.get("predicted_judges"), dict)]
    if not juried:
        return None
    judges = list(dict.fromkeys(name for r in juried for name in r["predicted_judges"]))
    block: dict[str, Any] = {"judges": judges, "models": next((r["jury"] for r in juried if "jury" in r), {}),
                             "criteria": {}}
    by_criterion: dict[str, list[Row]] = {}
    for row in juried:
        by_criterion.setdefault(str(row.get("criterion")), []).append(row)
    for name, group in by_criterion.items():
        units = [[_number(r["predicted_judges"].get(j)) for j in judges] for r in group]
        columns = {j: [unit[k] for unit in units] for k, j in enumerate(judges)}
        block["criteria"][name] = {"alpha": krippendorff_interval(units),
                                   "mean_spearman": mean_pairwise_spearman(columns), "n": len(units)}
    decided = [[v for v in r["verdict_judges"].values() if v in VERDICTS]
               for r in juried if isinstance(r.get("verdict_judges"), dict)]
    complete = [unit for unit in decided if len(unit) == len(judges)]
    if decided:
        block["verdicts"] = {"fleiss_kappa": fleiss_kappa(complete), "n": len(complete),
                             "incomplete": len(decided) - len(complete)}
    return block


def format_jury(block: dict[str, Any]) -> list[str]:
    def num(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    models = ", ".join(f"{j}: {block['models'].get(j, '?')}" for j in block["judges"])
    lines = [f"jury of {len(block['judges'])} ({models}): inter-judge agreement"]
    for name, c in block["criteria"].items():
        lines.append(f"  {name}: n={c['n']} Krippendorff's alpha (interval)={num(c['alpha'])} "
                     f"mean pairwise Spearman={num(c['mean_spearman'])}")
    if v := block.get("verdicts"):
        left_out = f" ({v['incomplete']} items without every judge's verdict left out)" if v["incomplete"] else ""
        lines.append(f"  verdicts: n={v['n']} Fleiss' kappa={num(v['fleiss_kappa'])}{left_out}")
    return lines
