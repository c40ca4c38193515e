"""Trust or escalate: per judge a confidence threshold with a stated guarantee of agreement with people.

Jung, Brahman and Choi ("Trust or Escalate", ICLR 2025): on labelled calibration
items, a judge's threshold is chosen by fixed-sequence testing from the highest
confidence down. A candidate threshold is accepted while the exact one-sided
(Clopper-Pearson) upper bound, at level delta, of the disagreement rate among the
items at or above it stays at or below alpha; testing stops at the first
candidate that fails. Then, on new items like the calibration ones, the items the
judge trusts disagree with people at most alpha of the time, with probability at
least 1 - delta. Judges form a ladder, cheapest first: tier k is calibrated only on
the items the tiers before it did not trust; what no tier trusts goes to a person.

"Agree" is `domain.agrees`: the same verdict for a pair, |answer - human| <=
tolerance for a score. An item without a label takes no part in calibration; an
item without confidence (null: unscored) is never trusted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from debate_tui.domain import AGREE_TOLERANCE, agrees
from debate_tui.readfile import FileError, jsonl_objects, read_json, read_text

Row = dict[str, Any]
Key = tuple[str, str]
POLICY_KIND = "debate-tui trust policy"
POLICY_VERSION = 1
DEFAULT_MIN_TRUSTED = 30


class TrustError(ValueError):
    """The input cannot be calibrated or escalated; the message is the one line the user sees."""


# ----- the exact binomial bound -------------------------------------------------------------------------------

def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed exactly in log space."""
    if k < 0:
        return 0.0
    if k >= n or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    log_p, log_q = math.log(p), math.log1p(-p)
    terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q
             for i in range(k + 1)]
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


def upper_bound(k: int, n: int, delta: float) -> float:
    """The exact one-sided Clopper-Pearson upper bound of a rate with k events in n trials: the p at which
    P(X <= k) = delta (the Beta(k + 1, n - k) quantile at 1 - delta); 1 when k = n, found by bisection."""
    if n <= 0 or k >= n:
        return 1.0
    low, high = k / n, 1.0
    for _ in range(200):
        middle = (low + high) / 2
        if binom_cdf(k, n, middle) > delta:
            low = middle
        else:
            high = middle
        if high - low < 1e-13:
            break
    return high


# ----- judgments ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Judgment:
    """One tier's answer on one (id, criterion), as calibrate and escalate read it."""

    key: Key
    answer: float | str | None
    confidence: float | None
    human: float | str | None
    pairwise: bool
    cost: float | None
    row: Row

    def agrees(self, tolerance: float) -> bool | None:
        """Whether the answer agrees with the label; None without a label."""
        return None if self.human is None else agrees(self.answer, self.human, tolerance)


def finite_number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def judgment(row: Row, where: str) -> Judgment:
    """A line as a judgment; TrustError names the line when it has no confidence field or a bad one."""
    read = reading(row, where)
    if "confidence" not in row:
        raise TrustError(f"{where}: no confidence (calibrate and escalate need one on every line)")
    confidence = row["confidence"]
    if confidence is not None and (finite_number(confidence) is None or not 0 <= confidence <= 1):
        raise TrustError(f"{where}: confidence must be a number in [0, 1] or null, got {confidence!r}")
    return replace(read, confidence=None if read.answer is None else finite_number(confidence))


def reading(row: Row, where: str) -> Judgment:
    """A line as a judgment, whatever its confidence (None here): its key, answer, label and cost, as every
    command that reads judgments (calibrate, escalate, compare) takes them; TrustError when it has no id."""
    if "id" not in row:
        raise TrustError(f"{where}: no id")
    criterion = row.get("criterion")
    key = (str(row["id"]), "" if criterion is None else str(criterion))
    pairwise = "predicted_verdict" in row
    if pairwise:
        answer: float | str | None = row["predicted_verdict"] if row["predicted_verdict"] in ("1", "2", "0") else None
        human: float | str | None = row.get("human_verdict") if row.get("human_verdict") in ("1", "2", "0") else None
    else:
        answer = finite_number(row.get("predicted"))
        label = row.get("human")
        human = finite_number(label.get(criterion) if isinstance(label, dict) else label)
    return Judgment(key, answer, None, human, pairwise, finite_number(row.get("cost_usd")), row)


