"""The alarm: does a trust policy's guarantee still hold? Checked on blind audits of the items it trusted.

The guarantee says the items the ladder trusts disagree with people at most alpha
of the time (with probability 1 - delta). Among the audited trusted items (per
tier, and all together) k of n disagree; the exact one-sided binomial p-value is
P(X >= k) for X ~ Binomial(n, alpha), the chance of that many disagreements if the
true rate were alpha. The guarantee is taken as violated (`holds` false) when that
p-value is below delta: so a judge that still meets alpha raises a false alarm at
most delta of the time. Fewer than MIN_AUDITED audited items: `holds` is null, with
the reason.

Only labels from blind audits drawn at random from the trusted items (`source:
audit`, `blind: true`, see `review --audit`) are counted by default: a label made
while seeing the judge's answer leans toward it, and one made on an escalated item
is not drawn like the trusted ones. `any_labels` counts every label.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from debate_tui.domain import agrees

Row = dict[str, Any]
Key = tuple[str, str | None]
MIN_AUDITED = 10
BLIND_ONLY = "blind audit labels only (source audit, blind true)"
ANY = "every label (--any-labels)"


def p_value(disagreements: int, audited: int, alpha: float) -> float:
    """P(X >= disagreements), X ~ Binomial(audited, alpha): scipy's exact one-sided test."""
    from scipy.stats import binomtest  # 1.6 s to import: only when an audit is checked

    return float(binomtest(disagreements, audited, alpha, alternative="greater").pvalue)


def verdict(disagreements: int, audited: int, alpha: float, delta: float) -> dict[str, Any]:
    """One row of the check: counts, observed rate, p-value and whether the guarantee holds (None: too few)."""
    row: dict[str, Any] = {"audited": audited, "disagreements": disagreements,
                           "rate": disagreements / audited if audited else None,
                           "p_value": p_value(disagreements, audited, alpha) if audited else None}
    if audited < MIN_AUDITED:
        row |= {"holds": None, "reason": f"only {audited} audited trusted item{'s' * (audited != 1)}, fewer than "
                                         f"{MIN_AUDITED}: cannot tell"}
    else:
        violated = row["p_value"] < delta
        row |= {"holds": not violated, "reason": (
            f"p = {row['p_value']:.4g} {'<' if violated else '>='} delta {delta:g}: "
            + (f"{disagreements} of {audited} disagree, more than alpha {alpha:g} explains" if violated
               else "no more disagreement than alpha allows"))}
    return row


@dataclass(frozen=True)
class Label:
    value: float | str
    counted: bool


def label_keys(line: Row) -> list[tuple[Key, float | str]]:
    """What a label line says: (id, criterion) -> answer; a `dataset` line's scores per criterion, and a verdict
    without a criterion for every criterion of its id."""
    ident = str(line.get("id"))
    criterion = line.get("criterion")
    out: list[tuple[Key, float | str]] = []
    human = line.get("human")
    if isinstance(human, dict):
        out += [((ident, str(c)), float(v)) for c, v in human.items() if _number(v)]
    elif isinstance(human, int | float) and not isinstance(human, bool) and criterion is not None:
        out.append(((ident, str(criterion)), float(human)))
    if line.get("human_verdict") in ("1", "2", "0"):
        out.append(((ident, None if criterion is None else str(criterion)), str(line["human_verdict"])))
    return out


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def read_labels(lines: list[Row], any_labels: bool) -> tuple[dict[Key, Label], dict[str, int]]:
    """The labels by key (a later line wins) and how many lines were counted or left out."""
    out: dict[Key, Label] = {}
    counted = 0
    for line in lines:
        ok = any_labels or (line.get("source") == "audit" and line.get("blind") is True)
        counted += ok
        for key, value in label_keys(line):
            out[key] = Label(value, ok)
    return out, {"lines": len(lines), "counted": counted, "left_out": len(lines) - counted}


def check(rows: list[Row], labels: dict[Key, Label], policy: Row) -> dict[str, Any]:
    """Per tier and all: the audited trusted lines, their disagreements and the test; `holds` overall."""
    alpha, delta, tolerance = float(policy["alpha"]), float(policy["delta"]), float(policy["tolerance"])
    per_tier: dict[int, list[bool]] = {}
    matched = 0
    for row in rows:
        tier = row.get("tier")
        if not isinstance(tier, int) or isinstance(tier, bool) or row.get("status") not in ("completed", "trusted"):
            continue
        ident, criterion = str(row.get("id")), row.get("criterion")
        label = labels.get((ident, None if criterion is None else str(criterion))) or labels.get((ident, None))
        if label is None or not label.counted:
            continue
        answer = row.get("predicted_verdict") if "predicted_verdict" in row else row.get("predicted")
        matched += 1
        per_tier.setdefault(tier, []).append(not agrees(answer, label.value, tolerance))
    tiers = [{"tier": tier, **_described(rows, tier, policy), **verdict(sum(flags), len(flags), alpha, delta)}
             for tier, flags in sorted(per_tier.items())]
    every = [flag for flags in per_tier.values() for flag in flags]
    overall = {"tier": "all", **verdict(sum(every), len(every), alpha, delta)}
    holds = False if any(r["holds"] is False for r in [*tiers, overall]) else overall["holds"]
    return {"alpha": alpha, "delta": delta, "tolerance": tolerance, "tiers": tiers, "all": overall,
            "matched": matched, "holds": holds}


def _described(rows: list[Row], tier: int, policy: Row) -> Row:
    """The tier's protocol and threshold, as the ladder's lines recorded them; else (the lines of `escalate`,
    numbered as the policy is) as the policy says."""
    for row in rows:
        for entry in row.get("tiers") or []:
            if isinstance(entry, dict) and entry.get("tier") == tier:
                return {"protocol": entry.get("protocol"), "threshold": entry.get("threshold")}
    entry = next((t for t in policy.get("tiers") or [] if isinstance(t, dict) and t.get("tier") == tier), {})
    return {"protocol": (entry.get("task") or {}).get("protocol"), "threshold": entry.get("threshold")}


def format_check(result: dict[str, Any]) -> str:
    """The table `audit` prints before its JSON line."""
    used = result["labels_used"]
    lines = [f"alpha {result['alpha']:g}, delta {result['delta']:g}; labels: {used['rule']} "
             f"({used['counted']} of {used['lines']} lines counted, {result['matched']} on trusted lines)",
             f"{'tier':<6}{'protocol':<10}{'audited':>8}{'disagree':>9}{'rate':>8}{'p-value':>10}  holds"]
    for row in [*result["tiers"], result["all"]]:
        rate = "-" if row["rate"] is None else f"{100 * row['rate']:.1f}%"
        p = "-" if row["p_value"] is None else f"{row['p_value']:.4g}"
        holds = {True: "yes", False: "NO", None: "can't tell"}[row["holds"]]
        lines.append(f"{row['tier']!s:<6}{row.get('protocol') or '':<10}{row['audited']:>8}{row['disagreements']:>9}"
                     f"{rate:>8}{p:>10}  {holds}: {row['reason']}")
    lines.append({True: "The guarantee holds on these audits.", None: "Too few audits to tell.",
                  False: "VIOLATED: the trusted items disagree with people more than the policy guarantees; "
                         "calibrate again with the new labels."}[result["holds"]])
    return "\n".join(lines)
