"""Bias probes from real judge outputs shipped with the data, without a single new call.

The only released judge outputs in the shipped data are GPT-3.5's G-Eval
answers on Topical-Chat: 20 samples per response and dimension. From them:

- length: the samples' mean (Chiang & Lee's parsing rule, which reproduces
  their paper) against the response's length, given the human score;
- self: the mean's signed error by the system that wrote the response
  (flagged where that system is of the judge's family: none is, here);
- retest: sample 1 against sample 2 of the same response, the two nearest
  to "the same item judged twice" (quadratic-weighted kappa, exact agreement).

Position cannot be measured from recorded outputs: ScaleEval ships the models'
answers only, no judge verdicts or debates, and nothing else is pairwise with
a recorded judge; nor rubric sensitivity: no judge was recorded under a
perturbed rubric. Both are listed as skipped, with that reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from debate_tui.meta import probes
from debate_tui.meta.datasets import TOPICAL_CHAT_CRITERIA, DataRoot, data_dir, geval_samples, topical_chat
from debate_tui.meta.reference_parsers import chiang_lee_mean, chiang_lee_score

RECORDED = ("topical-chat",)
JUDGE = "gpt-3.5-turbo"
NO_POSITION = ("no recorded pairwise judge outputs: ScaleEval ships the models' answers only, "
               "no judge verdicts or debates")
NO_RUBRIC = "no recorded judge outputs under a perturbed rubric (--criteria-variant)"
NO_INJECTION = "no recorded judge outputs on texts with an instruction to the judge appended"


def topical_chat_probes(root: str | Path | None = None, chosen: tuple[str, ...] = ("length", "self", "retest"),
                        ) -> dict[str, Any]:
    """Per dimension, the probes `debate-tui probe --recorded topical-chat` prints."""
    source = DataRoot(data_dir(root))
    lines = {line["id"]: line for line in topical_chat(source)}
    report: dict[str, Any] = {"items": len(lines), "models": [JUDGE], "probes": {}, "skipped": {}}
    for criterion in TOPICAL_CHAT_CRITERIA:
        samples = geval_samples(criterion, source)
        scored = [(lines[i], m) for i, s in samples.items() if (m := chiang_lee_mean(s)) is not None]
        if "length" in chosen:
            report["probes"][f"length {criterion}"] = probes.length(
                [(m, len(line["text"]), line["human"][criterion]) for line, m in scored])
        if "self" in chosen:
            report["probes"][f"self {criterion}"] = probes.self_preference(
                [(line["id"].rsplit("/", 1)[1], m, line["human"][criterion]) for line, m in scored], [JUDGE])
        if "retest" in chosen:
            twice = [(chiang_lee_score(s[0]), chiang_lee_score(s[1])) for s in samples.values() if len(s) > 1]
            report["probes"][f"retest {criterion}"] = probes.retest(
                [(a, b) for a, b in twice if a is not None and b is not None])
    if "position" in chosen:
        report["skipped"]["position"] = NO_POSITION
    if "rubric" in chosen:
        report["skipped"]["rubric"] = NO_RUBRIC
    if "injection" in chosen:
        report["skipped"]["injection"] = NO_INJECTION
    return report