def joined(tiers: Sequence[Sequence[Row]], names: Sequence[str]) -> list[list[Judgment]]:
    """Per tier its judgments, in tier 1's order of keys; TrustError when a key is missing from a tier or repeated."""
    out: list[list[Judgment]] = []
    order: list[Key] = []
    for number, (rows, name) in enumerate(zip(tiers, names, strict=True)):
        by_key: dict[Key, Judgment] = {}
        for line, row in enumerate(rows, start=1):
            j = judgment(row, f"{name}:{line}")
            by_key[j.key] = j  # a later line supersedes an earlier one, as in a results file
        if number == 0:
            order = list(by_key)
        elif missing := [k for k in order if k not in by_key] or [k for k in by_key if k not in set(order)]:
            first = missing[0]
            raise TrustError(f"{name}: id {first[0]!r}{f' ({first[1]})' if first[1] else ''} does not join with "
                             f"{names[0]}; every tier must judge the same (id, criterion) lines")
        out.append([by_key[k] for k in order])
    return out


# ----- calibrate ----------------------------------------------------------------------------------------------

@dataclass
class TierFit:
    """One tier's calibration: its threshold (None: never trusts, `reason` says why) and the counts behind it."""

    threshold: float | None
    reached: int
    """Labelled items that reached this tier."""
    trusted: int = 0
    disagreed: int = 0
    bound: float | None = None
    """Upper bound of the disagreement among the trusted items (at level delta)."""
    reason: str | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    """Every candidate tested, top down: threshold, n, disagreed, upper bound, accepted."""

    @property
    def agreement(self) -> float | None:
        return None if not self.trusted else 1 - self.disagreed / self.trusted


def trusts(confidence: float | None, threshold: float | None) -> bool:
    return confidence is not None and threshold is not None and confidence >= threshold - 1e-12


def fit_tier(points: Sequence[tuple[float | None, bool]], alpha: float, delta: float, min_trusted: int) -> TierFit:
    """Fixed-sequence testing over (confidence, agreed) of the labelled items reaching a tier."""
    scored = sorted(((c, ok) for c, ok in points if c is not None), key=lambda p: -p[0])
    fit = TierFit(None, len(points))
    candidates = sorted({c for c, _ in scored}, reverse=True)
    disagreed, n, at = 0, 0, 0
    for candidate in candidates:
        while at < len(scored) and scored[at][0] >= candidate:
            disagreed += not scored[at][1]
            n += 1
            at += 1
        if n < min_trusted:
            continue
        bound = upper_bound(disagreed, n, delta)
        accepted = bound <= alpha
        fit.steps.append({"threshold": candidate, "n": n, "disagreed": disagreed, "upper_bound": bound,
                          "accepted": accepted})
        if not accepted:
            break
        fit.threshold, fit.trusted, fit.disagreed, fit.bound = candidate, n, disagreed, bound
    if fit.threshold is None:
        fit.reason = _why_not(fit, len(scored), min_trusted, alpha)
    return fit


def _why_not(fit: TierFit, scored: int, min_trusted: int, alpha: float) -> str:
    if scored < min_trusted:
        return (f"only {scored} labelled items with a confidence reach this tier, fewer than --min-trusted "
                f"{min_trusted}")
    first = fit.steps[0]
    return (f"already at its top {first['n']} items (confidence >= {first['threshold']:.4g}) the disagreement "
            f"bound is {first['upper_bound']:.3f} > alpha {alpha:g} ({first['disagreed']} of {first['n']} disagree)")


