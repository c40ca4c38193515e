"""SVG snapshots of the review screen (a ScaleEval pair waiting for a person) at 120x36 and 80x24.

Update with `pytest tests/ui/test_review_snapshots.py --snapshot-update` and read the SVGs before committing.
"""

from __future__ import annotations

import itertools
import json
import re

import pytest

from debate_tui.batch.results import ResultsFile
from debate_tui.config import load_config
from debate_tui.domain import Usage
from debate_tui.llm.base import Completion
from debate_tui.meta.review import ReviewQueue
from debate_tui.ui.review.app import ReviewApp
from tests.helpers.batch import prepared
from tests.helpers.ui import text_of, wait_until

SIZES = [pytest.param((120, 36), id="120x36"), pytest.param((80, 24), id="80x24")]
SPEAKER = re.compile(r"you are (Speaker \d)")
REASONS = {
    "1": "The first answer names Paris and dates it; it is correct and concise.",
    "2": "The second answer is wrong about the city but explains its reasoning at more length.",
    "0": "Both answers are short; neither cites a source, so they are equally helpful.",
}


class Speakers:
    """An in-memory panel that never agrees: initial verdicts 1, 2, 0; each speaker then keeps its own."""

    def __init__(self):
        self.initial = itertools.cycle("120")

    async def complete(self, request, on_delta=None) -> Completion:
        found = SPEAKER.search(request.messages[0]["content"])
        speakers = {"Speaker 1": "1", "Speaker 2": "2", "Speaker 3": "0"}
        verdict = speakers[found.group(1)] if found else next(self.initial)
        usage = Usage(calls=1, prompt_tokens=200, completion_tokens=20)
        return Completion(text=f"{REASONS[verdict]}\n{verdict}", usage=usage)


async def waiting_queue(tmp_path) -> ReviewQueue:
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps({
        "id": "capital-7", "group": "opendomain", "source": "What is the capital of France, and since when?",
        "text": "Paris is the capital of France. It has been the seat of government since 987, under Hugh Capet.",
        "text_b": "The capital of France is Lyon, a large city on the Rhône known for its cuisine.",
    }) + "\n")
    out = tmp_path / "out.jsonl"
    batch = prepared(str(path), "--out", str(out), "--protocol", "scaleeval", "--criteria", "helpfulness",
                     "--model", "openai/fake-model", "--no-cache")
    batch.meter.inner = Speakers()
    await batch.run()
    queue = ReviewQueue(ResultsFile(out), load_config().session_store(), Speakers(), who="snapshot")
    queue.load()
    return queue


@pytest.mark.parametrize("size", SIZES)
def test_review_screen(snap_compare, tmp_path, size):
    import asyncio

    queue = asyncio.run(waiting_queue(tmp_path))

    async def loaded(pilot):
        await wait_until(pilot, lambda: "Which text is better?" in text_of(pilot.app, "#question"))

    assert snap_compare(ReviewApp(queue), terminal_size=size, run_before=loaded)


@pytest.mark.parametrize("size", SIZES)
def test_blind_audit_screen(snap_compare, llm_server, tmp_path, size):
    """A blind audit after its first answer: the judge's answer revealed under the next item, hidden on it."""
    from debate_tui.meta.review import AuditDraw
    from tools import ladder_demo

    ladder_demo.run_demo(llm_server, tmp_path, calibration_per_kind=8, items_per_kind=1)
    queue = ReviewQueue(ResultsFile(tmp_path / "results.jsonl"), load_config().session_store(), Speakers(),
                        who="snapshot", mode="audit", draw=AuditDraw(3, seed=2))
    queue.load()

    async def answered(pilot):
        await wait_until(pilot, lambda: "3 of 3 left" in text_of(pilot.app, "#heading"))
        await pilot.press(queue.current.question.options[0] if queue.current.question else "1")
        await wait_until(pilot, lambda: "2 of 3 left" in text_of(pilot.app, "#heading"))

    assert snap_compare(ReviewApp(queue), terminal_size=size, run_before=answered)
