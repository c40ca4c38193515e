"""A batch's report as one HTML page (`meta RESULTS --html FILE.html`): the agreement, vote and cost tables,
the plots as inline SVG, and the text `meta` prints, word for word."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from debate_tui.htmlpage import esc, page, section, table
from debate_tui.meta.compare import ResultsComparison
from debate_tui.meta.compare_text import HEAD, changed_row, summary_lines
from debate_tui.meta.plots import PlotData
from debate_tui.meta.stats import METHODS
from debate_tui.meta.svg import panels, versus
from debate_tui.meta.vote import figure, with_interval

CSS = """
.plots { display: flex; flex-wrap: wrap; gap: 1rem; }
.plots svg { background: var(--panel); border-radius: 6px; color: var(--fg); }
"""


def _agreement(result: dict[str, Any]) -> str:
    rows = []
    for name, c in result["criteria"].items():
        groups = "-" if c["groups_used"] is None else f"{c['groups_used']}/{c['groups_used'] + c['groups_skipped']}"
        rows.append([name, str(c["n"]), str(c["unscored"]), groups,
                     *(with_interval(c[m], c["ci"][m]) for m in METHODS), c.get("reason") or ""])
    if not rows:
        return ""
    return table(["Criterion", "n", "Unscored", "Groups", *METHODS, "n/a because"], rows,
                 "Correlation with the human judgments (95% bootstrap intervals)")


def _verdicts(result: dict[str, Any]) -> str:
    v = result.get("verdicts")
    if not v:
        return ""
    system = {True: "agrees", False: "differs", None: "n/a"}[v["system_agreement"]]
    return table(["n", "Unscored", "Accuracy", "Kappa", "System-level preference", "n/a because"],
                 [[str(v["n"]), str(v["unscored"]), figure(v["accuracy"]), figure(v["kappa"]), system,
                   v.get("reason") or ""]], "Verdicts")


def _vote(block: dict[str, Any], title: str = "") -> str:
    rows = []
    for name, c in block["criteria"].items():
        d = c["difference"]
        rows.append([name, str(c["n"]), *(with_interval(c[m], c["ci"][m]) for m in METHODS), str(d["n"]),
                     *(with_interval(d[m], d["ci"][m], signed=True) for m in METHODS)])
    caption = "Vote before discussion" + (f" ({title})" if title else "")
    cost = (f"final {block['final_calls']} calls, ${block['final_cost_usd']:.4f}; vote {block['calls']} calls, "
            f"${block['cost_usd']:.4f}; over {block['items']} items")
    parts = [table(["Criterion", "Vote n", *(f"vote {m}" for m in METHODS), "Paired n",
                    *(f"final - vote {m}" for m in METHODS)], rows, caption) if rows else "",
             f"<p>{esc(caption)}, cost: {esc(cost)}.</p>\n"]
    if v := block.get("verdicts"):
        d = v["difference"]
        parts.append(table(["Vote n", "Accuracy", "Kappa", "Final - vote accuracy"],
                           [[str(v["n"]), figure(v["accuracy"]), figure(v["kappa"]),
                             with_interval(d["accuracy"], d["ci"]["accuracy"], signed=True)]],
                           caption + ": verdicts"))
    return "".join(parts) + "".join(_vote(run, key) for key, run in block.get("by_run", {}).items())


def _costs(block: dict[str, Any] | None) -> str:
    if not block:
        return ""
    rows = []
    for key, run in block.items():
        figures = [(f"{name} pearson", c) for name, c in run["criteria"].items()]
        if v := run.get("verdicts"):
            figures.append(("verdict accuracy", {**v, "pearson": v["accuracy"]}))
        per_item = "n/a" if run["cost_per_item"] is None else f"{run['cost_per_item']:.6f}"
        head = [key, str(run["items"]), figure(run["calls_per_item"]), per_item]
        for label, entry in figures or [("(no labels)", {"pearson": None, "per_dollar": None})]:
            reason = entry.get("reason") or ""
            rows.append([*head, label, figure(entry["pearson"]), figure(entry["per_dollar"]), reason])
            head = [""] * len(head)  # a run's protocol, items and cost once, over all its figures, as meta prints it
    return table(["Protocol", "Items", "Calls/item", "$/item", "Figure", "Agreement", "Per dollar", "n/a because"],
                 rows, "Cost and agreement by protocol (agreement per dollar = agreement / dollars per item)")


def render_meta_html(title: str, result: dict[str, Any], printed: str, data: PlotData) -> str:
    """The page: `printed` is meta's own text table, `data` the series its plots draw."""
    plots = panels(data)
    body = [f"<h1>{esc(title)}</h1>\n",
            section("agreement", "Agreement with people", _agreement(result) + _verdicts(result)),
            section("vote", "Vote before discussion", _vote(result["vote"]) if result.get("vote") else ""),
            section("cost", "Cost", _costs(result.get("protocols"))),
            section("plots", "Plots", f'<div class="plots">{"".join(plots)}</div>\n' if plots else ""),
            section("printed", "As meta prints it", f"<pre>{esc(printed)}</pre>\n")]
    return page(title, "".join(body), CSS)


def render_compare_html(comparison: ResultsComparison, name_a: str, name_b: str, tolerance: float) -> str:
    """`compare A B --html`: the summary as compare prints it, A against B per item, every changed item."""
    title = f"compare: {Path(name_a).name} against {Path(name_b).name}"
    points = [(a, b) for a, b in (p.scores for p in comparison.pairs) if a is not None and b is not None]
    plot = f'<div class="plots">{versus(points, Path(name_a).name, Path(name_b).name)}</div>\n' if points else ""
    changed = table(list(HEAD), [changed_row(item) for item in comparison.changed],
                    f"{len(comparison.changed)} items flipped or moved by more than {tolerance:g}, most first")
    body = [f"<h1>{esc(title)}</h1>\n",
            section("summary", "Summary", "".join(f"<p>{esc(line)}</p>\n"
                                                  for line in summary_lines(comparison.summary, name_a, name_b,
                                                                            tolerance))),
            section("items", "A against B per item", plot),
            section("changed", "Changed items", changed if comparison.changed else "")]
    return page(title, "".join(body), CSS)