def calibrate(tiers: list[list[Judgment]], alpha: float, delta: float, tolerance: float = AGREE_TOLERANCE,
              min_trusted: int = DEFAULT_MIN_TRUSTED) -> list[TierFit]:
    """Each tier fitted on the labelled items no earlier tier trusted."""
    labelled = [i for i, j in enumerate(tiers[0]) if j.human is not None]
    if len(labelled) < min_trusted:
        raise TrustError(f"{len(labelled)} labelled items, fewer than --min-trusted {min_trusted}: nothing can "
                         "be calibrated (give labels with the results, or with --labels FILE)")
    reaching = labelled
    fits = []
    for judgments in tiers:
        fit = fit_tier([(judgments[i].confidence, bool(judgments[i].agrees(tolerance))) for i in reaching],
                       alpha, delta, min_trusted)
        fits.append(fit)
        reaching = [i for i in reaching if not trusts(judgments[i].confidence, fit.threshold)]
    return fits


# ----- escalate -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Decision:
    key: Key
    tier: int | None
    """1-based; None: no tier trusted it."""
    judgment: Judgment | None


def escalate(tiers: list[list[Judgment]], thresholds: Sequence[float | None]) -> list[Decision]:
    """Per line, the first tier whose confidence reaches its threshold, else a person."""
    out = []
    for i, first in enumerate(tiers[0]):
        chosen = next(((k + 1, t[i]) for k, t in enumerate(tiers) if trusts(t[i].confidence, thresholds[k])), None)
        out.append(Decision(first.key, chosen[0], chosen[1]) if chosen else Decision(first.key, None, None))
    return out


def label_of(tiers: list[list[Judgment]], index: int) -> float | str | None:
    """The human label of a line, from the first tier that carries it."""
    return next((t[index].human for t in tiers if t[index].human is not None), None)


def escalation_summary(tiers: list[list[Judgment]], decisions: list[Decision], tolerance: float) -> dict[str, Any]:
    """Counts per tier, coverage, agreement on the trusted labelled items, and what the needed tiers cost."""
    items = len(decisions)
    counts = [sum(d.tier == k + 1 for d in decisions) for k in range(len(tiers))]
    per_tier = [{"tier": k + 1, "trusted": n, "share": n / items if items else 0.0} for k, n in enumerate(counts)]
    trusted = [(i, d) for i, d in enumerate(decisions) if d.judgment is not None]
    scored = [agrees(d.judgment.answer, label, tolerance) for i, d in trusted
              if d.judgment is not None and (label := label_of(tiers, i)) is not None]
    summary: dict[str, Any] = {
        "items": items, "tiers": per_tier, "needs_human": items - len(trusted),
        "coverage": len(trusted) / items if items else 0.0,
        "agreement": sum(scored) / len(scored) if scored else None, "agreement_n": len(scored),
    }
    if all(j.cost is not None for t in tiers for j in t):
        needed = sum(t[i].cost or 0.0 for i, d in enumerate(decisions)
                     for k, t in enumerate(tiers) if d.tier is None or k < d.tier)
        summary["cost_usd"] = round(needed, 8)
        summary["cost_usd_last_tier"] = round(sum(j.cost or 0.0 for j in tiers[-1]), 8)
    return summary


def decision_lines(tiers: list[list[Judgment]], decisions: list[Decision]) -> list[Row]:
    """escalate's output: per line the trusted tier's answer in the input's own field, or needs_human."""
    lines = []
    for i, decision in enumerate(decisions):
        first = tiers[0][i]
        line: Row = {"id": first.row["id"]}
        if "criterion" in first.row:
            line["criterion"] = first.row["criterion"]
        field_name = "predicted_verdict" if first.pairwise else "predicted"
        if decision.judgment is not None:
            line[field_name] = decision.judgment.row.get(field_name)
        line |= {"confidence": decision.judgment.confidence if decision.judgment else None, "tier": decision.tier,
                 "status": "trusted" if decision.judgment else "needs_human"}
        for label in ("human", "human_verdict"):
            carried = next((t[i].row[label] for t in tiers if t[i].row.get(label) is not None), None)
            if carried is not None:
                line[label] = carried
        lines.append(line)
    return lines


