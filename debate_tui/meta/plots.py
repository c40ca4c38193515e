"""What `meta` shows in pictures: judge against human, calibration, verdict confusion, cost against agreement.

`plot_data` turns results rows and their `meta_evaluate` result into plain
series, the one source both front ends draw from: `write_plot` draws them to a
file with matplotlib (an optional extra, imported only here, so `meta`
without `--plot` never pays for it), and the TUI's meta screen draws the same
series in the terminal with plotext. Names from the rows (criteria,
protocols) are drawn as plain text: matplotlib's math parsing is off.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from debate_tui.meta.stats import VERDICTS
from debate_tui.safefile import write_atomic, write_problem

FORMATS = (".svg", ".png")
INSTALL = "meta --plot needs matplotlib: pip install 'debate-tui[plot]' (or pip install matplotlib)"
VERDICT_NAMES = {"1": "text", "2": "text_b", "0": "tie"}


class PlotError(Exception):
    """The picture cannot be made; the message is the one line shown to the user."""


@dataclass
class PlotData:
    scatter: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    """criterion -> (human, judge) points."""
    calibration: dict[str, list[tuple[float, float, int]]] = field(default_factory=dict)
    """criterion -> (human score rounded to a whole number, mean judge score, items) per level."""
    confusion: dict[str, dict[str, int]] | None = None
    """human verdict -> judge verdict -> count."""
    cost: list[tuple[str, float, float]] = field(default_factory=list)
    """(protocol, dollars per item, agreement) per run that has both."""
    cost_label: str = "agreement"
    cost_gaps: list[str] = field(default_factory=list)
    """Why a protocol has no point on the cost plot: "<protocol> <criterion>: <meta's reason>"."""
    risk: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    """tier (or protocol) -> (share trusted, agreement among the trusted) per threshold (`meta --risk-coverage`)."""
    alpha: float | None = None
    """The alpha marked on the risk-coverage plot (a line at 1 - alpha)."""

    def empty(self) -> bool:
        return not (self.scatter or self.confusion or self.cost or self.risk)


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def plot_data(rows: list[dict[str, Any]], result: dict[str, Any]) -> PlotData:
    """The series to draw; calibration bins the human scores by rounding them to whole numbers."""
    data = PlotData()
    for row in rows:
        human = row.get("human")
        human = human.get(row.get("criterion")) if isinstance(human, dict) else human
        h, p = _number(human), _number(row.get("predicted"))
        if row.get("criterion") is not None and h is not None and p is not None:
            data.scatter.setdefault(str(row["criterion"]), []).append((h, p))
    for name, points in data.scatter.items():
        bins: dict[float, list[float]] = {}
        for h, p in points:
            bins.setdefault(float(round(h)), []).append(p)
        data.calibration[name] = [(h, sum(ps) / len(ps), len(ps)) for h, ps in sorted(bins.items())]
    if trust := result.get("risk_coverage"):
        data.alpha = trust["alpha"]
        data.risk = {name: [(p["coverage"], p["agreement"]) for p in curve]
                     for name, curve in trust["curves"].items() if curve}
    if (verdicts := result.get("verdicts")) and verdicts.get("n"):
        data.confusion = verdicts["confusion"]
    for key, run in (result.get("protocols") or {}).items():
        figures = [c["pearson"] for c in run["criteria"].values() if c["pearson"] is not None]
        if figures:
            data.cost.append((key, run["cost_per_item"], sum(figures) / len(figures)))
            data.cost_label = "mean Pearson over criteria"
        elif (v := run.get("verdicts")) and v["accuracy"] is not None:
            data.cost.append((key, run["cost_per_item"], v["accuracy"]))
            data.cost_label = "verdict accuracy"
        else:
            reasons = [f"{key} {name}: {c['reason']}" for name, c in run["criteria"].items() if c.get("reason")]
            data.cost_gaps += reasons or [f"{key}: no agreement figure"]
    return data


def write_plot(path: Path, data: PlotData) -> None:
    """Draw every panel that has data into one SVG or PNG file (by the suffix)."""
    if path.suffix.lower() not in FORMATS:
        raise PlotError(f"{path}: --plot writes .svg or .png")
    if data.empty():
        raise PlotError("nothing to plot: no results row has both a judge score and a human label or verdict")
    try:
        import matplotlib
    except ImportError:
        raise PlotError(INSTALL) from None
    matplotlib.use("Agg")  # headless: no display, no window
    from matplotlib import pyplot

    panels = [p for p, has in (("scatter", data.scatter), ("calibration", data.calibration),
                                 ("confusion", data.confusion), ("cost", data.cost),
                                 ("risk", data.risk)) if has]
    with matplotlib.rc_context({"text.parse_math": False, "svg.hashsalt": "debate-tui"}):
        figure, axes = pyplot.subplots(1, len(panels), figsize=(4.2 * len(panels), 4), squeeze=False)
        for axis, panel in zip(axes[0], panels, strict=True):
            DRAW[panel](axis, data)
        figure.tight_layout()
        drawn = io.BytesIO()  # drawn first, then written whole: a full disk leaves the old file, not half a new one
        try:
            figure.savefig(drawn, format=path.suffix.lower().lstrip("."),
                           metadata={"Date": None} if path.suffix.lower() == ".svg" else None)
        finally:
            pyplot.close(figure)
    try:
        write_atomic(path, drawn.getvalue())
    except OSError as exc:
        raise PlotError(write_problem(exc, path, "or pass --plot elsewhere")) from None


def _scatter(axis: Any, data: PlotData) -> None:
    for name, points in data.scatter.items():
        axis.scatter([h for h, _ in points], [p for _, p in points], label=name, alpha=0.6, s=18)
    axis.set(title="judge against human", xlabel="human score", ylabel="judge score")
    axis.legend(fontsize="small")


def _calibration(axis: Any, data: PlotData) -> None:
    for name, levels in data.calibration.items():
        axis.plot([h for h, _, _ in levels], [m for _, m, _ in levels], marker="o", label=name)
    axis.set(title="calibration", xlabel="human score (rounded)", ylabel="mean judge score")
    axis.legend(fontsize="small")


def _confusion(axis: Any, data: PlotData) -> None:
    assert data.confusion is not None
    grid = [[data.confusion[h][p] for p in VERDICTS] for h in VERDICTS]
    axis.imshow(grid, cmap="Blues")
    for i, line in enumerate(grid):
        for j, count in enumerate(line):
            axis.text(j, i, str(count), ha="center", va="center")
    names = [VERDICT_NAMES[v] for v in VERDICTS]
    axis.set_xticks(range(len(VERDICTS)), names)
    axis.set_yticks(range(len(VERDICTS)), names)
    axis.set(title="verdicts", xlabel="judge", ylabel="human")


def _cost(axis: Any, data: PlotData) -> None:
    for index, (name, cost, agreement) in enumerate(data.cost):  # stacked labels: runs may share a point
        axis.scatter([cost], [agreement], s=30)
        axis.annotate(name, (cost, agreement), fontsize="small", xytext=(4, 4 + 11 * index),
                      textcoords="offset points")
    axis.set(title="cost against agreement", xlabel="dollars per item", ylabel=data.cost_label)


def _risk(axis: Any, data: PlotData) -> None:
    for name, points in data.risk.items():
        axis.plot([c for c, _ in points], [a for _, a in points], marker=".", label=name)
    if data.alpha is not None:
        axis.axhline(1 - data.alpha, linestyle="--", color="grey", label=f"1 - alpha ({1 - data.alpha:g})")
    axis.set(title="risk against coverage", xlabel="share trusted", ylabel="agreement among the trusted")
    axis.legend(fontsize="small")


DRAW = {"scatter": _scatter, "calibration": _calibration, "confusion": _confusion, "cost": _cost, "risk": _risk}
