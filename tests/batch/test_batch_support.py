"""Shared by the batch and review tests: input files, the CLI call, a scripted DEBATE on the fake server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from debate_tui.cli import build_parser, main

CRITIC = "Criticise the score if it is not justified"


def write_items(path: Path, count: int, **extra: Any) -> Path:
    """`count` stories i0..i{count-1}, grouped by tens, with a human coherence score."""
    lines = [json.dumps({"id": f"i{i}", "text": f"Story number {i}. Tom went home and slept.",
                         "group": f"g{i // 10}", "human": {"coherence": 1 + i % 5}, **extra})
             for i in range(count)]
    path.write_text("\n".join(lines) + "\n")
    return path


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def agreeing_debate(server) -> None:
    """Scorer says 4, the Critic accepts at once: two calls per item and criterion."""
    server.add_rule("NO ISSUE", match=CRITIC)
    server.add_rule("Reasoning about the text.\nScore: 4")


def never_agreeing_debate(server) -> None:
    server.add_rule("I still disagree: the score is too high.", match=CRITIC)
    server.add_rule("Reasoning about the text.\nScore: 4")


def model_args(server, *more: str) -> list[str]:
    return ["--protocol", "debate", "--criteria", "coherence", "--model", "openai/fake-model",
            "--api-base", server.base_url, *more]


def run_batch(capsys, *argv: str) -> tuple[int, dict[str, Any] | None, str]:
    code = main(["batch", *argv])
    out, err = capsys.readouterr()
    lines = [line for line in out.splitlines() if line.strip()]
    return code, (json.loads(lines[-1]) if lines else None), err


def prepared(*argv: str):
    """A BatchRun built exactly as the command builds it, for tests that drive it in-process."""
    from debate_tui.cli.batch import prepare

    return prepare(build_parser().parse_args(["batch", *argv]))