# ----- files --------------------------------------------------------------------------------------------------

def read_jsonl(path: Path) -> list[Row]:
    """A tier's lines (bounded, split at "\\n" only: `readfile`); TrustError names the file and line."""
    try:
        rows = [row for _, row in jsonl_objects(read_text(path, "results"), str(path))]
    except FileError as exc:
        raise TrustError(str(exc)) from None
    if not rows:
        raise TrustError(f"{path}: no judgments")
    return rows


def policy_of(fits: list[TierFit], tiers: list[list[Judgment]], names: Sequence[str],
              tasks: Sequence[dict[str, Any] | None], *, alpha: float, delta: float, tolerance: float,
              min_trusted: int) -> dict[str, Any]:
    """The policy file's content (documented in docs/TRUST.md, versioned by `version`)."""
    labelled = fits[0].reached
    out: list[dict[str, Any]] = []
    for number, (fit, name, task) in enumerate(zip(fits, names, tasks, strict=True), start=1):
        out.append({
            "tier": number, "file": str(name), "threshold": fit.threshold, "never_trusts": fit.reason,
            "reached": fit.reached, "trusted": fit.trusted, "share": fit.trusted / labelled if labelled else 0.0,
            "agreement": fit.agreement, "disagreement_bound": fit.bound,
            "guaranteed_agreement": None if fit.threshold is None else 1 - alpha,
            "passed_on": fit.reached - fit.trusted, "pairwise": tiers[number - 1][0].pairwise,
            "steps": fit.steps, "task": task,
        })
    left = fits[-1].reached - fits[-1].trusted
    return {"kind": POLICY_KIND, "version": POLICY_VERSION, "alpha": alpha, "delta": delta, "tolerance": tolerance,
            "min_trusted": min_trusted, "lines": len(tiers[0]), "calibrated_on": labelled, "tiers": out,
            "needs_human": left, "needs_human_share": left / labelled if labelled else 0.0}


def read_policy(path: Path) -> dict[str, Any]:
    """A policy written by `calibrate`; TrustError for anything else (or a newer version)."""
    try:
        policy = read_json(path, "json")
    except FileError as exc:
        raise TrustError(f"cannot read the policy: {exc}") from None
    if not isinstance(policy, dict) or policy.get("kind") != POLICY_KIND:
        raise TrustError(f"{path} is not a trust policy (write one with debate-tui calibrate)")
    if policy.get("version") != POLICY_VERSION:
        raise TrustError(f"{path}: policy version {policy.get('version')!r}; this debate-tui reads {POLICY_VERSION}")
    tiers = policy.get("tiers")
    if not isinstance(tiers, list) or not tiers or any(
            not isinstance(t, dict) or (t.get("threshold") is not None and finite_number(t.get("threshold")) is None)
            for t in tiers):
        raise TrustError(f"{path}: its tiers are missing or malformed")
    return policy


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def format_calibration(policy: dict[str, Any]) -> str:
    """The table calibrate prints."""
    alpha, delta = policy["alpha"], policy["delta"]
    lines = [f"calibrated on {policy['calibrated_on']} labelled items; alpha {alpha:g}, delta {delta:g}, "
             f"tolerance {policy['tolerance']:g}",
             f"{'tier':<5}{'file':<28}{'threshold':>10}{'trusted':>16}{'agreement':>11}{'guaranteed':>12}"
             f"{'passed on':>11}"]
    for tier in policy["tiers"]:
        threshold = "never" if tier["threshold"] is None else f"{tier['threshold']:.4g}"
        guaranteed = "-" if tier["guaranteed_agreement"] is None else f">= {100 * tier['guaranteed_agreement']:.0f}%"
        name = Path(tier["file"]).name
        trusted = f"{tier['trusted']} ({_percent(tier['share'])})"
        lines.append(f"{tier['tier']:<5}{name[:27]:<28}{threshold:>10}{trusted:>16}{_percent(tier['agreement']):>11}"
                     f"{guaranteed:>12}{tier['passed_on']:>11}")
        if tier["never_trusts"]:
            lines.append(f"     never trusts: {tier['never_trusts']}")
    lines.append(f"left for a person: {policy['needs_human']} ({_percent(policy['needs_human_share'])})")
    lines.append(f"guarantee: the items a tier trusts agree with people at least {100 * (1 - alpha):.0f}% of the "
                 f"time, with probability at least {100 * (1 - delta):.0f}% (per tier; see docs/TRUST.md)")
    return "\n".join(lines)


