"""Did the debate add anything over its own first vote, and at what price?

Rows of a multi-agent protocol carry the vote before discussion beside the final
result (`predicted_vote`, `verdict_vote`, `calls_vote`, `cost_usd_vote`; see
batch.vote_rows). Here both are compared with the humans the same way (the same
correlations at the same level, the same verdict agreement), and the difference
final - vote gets a 95% bootstrap interval paired over the items both scored:
each resample draws items (at the summary level, groups) once and computes both
figures on that draw, so the interval is that of the difference itself, not of
two independent figures. The calls and cost of each come from the rows: the
final's are the whole run's (the vote's calls included), the vote's are those of
its first-round turns. With rows of several protocols or models (a `protocol`
and `model` on the rows), each gets its own block under "by_run".
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, cast

from debate_tui.meta import stats
from debate_tui.meta.stats import METHODS

Row = dict[str, Any]


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _human(row: Row) -> float | None:
    human = row.get("human")
    value = human.get(row.get("criterion")) if isinstance(human, dict) else human
    return float(value) if value is not None and _finite(value) else None


def has_vote(rows: Sequence[Row]) -> bool:
    return any("predicted_vote" in r or "verdict_vote" in r for r in rows)


def run_key(row: Row) -> str:
    """Which protocol and model a row comes from, as a label; empty when the row does not say."""
    return " / ".join(str(row[k]) for k in ("protocol", "model") if row.get(k) is not None)


def vote_block(rows: Sequence[Row], level: str, *, bootstrap: int = 1000, seed: int = 0) -> dict[str, Any] | None:
    """The vote's agreement with the humans, its difference from the final's, and the calls and cost of each;
    None when no row has a vote."""
    voted = [r for r in rows if "predicted_vote" in r or "verdict_vote" in r]
    if not voted:
        return None
    block = _block(voted, level, bootstrap, seed)
    runs: dict[str, list[Row]] = {}
    for row in voted:
        runs.setdefault(run_key(row), []).append(row)
    if len(runs) > 1:
        block["by_run"] = {key or "(unnamed)": _block(group, level, bootstrap, seed) for key, group in runs.items()}
    elif key := next(iter(runs)):
        block["run"] = key
    return block


def _block(rows: list[Row], level: str, bootstrap: int, seed: int) -> dict[str, Any]:
    block: dict[str, Any] = {"criteria": {}}
    by_criterion: dict[str, list[Row]] = {}
    for row in rows:
        if row.get("criterion") is not None and _human(row) is not None:
            by_criterion.setdefault(str(row["criterion"]), []).append(row)
    for name, scored in by_criterion.items():
        vote = [r.get("predicted_vote") for r in scored]
        human = [float(_human(r)) for r in scored]  # type: ignore[arg-type]
        if level == "turn":
            figures = stats.turn_level(vote, human, bootstrap=bootstrap, seed=seed)
        else:
            figures = stats.summary_level(vote, human, [str(r.get("group")) for r in scored],
                                          bootstrap=bootstrap, seed=seed)
        figures["difference"] = score_difference(scored, level, bootstrap=bootstrap, seed=seed)
        block["criteria"][name] = figures
    judged = [r for r in rows if r.get("human_verdict") is not None and "verdict_vote" in r]
    if judged:
        verdicts = stats.verdict_agreement([r.get("verdict_vote") for r in judged],
                                           [r["human_verdict"] for r in judged])
        verdicts["difference"] = verdict_difference(judged, bootstrap=bootstrap, seed=seed)
        block["verdicts"] = verdicts
    block.update(_cost(rows))
    return block


def _cost(rows: list[Row]) -> dict[str, Any]:
    """Calls and cost of the final and of the vote, in total and per item (an item's rows summed)."""
    items = len({str(r.get("id")) for r in rows})

    def total(key: str) -> float:
        return sum(float(r[key]) for r in rows if _finite(r.get(key)))

    calls, vote_calls = int(total("calls")), int(total("calls_vote"))
    cost, vote_cost = total("cost_usd"), total("cost_usd_vote")
    return {
        "items": items,
        "calls": vote_calls, "cost_usd": round(vote_cost, 8),
        "calls_per_item": vote_calls / items if items else None,
        "final_calls": calls, "final_cost_usd": round(cost, 8),
        "final_calls_per_item": calls / items if items else None,
    }


def _paired(rows: Sequence[Row]) -> list[Row]:
    """Rows where the final and the vote both scored (and a human did)."""
    return [r for r in rows if _finite(r.get("predicted")) and _finite(r.get("predicted_vote"))]


def score_difference(rows: Sequence[Row], level: str, *, bootstrap: int = 1000, seed: int = 0) -> dict[str, Any]:
    """final - vote per correlation method on the rows both scored, with a paired bootstrap interval."""
    # in a canonical order (by group, then values): the figures and their intervals ignore the lines' order
    paired = sorted((str(r.get("group")), float(r["predicted"]), float(r["predicted_vote"]),
                     float(cast(float, _human(r)))) for r in _paired(rows))
    groups = [row[0] for row in paired]
    final, vote, human = [row[1] for row in paired], [row[2] for row in paired], [row[3] for row in paired]
    if level == "turn":
        return _turn_difference(final, vote, human, bootstrap, seed)
    return _group_difference(final, vote, human, groups, bootstrap, seed)


def _subtract(a: dict[str, float | None], b: dict[str, float | None]) -> dict[str, float | None]:
    return {m: (a[m] - b[m]) if a[m] is not None and b[m] is not None else None for m in METHODS}  # type: ignore[operator]


def _turn_difference(final: list[float], vote: list[float], human: list[float], b: int, seed: int) -> dict[str, Any]:
    """Over all rows: final - vote per method; the interval resamples rows, the same draw for both."""
    import numpy as np
    from scipy import stats as scipy_stats

    result: dict[str, Any] = _subtract(stats.correlations(final, human), stats.correlations(vote, human))
    result["n"] = len(final)
    result["ci"] = {m: [None, None] for m in METHODS}
    if b <= 0 or all(result[m] is None for m in METHODS):
        return result
    x, v, y = (np.asarray(values, dtype=float) for values in (final, vote, human))
    pearson, spearman, kendall = [], [], []
    for idx in stats.draws(len(x), b, seed, width=3):
        xs, vs, ys = x[idx], v[idx], y[idx]
        ranks = [scipy_stats.rankdata(m, axis=1) for m in (xs, vs, ys)]
        taus = np.full(len(idx), np.nan)
        varied = ((ys.min(axis=1) < ys.max(axis=1)) & (xs.min(axis=1) < xs.max(axis=1))
                  & (vs.min(axis=1) < vs.max(axis=1)))
        for i in np.flatnonzero(varied):
            taus[i] = scipy_stats.kendalltau(xs[i], ys[i]).statistic - scipy_stats.kendalltau(vs[i], ys[i]).statistic
        pearson.append(stats._rowwise_pearson(xs, ys) - stats._rowwise_pearson(vs, ys))
        spearman.append(stats._rowwise_pearson(ranks[0], ranks[2]) - stats._rowwise_pearson(ranks[1], ranks[2]))
        kendall.append(taus)
    result["ci"] = {"pearson": stats._interval(np.concatenate(pearson)),
                    "spearman": stats._interval(np.concatenate(spearman)),
                    "kendall": stats._interval(np.concatenate(kendall))}
    return result


def _group_difference(final: list[float], vote: list[float], human: list[float], groups: list[str],
                      b: int, seed: int) -> dict[str, Any]:
    """Summary level: per group (final - vote) of the within-group correlations, averaged over the groups where
    both are defined; the interval resamples those groups."""
    import numpy as np

    members: dict[str, list[int]] = {}
    for index, group in enumerate(groups):
        members.setdefault(group, []).append(index)
    per_group = []
    for indices in members.values():
        h = [human[i] for i in indices]
        diff = _subtract(stats.correlations([final[i] for i in indices], h),
                         stats.correlations([vote[i] for i in indices], h))
        if diff["pearson"] is not None:
            per_group.append([np.nan if diff[m] is None else diff[m] for m in METHODS])
    values = np.array(per_group, dtype=float).reshape(-1, len(METHODS))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(values, axis=0) if len(values) else np.full(len(METHODS), np.nan)
    result: dict[str, Any] = {m: float(means[j]) if np.isfinite(means[j]) else None for j, m in enumerate(METHODS)}
    result.update(n=len(final), groups_used=len(values), ci={m: [None, None] for m in METHODS})
    if b > 0 and len(values):
        with warnings.catch_warnings():  # a draw of groups none of which has a method defined: NaN, dropped
            warnings.simplefilter("ignore", RuntimeWarning)
            means = np.concatenate([np.nanmean(values[idx], axis=1)
                                    for idx in stats.draws(len(values), b, seed, width=len(METHODS))])
        result["ci"] = {m: stats._interval(means[:, j]) for j, m in enumerate(METHODS)}
    return result


def verdict_difference(rows: Sequence[Row], *, bootstrap: int = 1000, seed: int = 0) -> dict[str, Any]:
    """final - vote accuracy on the items where both gave a verdict, with a paired bootstrap interval."""
    import numpy as np

    paired = [r for r in rows if r.get("predicted_verdict") is not None and r.get("verdict_vote") is not None]
    gain = np.sort(np.array([(r["predicted_verdict"] == r["human_verdict"]) - (r["verdict_vote"] == r["human_verdict"])
                             for r in paired], dtype=float))  # sorted: the same draws in any line order
    result: dict[str, Any] = {"accuracy": float(gain.mean()) if gain.size else None, "n": int(gain.size),
                              "ci": {"accuracy": [None, None]}}
    if bootstrap > 0 and gain.size:
        means = np.concatenate([gain[idx].mean(axis=1) for idx in stats.draws(gain.size, bootstrap, seed)])
        result["ci"]["accuracy"] = stats._interval(means)
    return result


def figure(value: float | None, signed: bool = False) -> str:
    """A figure to 3 decimals ("n/a" when undefined); `signed` for a difference."""
    if value is None:
        return "n/a"
    value = 0.0 if abs(value) < 1e-12 else value  # rounding noise of equal figures is no sign
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def with_interval(value: float | None, interval: list[float | None], signed: bool = False) -> str:
    low, high = interval
    bounds = f" [{figure(low, signed)}, {figure(high, signed)}]" if low is not None and high is not None else ""
    return f"{figure(value, signed)}{bounds}"


def format_vote(block: dict[str, Any], title: str = "", why: dict[str, str] | None = None) -> list[str]:
    """The vote's lines of `meta`'s table: its agreement, final - vote with its interval, calls and cost; `why`
    says, per criterion, why the vote's correlation is undefined when it is."""
    title = title or block.get("run", "")
    lines = [f"vote before discussion{f' ({title})' if title else ''}: the agents' first answers, aggregated as "
             "the final; final - vote paired over the items both scored (95% bootstrap)"]
    for name, c in block["criteria"].items():
        figures = "  ".join(f"{m} {with_interval(c[m], c['ci'][m])}" for m in METHODS)
        lines.append(f"  {name}: vote n={c['n']} unscored={c['unscored']}  {figures}")
        if c["pearson"] is None and why and name in why:
            lines.append(f"  {name}: vote n/a because {why[name]}")
        d = c["difference"]
        gains = "  ".join(f"{m} {with_interval(d[m], d['ci'][m], signed=True)}" for m in METHODS)
        lines.append(f"  {name}: final - vote (n={d['n']})  {gains}")
        if d["pearson"] is None:
            lines.append(f"  {name}: final - vote n/a because the final's or the vote's correlation is undefined "
                         "on the items both scored")
    if v := block.get("verdicts"):
        d = v["difference"]
        lines.append(f"  verdicts: vote n={v['n']} accuracy={figure(v['accuracy'])} kappa={figure(v['kappa'])}; "
                     f"final - vote accuracy {with_interval(d['accuracy'], d['ci']['accuracy'], signed=True)} "
                     f"(n={d['n']})")
    per_item = block["final_calls_per_item"], block["calls_per_item"]
    lines.append(f"  cost: final {block['final_calls']} calls ${block['final_cost_usd']:.4f}"
                 f" ({_per(per_item[0])}/item); vote {block['calls']} calls ${block['cost_usd']:.4f}"
                 f" ({_per(per_item[1])}/item) over {block['items']} items")
    for key, run in block.get("by_run", {}).items():
        lines += format_vote(run, key)
    return lines


def _per(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"
