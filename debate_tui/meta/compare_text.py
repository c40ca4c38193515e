"""What `compare` prints for two results files: the summary, then the items that changed most.

Ids, criteria and session ids come from files someone else may have written:
every field passes through `inert_line`, so none can forge a row or act on a terminal.
"""

from __future__ import annotations

from typing import Any

from debate_tui.meta.compare import Changed, ResultsComparison
from debate_tui.meta.vote import figure, with_interval
from debate_tui.textsafe import aligned, inert_line

SHOWN = 10
"""Changed items listed in the table (the JSON summary counts them all; --html lists them all)."""


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def _money(value: float | None) -> str:
    return "n/a" if value is None else f"${value:.4f}"


def summary_lines(summary: dict[str, Any], name_a: str, name_b: str, tolerance: float) -> list[str]:
    """The summary in words, one figure group a line (shared by the table and the HTML page)."""
    s, v, c = summary["scores"], summary["verdicts"], summary["cost"]
    lines = [f"A = {inert_line(name_a)}, B = {inert_line(name_b)}: {summary['pairs']} pairs by (id, criterion), "
             f"{summary['only_a']} only in A, {summary['only_b']} only in B"]
    if s["pairs"]:
        lines.append(f"scores ({s['pairs']} pairs): mean A {figure(s['mean_a'])}, B {figure(s['mean_b'])}; "
                     f"B - A {with_interval(s['mean_delta'], s['ci95'], signed=True)} (95% paired bootstrap), "
                     f"Wilcoxon p {_p(s['wilcoxon_p'])}; {s['changed']} moved by more than {tolerance:g}")
    else:
        lines.append("scores: no pair has a number on both sides")
    if v["pairs"]:
        lines.append(f"verdicts ({v['pairs']} pairs): {v['flips']} flipped ({figure(v['flip_rate'])})")
    if (g := summary["agreement"]) is None:
        lines.append("agreement with people: no labels (give them with the results, or --labels FILE)")
    else:
        better = {"a": "A is better", "b": "B is better", None: "no clear difference (the interval holds 0)"}
        lines.append(f"agreement with people ({g['labelled']} labelled, tolerance {tolerance:g}): "
                     f"A {figure(g['a'])}, B {figure(g['b'])}; B - A {with_interval(g['delta'], g['ci95'], True)}, "
                     f"exact McNemar p {_p(g['mcnemar_p'])}: {better[g['better']]}")
        lines.append(f"worse: {'yes, B agrees with people less than A' if summary['worse'] else 'no'}")
    if any(value is not None for value in c.values()):
        lines.append(f"cost: A {_money(c['a_usd'])} in {c['a_calls'] if c['a_calls'] is not None else 'n/a'} calls, "
                     f"B {_money(c['b_usd'])} in {c['b_calls'] if c['b_calls'] is not None else 'n/a'} calls")
    return lines


HEAD = ("id", "criterion", "A", "B", "B - A", "verdicts", "human", "session A", "session B")


def changed_row(item: Changed) -> list[str]:
    """A changed item's cells, as the table and the HTML page show them."""
    d = item.data()
    verdicts = f"{d['verdict_a']} -> {d['verdict_b']}" if d["flip"] else ""
    human = "" if d["human"] is None else (str(d["human"]) if isinstance(d["human"], str) else f"{d['human']:g}")
    return [inert_line(str(d["id"])), inert_line(str(d["criterion"] or "")), figure(d["a"]), figure(d["b"]),
            figure(d["delta"], signed=True), verdicts, human, inert_line(d["session_a"] or "-"),
            inert_line(d["session_b"] or "-")]


def format_results(comparison: ResultsComparison, name_a: str, name_b: str, tolerance: float) -> str:
    """The summary, then up to SHOWN changed items (flips first, then by |delta|) in aligned columns."""
    lines = summary_lines(comparison.summary, name_a, name_b, tolerance)
    shown = comparison.changed[:SHOWN]
    if not shown:
        return "\n".join([*lines, "", "no item changed by more than the tolerance"])
    rows = [list(HEAD), *(changed_row(item) for item in shown)]
    lines += ["", f"changed most ({len(shown)} of {len(comparison.changed)}):"]
    lines += aligned(rows, indent="  ")
    return "\n".join(lines)
