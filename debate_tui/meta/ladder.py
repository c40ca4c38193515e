"""`batch ITEMS --policy POLICY.json`: the trust ladder run live, tier by tier.

Tier 1 judges every item; tier 2 only the items on which tier 1 did not reach its
threshold on some criterion; and so on (docs/TRUST.md). Each tier is an ordinary
batch with the task settings the policy recorded for it (protocol, options,
criteria, agents), writing its own results file beside the output
(`RESULTS.tier1.jsonl`, ...): so a rerun resumes tier by tier, and the response
cache, `--shard` and `--provider-batch` work per tier as in any batch.

The output file is then composed from the tiers' files, one line per (id,
criterion): the first tier that trusts its answer gives the line (its fields,
and `tier`, `confidence`), else the line is `needs_human` with no answer, for
`debate-tui review`. Every line has `tiers`: each tier that ran on the item,
its answer, confidence, threshold, calls and cost, in order; `calls`, the token
counts and `cost_usd` are summed over those tiers, so a column's sum is still
the whole batch's. A line a person has already decided is kept as it is.
An item that failed (or was cancelled) at a tier stops there: it is not
escalated, its line says so, and a rerun tries that tier again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debate_tui.batch.items import Item
from debate_tui.batch.results import ResultsFile, Row, row_key
from debate_tui.domain import AgentSpec, Criterion, Session, Task
from debate_tui.endpoints import POLICY_FILE, own_connections, seal
from debate_tui.meta.trust import TrustError, read_policy, trusts

if TYPE_CHECKING:  # `run --policy` and the TUI read this module without running a batch
    from debate_tui.batch.runner import BatchRun

SUMMED = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd")
ANSWERS = ("predicted", "predicted_verdict")


class LadderError(Exception):
    """The policy cannot be run live; the message is the one line the user sees."""


@dataclass(frozen=True)
class Tier:
    number: int
    threshold: float | None
    template: Session
    guarantee: str = ""
    """What trusting this tier means, e.g. ">= 85% agreement at 90% confidence, calibrated on 412 items"."""
    alpha: float | None = None
    delta: float | None = None
    calibrated_on: int | None = None
    """Labelled items the whole policy was calibrated on (tier 1 saw them all)."""
    reached: int | None = None
    """Of those, the items that reached this tier: what its threshold was chosen on."""

    def trusts(self, confidence: float | None) -> bool:
        return trusts(confidence, self.threshold)

    @property
    def protocol(self) -> str:
        return self.template.protocol

    @property
    def label(self) -> str:
        """What a person reads: "jury" for a single-judge tier with a jury (its protocol is "single")."""
        return "jury" if self.protocol == "single" and self.template.options.get("jury") else self.protocol


def load_tiers(path: Path, first: Task, own: Callable[[str], Mapping[str, Any]],
               say: Callable[[str], None]) -> list[Tier]:
    """The policy's tiers that trust something, as session templates (a tier that never trusts would only cost:
    it is left out); LadderError when a tier has no task or the criteria differ.

    A policy may not choose where a key goes: its agents call the person's own endpoints (`own`: model -> its
    api_base and api_key_env in their config.toml), and `say` is told, in one line, what the policy asked instead."""
    try:
        policy = read_policy(path)
    except TrustError as exc:
        raise LadderError(str(exc)) from None
    tiers: list[Tier] = []
    for entry in policy["tiers"]:
        task = entry.get("task")
        if not isinstance(task, dict):
            raise LadderError(f"{path}: tier {entry.get('tier')} has no task settings (its results did not come "
                              "from this product's sessions), so it cannot be run live")
        try:
            template = Session(protocol=task["protocol"], options=dict(task.get("options") or {}),
                               criteria=[Criterion.model_validate(c) for c in task["criteria"]],
                               agents=[AgentSpec.model_validate(a) for a in task["agents"]], task=first,
                               spec=task.get("spec"))
        except (KeyError, TypeError, ValueError) as exc:
            raise LadderError(f"{path}: tier {entry.get('tier')}'s task settings are malformed ({exc})") from None
        for note in own_connections(template.agents, f"{POLICY_FILE} {path}", own):
            say(note)
        template.seal = seal(template.agents)  # the connections are the person's own now
        guarantee = (f">= {100 * (1 - policy['alpha']):.0f}% agreement at {100 * (1 - policy['delta']):.0f}% "
                     f"confidence, calibrated on {entry.get('reached')} items")
        tiers.append(Tier(len(tiers) + 1, entry.get("threshold"), template, guarantee, policy.get("alpha"),
                          policy.get("delta"), policy.get("calibrated_on"), entry.get("reached")))
    tiers = [t for t in tiers if t.threshold is not None]
    if not tiers:
        raise LadderError(f"{path}: no tier of this policy trusts anything (calibrate found no threshold), so "
                          "every item would go to a person; nothing to run")
    names = [[c.name for c in t.template.criteria] for t in tiers]
    if any(n != names[0] for n in names):
        raise LadderError(f"{path}: the tiers judge different criteria ({'; '.join(', '.join(n) for n in names)})")
    return tiers


def tier_path(out: Path, number: int) -> Path:
    """RESULTS.jsonl -> RESULTS.tier2.jsonl."""
    return out.with_name(f"{out.stem}.tier{number}{out.suffix or '.jsonl'}")


def latest(rows: list[Row]) -> dict[tuple[str, str], Row]:
    out: dict[tuple[str, str], Row] = {}
    for row in rows:
        out[row_key(row)] = row
    return out


def trusted(row: Row | None, threshold: float | None) -> bool:
    return row is not None and row.get("status") == "completed" and trusts(row.get("confidence"), threshold)


@dataclass
class TierRun:
    tier: Tier
    batch: BatchRun
    items: int
    passed_on: int = 0
    trusted: int = 0


MakeBatch = Callable[[Session, list[Item], ResultsFile], "BatchRun"]


@dataclass
class LadderRun:
    items: list[Item]
    tiers: list[Tier]
    results: ResultsFile
    make_batch: MakeBatch
    runs: list[TierRun] = field(default_factory=list)
    stop_reason: str | None = None

    def stop(self, reason: str) -> None:
        """Ctrl+C: stop the tier that runs; no later tier starts."""
        self.stop_reason = self.stop_reason or reason
        if self.runs:
            self.runs[-1].batch.stop(reason)

    async def run(self) -> None:
        remaining = self.items
        names = [c.name for c in self.tiers[0].template.criteria]
        for tier in self.tiers:
            if not remaining or self.stop_reason is not None:
                break
            results = ResultsFile(tier_path(self.results.path, tier.number))
            batch = self.make_batch(tier.template, remaining, results)
            run = TierRun(tier, batch, len(remaining))
            self.runs.append(run)
            await batch.run()
            if batch.stop_reason is not None:
                self.stop_reason = batch.stop_reason
                break
            rows = latest(results.read().rows)
            escalated = [item for item in remaining if any(
                rows.get((item.id, name), {}).get("status") in ("completed", "needs_human")
                and not trusted(rows.get((item.id, name)), tier.threshold) for name in names)]
            run.trusted = sum(trusted(rows.get((i.id, n)), tier.threshold) for i in remaining for n in names)
            run.passed_on = len(escalated)
            remaining = escalated
        with self.results.locked("a batch"):
            self.results.rewrite(self.compose())

    def compose(self) -> list[Row]:
        """The output's lines from the tiers' files; lines a person decided are kept."""
        kept = {row_key(r): r for r in self.results.read().rows if r.get("decided_by")}
        tier_rows = [latest(ResultsFile(tier_path(self.results.path, t.number)).read().rows) for t in self.tiers]
        lines = []
        for item in self.items:
            for criterion in self.tiers[0].template.criteria:
                key = (item.id, criterion.name)
                if key in kept:
                    lines.append(kept[key])
                elif (line := self._line(key, tier_rows)) is not None:
                    lines.append(line)
        return lines

    def _line(self, key: tuple[str, str], tier_rows: list[dict[tuple[str, str], Row]]) -> Row | None:
        ran: list[tuple[Tier, Row]] = []
        for tier, rows in zip(self.tiers, tier_rows, strict=True):
            row = rows.get(key)
            if row is None:
                break
            ran.append((tier, row))
            if trusted(row, tier.threshold) or row.get("status") not in ("completed", "needs_human"):
                break
        if not ran:
            return None
        tier, row = ran[-1]
        line = dict(row)
        for name in SUMMED:
            line[name] = round(sum(r.get(name) or 0 for _, r in ran), 8)
        line["tiers"] = [tier_entry(t, r) for t, r in ran]
        if trusted(row, tier.threshold):
            line |= {"tier": tier.number, "confidence": row.get("confidence")}
        elif row.get("status") in ("completed", "needs_human"):
            line |= {"tier": None, "confidence": None, "status": "needs_human"}
            for name in ANSWERS:
                if name in line:
                    line[name] = None
        else:
            line["tier"] = None
        return line

    def summary(self) -> dict[str, Any]:
        """The batch summary over every tier, with per-tier counts and cost."""
        summaries = [run.batch.summary() for run in self.runs]
        lines = self.results.read().rows
        out = dict(summaries[0]) if summaries else {}
        for name in ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "rate_limited", "unscored",
                     "truncated", "elapsed_s"):
            out[name] = round(sum(s.get(name) or 0 for s in summaries), 6)
        out["cost_usd"] = round(sum(s["cost_usd"] for s in summaries), 6)
        out["failed"] = sum(s["failed"] for s in summaries)
        out["needs_human"] = len({r.get("id") for r in lines if r.get("status") == "needs_human"})
        out |= {"out": str(self.results.path), "stopped": self.stop_reason,
                "tiers": [{"tier": run.tier.number, "protocol": run.tier.protocol, "label": run.tier.label,
                           "threshold": run.tier.threshold,
                           "items": run.items, "trusted": run.trusted, "passed_on": run.passed_on,
                           "done": s["done"], "skipped": s["skipped"], "calls": s["calls"],
                           "cost_usd": s["cost_usd"], "results": str(run.batch.results.path)}
                          for run, s in zip(self.runs, summaries, strict=True)],
                "lines_trusted": sum(1 for r in lines if r.get("tier") is not None)}
        return out


def tier_entry(tier: Tier, row: Row) -> Row:
    """What the `tiers` list keeps of one tier's line."""
    entry: Row = {"tier": tier.number, "protocol": tier.protocol, "label": tier.label}
    entry |= {name: row[name] for name in ANSWERS if name in row}
    entry |= {"confidence": row.get("confidence"), "threshold": tier.threshold,
              "trusted": trusted(row, tier.threshold), "status": row.get("status"), "calls": row.get("calls"),
              "cost_usd": row.get("cost_usd"), "session": row.get("session")}
    return entry
