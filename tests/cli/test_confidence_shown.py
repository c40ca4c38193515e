"""A single judge's confidence is shown, with what it measured: in `run`'s JSON line, both reports and the TUI.

The answer of three samples is their mean; the confidence is the share of the samples within the tolerance of
that answer, so samples 1, 5, 1 (mean 2.33) give 0.0, and every place that shows it says so.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest

from debate_tui.domain import AGREE_TOLERANCE
from tests.helpers.cli import run_cli
from tests.helpers.ui import screen_text, wait_until


def scripted(llm_server, samples: list[int]) -> None:
    said = itertools.cycle(samples)
    llm_server.add_rule(lambda request: f"Score: {next(said)}")


def expected(samples: list[int]) -> tuple[float, str]:
    """Computed here, not by the product: the share within the tolerance of the samples' mean."""
    mean = sum(samples) / len(samples)
    near = sum(abs(s - mean) <= AGREE_TOLERANCE for s in samples)
    return near / len(samples), f"{near} of {len(samples)} samples within 0.5 of the answer {mean:.3g}, their mean"


@pytest.mark.parametrize("samples", [[1, 5, 1], [3, 3, 4]])
def test_run_shows_the_confidence_and_its_rule(capsys, story_file, llm_server, samples) -> None:
    scripted(llm_server, samples)
    code, summary, _ = run_cli(capsys, "run", "--text", str(story_file), "--protocol", "single", "--samples", "3",
                               "--model", "openai/fake-model", "--api-base", llm_server.base_url,
                               "--criteria", "coherence")
    value, basis = expected(samples)
    assert code == 0 and summary["scores"]["coherence"] == pytest.approx(sum(samples) / 3)
    assert summary["confidence"] == {"coherence": pytest.approx(value)}
    assert summary["confidence_basis"] == [f"coherence {value:.2f}: {basis}"]
    report = Path(summary["report"]).read_text()
    assert f"**Confidence:** coherence {value:.2f}: {basis}." in report


def test_the_html_report_shows_it_too(capsys, story_file, llm_server) -> None:
    from debate_tui.cli import main

    scripted(llm_server, [1, 5, 1])
    code, summary, _ = run_cli(capsys, "run", "--text", str(story_file), "--protocol", "single", "--samples", "3",
                               "--model", "openai/fake-model", "--api-base", llm_server.base_url,
                               "--criteria", "coherence")
    assert code == 0 and main(["export", summary["session"], "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert ("<strong>Confidence:</strong> coherence 0.00: 0 of 3 samples within 0.5 of the answer 2.33, "
            "their mean") in page


def test_the_tui_shows_it_under_the_result(story_file, llm_server) -> None:
    from debate_tui.cli import build_parser
    from debate_tui.cli.tui import tui_request
    from debate_tui.llm.router import ModelRouter
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.launch import launch_from
    from debate_tui.ui.state import UiState

    scripted(llm_server, [1, 5, 1])
    args = build_parser("tui").parse_args(["tui", "--text", str(story_file), "--protocol", "single", "--samples", "3",
                                           "--model", "openai/fake-model", "--api-base", llm_server.base_url,
                                           "--criteria", "coherence", "--autostart"])
    app = DebateTUI(launch_from(tui_request(args), UiState()), client=ModelRouter())

    async def watch() -> None:
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_until(pilot, lambda: "Confidence: coherence 0.00: 0 of 3 samples within 0.5 of the answer "
                                            "2.33, their mean" in " ".join(screen_text(app).split()), 30,
                             what="the confidence under the result")

    asyncio.run(watch())
