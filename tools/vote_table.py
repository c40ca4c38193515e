"""The vote-vs-final table of every multi-agent protocol, end to end through `dataset`, `batch` and `meta`.

    python tools/vote_table.py [--limit N] [--bootstrap B]

Two judges, neither of them real, so the figures show the mechanics, not a finding:
- the offline demo model (`--demo`), as shipped;
- the fake OpenAI-compatible server playing a scripted judge that knows the human labels: its first answers
  (the vote) are the human label with noise, its answers after discussion are the human label. The debate
  must then beat its vote, and `meta` must say so with an interval that excludes 0.

Runs in a temporary directory (sessions, cache, config), makes no network call, prints a Markdown table.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import sys
import tempfile
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

Item = dict[str, Any]
RUNS: list[tuple[str, str, list[str]]] = [
    ("debate", "topical-chat", ["--criteria", "coherence"]),
    ("chateval", "topical-chat", ["--criteria", "coherence", "--strategy", "simultaneous-talk"]),
    ("chateval", "faireval", ["--strategy", "simultaneous-talk"]),
    ("mateval", "mateval-roc", ["--strategy", "CoT"]),
    ("scaleeval", "faireval", ["--on-no-consensus", "majority"]),
]
"""(protocol, data set, batch flags): topical-chat's coherence, FairEval's pairs, MATEval's ROC stories."""
_TYPE = re.compile(r"Round \d+ of \d+\. Does the text contain errors of this type\?\n- (\w+):")
_ENUMERATED = re.compile(r"\d\.\s*")
FLIP = {"1": "2", "2": "1", "0": "0"}


def cli(*argv: str) -> str:
    """Run a debate-tui command in this process; its stdout (its stderr is dropped)."""
    from debate_tui.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(argv))
    if code not in (0, 3):
        raise SystemExit(f"debate-tui {' '.join(argv)}: exit {code}")
    return out.getvalue()


class Oracle:
    """A scripted judge on the fake server: noisy first answers, the human label after discussion."""

    def __init__(self, items: list[Item]):
        self.items = items
        self.asked: Counter[str] = Counter()
        """How often each prompt came: ScaleEval's speakers get identical first prompts, and draw apart."""

    def __call__(self, request: dict[str, Any]) -> str:
        from debate_tui.testing.fake_server import prompt_text

        prompt = prompt_text(request)
        self.asked[prompt] += 1
        rng = random.Random(zlib.crc32(prompt.encode()) + self.asked[prompt])
        item = next((i for i in self.items if i["text"] in prompt), None)
        if item is None:
            return "Feedback: the evaluators agree."
        if "Criticise the score" in prompt:
            return "NO ISSUE" if "Earlier debate" in prompt else "The score does not fit the text; look again."
        if "You are the Feedback agent" in prompt:
            return "Feedback: the evaluators agree; keep quoting sentences exactly."
        if "You are the Summarizer" in prompt:
            return self.report(item)
        if m := _TYPE.search(prompt):
            return self.statement(item, m.group(1), rng)
        first = ("(Nobody has spoken yet.)" in prompt or "Compare the two submissions" in prompt
                 or ("You are the Scorer" in prompt and "The Critic replies" not in prompt))
        if "[Submission 1]:" in prompt:
            return self.verdict(item, prompt, first, rng)
        if item.get("text_b"):
            return self.pair_scores(item, first, rng)
        truth = round(float(item["human"]["coherence"]))
        score = min(5, max(1, truth + rng.choice((-2, -1, 0, 1, 2)))) if first else truth
        return f"My reading of the text.\nScore: {score}"

    @staticmethod
    def _noisy_verdict(truth: str, first: bool, rng: random.Random) -> str:
        return rng.choice(("1", "2", "0")) if first and rng.random() < 0.6 else truth

    def verdict(self, item: Item, prompt: str, first: bool, rng: random.Random) -> str:
        swapped = prompt.index(item["text_b"]) < prompt.index(item["text"])
        said = self._noisy_verdict(item["human_verdict"], first, rng)
        return f"Weighing both submissions.\n{FLIP[said] if swapped else said}"

    def pair_scores(self, item: Item, first: bool, rng: random.Random) -> str:
        said = self._noisy_verdict(item["human_verdict"], first, rng)
        return "Scores: " + {"1": "4 2", "2": "2 4", "0": "3 3"}[said]

    @staticmethod
    def sentences(item: Item, kind: str) -> list[str]:
        return [piece.strip() for error in item.get("errors", []) if error["type"] == kind
                for piece in _ENUMERATED.split(error["quote"]) if piece.strip()]

    def statement(self, item: Item, kind: str, rng: random.Random) -> str:
        found = [s for s in self.sentences(item, kind) if rng.random() < 0.6]
        others = re.findall(r"[^.!?]+[.!?]", item["text"])
        if others and rng.random() < 0.4:
            found.append(rng.choice(others).strip())
        return " ".join(f'"{s}" is an error of this type.' for s in found) or "I find no such error."

    def report(self, item: Item) -> str:
        from debate_tui.domain import ERROR_TYPES

        lines = []
        for kind, name in ERROR_TYPES.items():
            found = self.sentences(item, kind)
            lines += [f"Q: Does the text contain {name} ({kind}) errors?", "A: Yes" if found else "A: No"]
            for sentence in found:
                lines += [f'Location: "{sentence}"', "Explanation: as annotated.", "Deduction: -1"]
        return "\n".join(lines)


