"""Does the trust guarantee hold on items the thresholds never saw? Random calibration/test splits on shipped data.

    python tools/trust_study.py [--splits 500] [--alpha 0.4] [--delta 0.1] [--seed 0] [--write DIR]

The judge: GPT-3.5's released G-Eval samples for Topical-Chat (20 per response and
criterion, read with Chiang & Lee's rule). Its answer is the samples' mode and its
confidence the share of the 20 samples at the mode; "agree" is |answer - human
mean| <= 0.5 (`domain.agrees`). No call is made.

Per split (half calibration, half test, drawn at random): the guaranteed rule
(`meta.trust.fit_tier`: fixed-sequence testing, exact Clopper-Pearson bound at level
delta, at least 30 items per candidate) and a naive rule (the lowest threshold whose
calibration disagreement is <= alpha, no bound, no minimum) each pick a threshold on
the calibration half; on the test half we count the trusted items and their
disagreement. Test-half noise: a threshold whose true disagreement is exactly alpha
still shows more than alpha on about half of the test halves, so besides the raw
share of splits above alpha we give the share where the test half itself rejects
"disagreement <= alpha" (exact one-sided binomial test at 5%), the excess the test
half's own sampling noise cannot explain. Splits share items, so they are not
independent draws; the guarantee (probability >= 1 - delta over calibration sets) is
about the population the items are drawn from.

`--write DIR` also writes, per criterion, one seeded split as two JSONL files of
judgments (`<criterion>.calibration.jsonl`, `<criterion>.test.jsonl`) for
`debate-tui calibrate` and `debate-tui escalate` (docs/TRUST.md's worked example).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from debate_tui.domain import agrees
from debate_tui.meta import trust
from debate_tui.meta.datasets import TOPICAL_CHAT_CRITERIA, DataRoot, data_dir, geval_samples, topical_chat
from debate_tui.meta.reference_parsers import chiang_lee_score

Point = tuple[float | None, bool]
NOISE_LEVEL = 0.05


def geval_judgments(criterion: str, root: DataRoot) -> list[dict[str, Any]]:
    """One judgment line per Topical-Chat response: the samples' mode, its share, the human mean."""
    lines = {line["id"]: line for line in topical_chat(root)}
    out = []
    for ident, samples in geval_samples(criterion, root).items():
        parsed = [s for s in map(chiang_lee_score, samples) if s is not None]
        if not parsed:
            continue
        mode, count = Counter(parsed).most_common(1)[0]
        out.append({"id": ident, "criterion": criterion, "predicted": mode, "confidence": count / len(samples),
                    "human": lines[ident]["human"][criterion]})
    return out


def naive_threshold(points: Sequence[Point], alpha: float) -> float | None:
    """The lowest confidence whose calibration items at or above it disagree at most alpha of the time."""
    best = None
    for candidate in sorted({c for c, _ in points if c is not None}, reverse=True):
        above = [ok for c, ok in points if c is not None and c >= candidate]
        if 1 - sum(above) / len(above) <= alpha:
            best = candidate
    return best


def _test_outcome(test: Sequence[Point], threshold: float | None, alpha: float) -> dict[str, Any]:
    trusted = [ok for c, ok in test if trust.trusts(c, threshold)]
    disagreed = len(trusted) - sum(trusted)
    risk = disagreed / len(trusted) if trusted else None
    # the test half rejects "disagreement <= alpha" when P(X >= disagreed | n, alpha) < NOISE_LEVEL
    rejects = bool(trusted) and 1 - trust.binom_cdf(disagreed - 1, len(trusted), alpha) < NOISE_LEVEL
    return {"coverage": len(trusted) / len(test), "risk": risk, "exceeded": risk is not None and risk > alpha,
            "rejected": rejects}


def study(points: Sequence[Point], splits: int, alpha: float, delta: float, seed: int,
          min_trusted: int = trust.DEFAULT_MIN_TRUSTED) -> dict[str, Any]:
    """Both rules over `splits` random half/half splits of `points`."""
    rng = random.Random(seed)
    runs: dict[str, list[dict[str, Any]]] = {"guaranteed": [], "naive": []}
    for _ in range(splits):
        order = list(range(len(points)))
        rng.shuffle(order)
        half = len(order) // 2
        calibration, test = [points[i] for i in order[:half]], [points[i] for i in order[half:]]
        fitted = trust.fit_tier(calibration, alpha, delta, min_trusted).threshold
        runs["guaranteed"].append(_test_outcome(test, fitted, alpha))
        runs["naive"].append(_test_outcome(test, naive_threshold(calibration, alpha), alpha))
    return {name: summarize(outcomes) for name, outcomes in runs.items()}


def summarize(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    risks = [o["risk"] for o in outcomes if o["risk"] is not None]
    return {"splits": len(outcomes), "splits_trusting": len(risks),
            "mean_disagreement": statistics.mean(risks) if risks else None,
            "share_exceeding_alpha": sum(o["exceeded"] for o in outcomes) / len(outcomes),
            "share_rejecting_alpha": sum(o["rejected"] for o in outcomes) / len(outcomes),
            "mean_coverage": statistics.mean(o["coverage"] for o in outcomes)}


def points_of(lines: Sequence[dict[str, Any]], tolerance: float = 0.5) -> list[Point]:
    return [(line["confidence"], agrees(line["predicted"], line["human"], tolerance)) for line in lines]


def write_split(lines: list[dict[str, Any]], directory: Path, criterion: str, seed: int) -> None:
    order = list(range(len(lines)))
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    for name, part in (("calibration", order[:half]), ("test", order[half:])):
        text = "".join(json.dumps(lines[i]) + "\n" for i in sorted(part))
        (directory / f"{criterion}.{name}.jsonl").write_text(text, encoding="utf-8")


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--splits", type=int, default=500)
    parser.add_argument("--alpha", type=float, action="append", help="repeatable (default: 0.2 and 0.4)")
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write", metavar="DIR", help="also write one split per criterion as JSONL judgments")
    args = parser.parse_args(argv)
    root = DataRoot(data_dir())
    print("| criterion | alpha | rule | splits trusting any | mean disagreement of trusted test items | "
          "splits above alpha | splits where the test half rejects <= alpha | mean coverage |\n"
          "|---|---|---|---|---|---|---|---|")
    for criterion in TOPICAL_CHAT_CRITERIA:
        lines = geval_judgments(criterion, root)
        if args.write:
            Path(args.write).mkdir(parents=True, exist_ok=True)
            write_split(lines, Path(args.write), criterion, args.seed)
        for alpha in args.alpha or [0.2, 0.4]:
            result = study(points_of(lines), args.splits, alpha, args.delta, args.seed)
            for rule, r in result.items():
                print(f"| {criterion} | {alpha:g} | {rule} | {r['splits_trusting']}/{r['splits']} | "
                      f"{_cell(r['mean_disagreement'])} | {_cell(r['share_exceeding_alpha'])} | "
                      f"{_cell(r['share_rejecting_alpha'])} | {_cell(r['mean_coverage'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