# ----- risk against coverage ----------------------------------------------------------------------------------

def _tier_points(row: Row, tolerance: float) -> list[tuple[str, float | None, bool]]:
    """(curve name, confidence, agreed) of a labelled line: one per tier of a policy batch, else one."""
    label: Any = row.get("human_verdict") if "predicted_verdict" in row else row.get("human")
    label = label.get(row.get("criterion")) if isinstance(label, dict) else label
    if label is None:
        return []
    field_name = "predicted_verdict" if "predicted_verdict" in row else "predicted"
    if isinstance(row.get("tiers"), list):
        return [(f"tier {t.get('tier')} ({t.get('protocol', '?')})", finite_number(t.get("confidence")),
                 agrees(t.get(field_name), label, tolerance)) for t in row["tiers"] if isinstance(t, dict)]
    return [(str(row.get("protocol") or "judge"), finite_number(row.get("confidence")),
             agrees(row.get(field_name), label, tolerance))]


def risk_coverage(rows: Sequence[Row], tolerance: float = AGREE_TOLERANCE) -> dict[str, list[dict[str, Any]]]:
    """Per tier (or protocol), at each confidence threshold from the top down: the share of its labelled lines
    trusted and their agreement with people. Lines without confidence count in the share, never as trusted."""
    grouped: dict[str, list[tuple[float | None, bool]]] = {}
    for row in rows:
        for name, confidence, agreed in _tier_points(row, tolerance):
            grouped.setdefault(name, []).append((confidence, agreed))
    curves: dict[str, list[dict[str, Any]]] = {}
    for name, points in grouped.items():
        scored = sorted((p for p in points if p[0] is not None), key=lambda p: -(p[0] or 0.0))
        curve, agreed_so_far = [], 0
        for index, (confidence, agreed) in enumerate(scored):
            agreed_so_far += agreed
            if index + 1 == len(scored) or scored[index + 1][0] != confidence:
                curve.append({"threshold": confidence, "trusted": index + 1, "coverage": (index + 1) / len(points),
                              "agreement": agreed_so_far / (index + 1)})
        curves[name] = curve
    return curves


def format_risk_coverage(curves: dict[str, list[dict[str, Any]]], alpha: float, rows: int = 12) -> str:
    """The table: per curve at most `rows` thresholds, spread over the coverage; * marks agreement >= 1 - alpha
    (observed on these lines, no bound: calibrate gives the guarantee)."""
    lines = [f"risk against coverage (agreement among the trusted lines; * = at least {100 * (1 - alpha):.0f}%, "
             f"alpha {alpha:g}, observed, no bound)"]
    for name, curve in curves.items():
        lines.append(f"{name}: {len(curve)} thresholds")
        lines.append(f"  {'threshold':>10}{'trusted':>9}{'coverage':>10}{'agreement':>11}")
        step = max(1, math.ceil(len(curve) / rows))
        shown = curve[::step] if curve[-1] in curve[::step] else [*curve[::step], curve[-1]]
        for point in shown:
            mark = " *" if point["agreement"] >= 1 - alpha - 1e-12 else ""
            lines.append(f"  {point['threshold']:>10.4g}{point['trusted']:>9}{_percent(point['coverage']):>10}"
                         f"{_percent(point['agreement']):>11}{mark}")
    if not curves:
        lines.append("  no labelled line carries a confidence")
    return "\n".join(lines)
