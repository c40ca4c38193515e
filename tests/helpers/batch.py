"""What the batch and review tests share: input files, the `batch` command's call, and results files that wait for a
person (read back as a review queue)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

from debate_tui.batch.results import ResultsFile
from debate_tui.cli import build_parser
from debate_tui.config import load_config
from debate_tui.llm.router import ModelRouter
from debate_tui.meta.review import ReviewQueue
from tests.helpers.cli import run_cli
from tests.helpers.scripts import agreeing_debate, never_agreeing_debate


def write_items(path: Path, count: int, **extra: Any) -> Path:
    """`count` stories i0..i{count-1}, grouped by tens, with a human coherence score."""
    lines = [json.dumps({"id": f"i{i}", "text": f"Story number {i}. Tom went home and slept.",
                         "group": f"g{i // 10}", "human": {"coherence": 1 + i % 5}, **extra})
             for i in range(count)]
    path.write_text("\n".join(lines) + "\n")
    return path


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def model_args(server, *more: str) -> list[str]:
    return ["--protocol", "debate", "--criteria", "coherence", "--model", "openai/fake-model",
            "--api-base", server.base_url, *more]


def prepared(*argv: str):
    """A BatchRun built exactly as the command builds it, for tests that drive it in-process."""
    from debate_tui.cli.batch import prepare

    return prepare(build_parser().parse_args(["batch", *argv]))


def run_batch(capsys, *argv: str) -> tuple[int, dict[str, Any] | None, str]:
    """`batch ARGV`: its exit code, its summary (the last line of stdout) and stderr."""
    return run_cli(capsys, "batch", *argv)


SPEAKER = re.compile(r"you are (Speaker \d)")


def disagreeing_speakers(server) -> None:
    """Initial verdicts cycle 1, 2, 0; in discussion each speaker keeps its own: never unanimous."""
    initial = itertools.cycle("120")
    keeps = {"Speaker 1": "1", "Speaker 2": "2", "Speaker 3": "0"}

    def reply(request) -> str:
        system = request["messages"][0]["content"]
        found = SPEAKER.search(system)
        verdict = keeps[found.group(1)] if found else next(initial)
        return f"I weighed both submissions step by step.\n{verdict}"

    server.add_rule(reply)


def pairs_batch(capsys, server, tmp_path: Path, count: int = 3) -> Path:
    disagreeing_speakers(server)
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps({
        "id": f"p{i}", "text": f"Answer A{i}: Paris is the capital.", "text_b": f"Answer B{i}: it is Lyon.",
        "source": f"Question {i}: what is the capital of France?", "group": "qa", "human_verdict": "1",
    }) + "\n" for i in range(count)))
    out = tmp_path / "out.jsonl"
    code, summary, _ = run_batch(capsys, str(path), "--out", str(out), "--protocol", "scaleeval", "--criteria",
                                 "helpfulness", "--model", "openai/fake-model", "--api-base", server.base_url,
                                 "--concurrency", "1", "--temperature", "1")  # one model three times: sample it
    assert code == 0 and summary["needs_human"] == count
    return out


def queue_for(out: Path, who: str = "ana") -> ReviewQueue:
    queue = ReviewQueue(ResultsFile(out), load_config().session_store(), ModelRouter(), who=who)
    queue.load()
    return queue


def scored_batch(capsys, server, tmp_path: Path) -> Path:
    """Results of a completed DEBATE batch: two items, two criteria, every score 4."""
    agreeing_debate(server)
    items, out = write_items(tmp_path / "in.jsonl", 2), tmp_path / "out.jsonl"
    run_batch(capsys, str(items), "--out", str(out), *model_args(server, "--criteria", "coherence,relevance"),
              "--concurrency", "1")
    return out


def tie_breaks_batch(capsys, server, tmp_path: Path) -> Path:
    """Results of a DEBATE batch, two criteria, where the Critic never agrees and a person breaks ties."""
    never_agreeing_debate(server)
    items, out = write_items(tmp_path / "in.jsonl", 2), tmp_path / "out.jsonl"
    run_batch(capsys, str(items), "--out", str(out),
              *model_args(server, "--criteria", "coherence,relevance", "--rounds", "1",
                          "--option", "tie_breaker=human"),
              "--concurrency", "1")  # lines in input order
    return out
