"""What each protocol in a results file costs per item, and how much agreement with the humans a dollar buys.

Rows name their run (`protocol`, `model`; see `vote.run_key`); results of
several runs concatenated into one file are compared side by side. Per run:
items, calls and dollars per item (an item's rows summed, the batch's own
usage columns), and for each figure of agreement (a criterion's Pearson at the
asked level, the verdicts' accuracy) that figure divided by the dollars per
item: agreement per dollar spent on one item. A run that cost nothing (the
demo model, a cache) has no such ratio, and says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from debate_tui.meta.vote import run_key

Row = dict[str, Any]
Evaluate = Callable[[list[Row]], dict[str, Any]]
FREE = "free: this run cost $0 (the demo model, a local model without a price, or the cache)"


def _amount(row: Row, key: str) -> float:
    value = row.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) \
        else 0.0


def has_runs(rows: Sequence[Row]) -> bool:
    return any(row.get("protocol") is not None for row in rows)


def protocols_block(rows: Sequence[Row], evaluate: Evaluate) -> dict[str, Any] | None:
    """{run: {items, calls, calls_per_item, cost_usd, cost_per_item, criteria: {name: {pearson, per_dollar}},
    verdicts?: {accuracy, per_dollar}}}; None when no row names its protocol. `evaluate` is meta_evaluate
    without intervals, applied to one run's rows."""
    if not has_runs(rows):
        return None
    runs: dict[str, list[Row]] = {}
    for row in rows:
        runs.setdefault(run_key(row) or "(unnamed)", []).append(row)
    return {key: _run(group, evaluate(group)) for key, group in runs.items()}


def _ratio(agreement: float | None, per_item: float | None) -> dict[str, Any]:
    if agreement is None:
        return {"per_dollar": None, "reason": "no agreement figure to divide"}
    if not per_item:
        return {"per_dollar": None, "reason": FREE}
    return {"per_dollar": agreement / per_item}


def _run(rows: list[Row], figures: dict[str, Any]) -> dict[str, Any]:
    items = len({str(r.get("id")) for r in rows})
    calls = sum(_amount(r, "calls") for r in rows)
    cost = sum(_amount(r, "cost_usd") for r in rows)
    per_item = cost / items if items else None
    out: dict[str, Any] = {
        "items": items, "calls": int(calls), "calls_per_item": calls / items if items else None,
        "cost_usd": round(cost, 8), "cost_per_item": per_item, "criteria": {},
    }
    for name, c in figures["criteria"].items():
        out["criteria"][name] = {"pearson": c["pearson"], **_ratio(c["pearson"], per_item)}
        if c["pearson"] is None:
            out["criteria"][name]["reason"] = c.get("reason") or out["criteria"][name]["reason"]
    if v := figures.get("verdicts"):
        out["verdicts"] = {"accuracy": v["accuracy"], **_ratio(v["accuracy"], per_item)}
    return out


def _fig(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def format_protocols(block: dict[str, Any]) -> list[str]:
    """The side-by-side table: one line per run and figure of agreement; each n/a says why below it."""
    width = max(12, *(len(k) for k in block))
    lines = ["cost and agreement by protocol (agreement per dollar = agreement / dollars per item)",
             f"{'protocol':<{width}} {'items':>5} {'calls/item':>10} {'$/item':>10}  {'figure':<22} "
             f"{'agreement':>9} {'per dollar':>12}"]
    for key, run in block.items():
        head = f"{key:<{width}} {run['items']:>5} {_fig(run['calls_per_item'], 1):>10} " \
               f"{_fig(run['cost_per_item'], 6):>10}"
        figures = [(f"{name} pearson", c["pearson"], c) for name, c in run["criteria"].items()]
        if v := run.get("verdicts"):
            figures.append(("verdict accuracy", v["accuracy"], v))
        if not figures:
            lines.append(f"{head}  (no figure of agreement: no labels)")
        for label, value, entry in figures:
            lines.append(f"{head}  {label:<22} {_fig(value):>9} {_fig(entry['per_dollar'], 1):>12}")
            head = " " * len(head)
        reasons = dict.fromkeys(e["reason"] for _, _, e in figures if e.get("reason"))
        lines += [f"  {key}: n/a because {reason}" for reason in reasons]
    return lines
