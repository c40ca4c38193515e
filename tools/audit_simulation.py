"""How often does `debate-tui audit` raise a false alarm, and how often does it catch a judge that drifted?

    python tools/audit_simulation.py [--audits 1000] [--alpha 0.2] [--delta 0.1] [--seed 0]

The items are real: GPT-3.5's released G-Eval judgments of Topical-Chat (20 samples
per response and criterion, read with Chiang & Lee's rule; answer the samples' mode,
its confidence their share at the mode), set against the human mean, every criterion
pooled. "Disagree" is `domain.agrees`, as `audit` counts it. No call is made.

The trusted items' true disagreement is set by drawing each audited item from the
disagreeing items with probability `rate` and from the agreeing ones otherwise (the
shipped data's own rate is what it is; this fixes it at the value under study). Each
audit draws `size` items that way, counts the disagreements and asks
`meta.audit.verdict`, exactly as the command does, whether the guarantee holds.

- rate = alpha: the share of audits of 50 that say "violated" is the false-alarm rate;
  the exact one-sided test keeps it at or below delta.
- rate = 2 alpha: the share of audits of 25, 50 and 100 that say "violated" is the
  power; the exact probability of each (binomial, no simulation) is printed beside it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from debate_tui.domain import agrees
from debate_tui.meta.audit import MIN_AUDITED, p_value, verdict
from debate_tui.meta.datasets import TOPICAL_CHAT_CRITERIA, DataRoot, data_dir

Judged = tuple[float | str | None, float | str | None]
"""(the judge's answer, the human label)."""


@dataclass(frozen=True)
class Pools:
    agreeing: list[Judged]
    disagreeing: list[Judged]


def pools(judged: Sequence[Judged], tolerance: float = 0.5) -> Pools:
    return Pools([j for j in judged if agrees(*j, tolerance)], [j for j in judged if not agrees(*j, tolerance)])


def alarm_share(pools: Pools, rate: float, size: int, audits: int, alpha: float, delta: float, seed: int,
                tolerance: float = 0.5) -> float:
    """The share of `audits` random audits of `size` items, with true disagreement `rate`, that say violated."""
    rng = random.Random(seed)
    alarms = 0
    for _ in range(audits):
        drawn = [rng.choice(pools.disagreeing if rng.random() < rate else pools.agreeing) for _ in range(size)]
        disagreements = sum(not agrees(answer, label, tolerance) for answer, label in drawn)
        alarms += verdict(disagreements, size, alpha, delta)["holds"] is False
    return alarms / audits


def exact_alarm(rate: float, size: int, alpha: float, delta: float) -> float:
    """The same share without simulation: P(X >= k*) for X ~ Binomial(size, rate), k* the fewest disagreements
    whose p-value is below delta."""
    if size < MIN_AUDITED:
        return 0.0
    first = next((k for k in range(size + 1) if p_value(k, size, alpha) < delta), None)
    return 0.0 if first is None else p_value(first, size, rate)


def geval_pairs(root: DataRoot) -> list[Judged]:
    try:
        from tools.trust_study import geval_judgments
    except ModuleNotFoundError:  # run as `python tools/audit_simulation.py`: tools/ is on the path, not its parent
        from trust_study import geval_judgments

    return [(line["predicted"], line["human"]) for criterion in TOPICAL_CHAT_CRITERIA
            for line in geval_judgments(criterion, root)]


def study(pools: Pools, audits: int, alpha: float, delta: float, seed: int) -> dict[str, Any]:
    rows = [{"case": "false alarm", "rate": alpha, "size": 50}]
    rows += [{"case": "power", "rate": 2 * alpha, "size": size} for size in (25, 50, 100)]
    for number, row in enumerate(rows):
        row["alarms"] = alarm_share(pools, row["rate"], row["size"], audits, alpha, delta, seed + number)
        row["exact"] = exact_alarm(row["rate"], row["size"], alpha, delta)
    return {"alpha": alpha, "delta": delta, "audits": audits, "seed": seed, "items": len(pools.agreeing) + len(
        pools.disagreeing), "disagreeing": len(pools.disagreeing), "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--audits", type=int, default=1000)
    parser.add_argument("--alpha", type=float, default=0.2)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    result = study(pools(geval_pairs(DataRoot(data_dir()))), args.audits, args.alpha, args.delta, args.seed)
    print(f"G-Eval Topical-Chat judgments: {result['items']} (all criteria), {result['disagreeing']} disagree with "
          f"the human mean; alpha {args.alpha:g}, delta {args.delta:g}, {args.audits} audits per row")
    for row in result["rows"]:
        print(f"{row['case']:<12} true disagreement {row['rate']:.2f}, audits of {row['size']:>3}: "
              f"alarm in {100 * row['alarms']:.1f}% (exact {100 * row['exact']:.1f}%)")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