def measure(protocol: str, dataset: str, flags: list[str], judge: list[str], work: Path, limit: int,
            bootstrap: int, server: Any = None) -> dict[str, Any]:
    items_path = work / f"{dataset}.jsonl"
    if not items_path.exists():
        items_path.write_text(cli("dataset", dataset, "--limit", str(limit)))
    if server is not None:
        server.reset()
        server.add_rule(Oracle([json.loads(line) for line in items_path.read_text().splitlines()]))
    out = work / f"{protocol}-{dataset}-{judge[0].strip('-')}.jsonl"
    cli("batch", str(items_path), "--out", str(out), "--protocol", protocol, "--no-cache", *flags, *judge)
    return json.loads(cli("meta", str(out), "--level", "turn", "--json", "--bootstrap", str(bootstrap)))


def row(protocol: str, dataset: str, judge: str, result: dict[str, Any]) -> str:
    from debate_tui.meta.vote import figure

    vote = result["vote"]
    if "verdicts" in vote:
        final, voted, diff, what = result["verdicts"], vote["verdicts"], vote["verdicts"]["difference"], "accuracy"
        figures = final["accuracy"], voted["accuracy"], diff["accuracy"], diff["ci"]["accuracy"], diff["n"]
    else:
        name, c = next(iter(vote["criteria"].items()))
        final, diff, what = result["criteria"][name], c["difference"], f"{name} Pearson"
        figures = final["pearson"], c["pearson"], diff["pearson"], diff["ci"]["pearson"], diff["n"]
    low, high = figures[3]
    calls = f"{vote['final_calls_per_item']:.1f} / {vote['calls_per_item']:.1f}"
    return (f"| {protocol} | {dataset} | {judge} | {what} | {figures[4]} | {figure(figures[0])} | {figure(figures[1])} "
            f"| {figure(figures[2], True)} [{figure(low, True)}, {figure(high, True)}] | {calls} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=30, help="items per data set (default 30)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="resamples for the intervals (default 1000)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="vote-table-"))
    for key in ("SESSIONS", "CONFIG", "CACHE"):
        os.environ[f"DEBATE_TUI_{key}_DIR"] = str(work / key.lower())
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("OPENAI_API_KEY", "sk-fake-server-only")
    from debate_tui.testing.fake_server import FakeLLMServer

    print("| protocol | data | judge | figure | n | final | vote | final - vote [95% CI] | calls/item final / vote |")
    print("|---|---|---|---|---|---|---|---|---|")
    with FakeLLMServer() as server:
        for protocol, dataset, flags in RUNS:
            demo = measure(protocol, dataset, flags, ["--demo"], work, args.limit, args.bootstrap)
            print(row(protocol, dataset, "demo", demo), flush=True)
            scripted = ["--model", "openai/oracle", "--api-base", server.base_url]
            faked = measure(protocol, dataset, flags, scripted, work, args.limit, args.bootstrap, server)
            print(row(protocol, dataset, "fake server, scripted", faked), flush=True)
    print(f"\n{args.limit} items per data set; work files in {work}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
