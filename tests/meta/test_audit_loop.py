"""The loop on the fake server: a ladder's batch, a blind audit (on the screen and with --decide), `labels`,
`audit` (holds, then violated with a worse judge's lines), and `calibrate` on the exported labels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from debate_tui.batch.results import ResultsFile
from debate_tui.config import load_config
from debate_tui.llm.router import ModelRouter
from debate_tui.meta.review import AuditDraw, ReviewQueue
from tests.helpers.batch import read_rows
from tests.helpers.ui import text_of, wait_until
from tools import ladder_demo

TRUTH = {"easy": 3, "medium": 4, "hard": 2, "hopeless": 5}
"""The demo's human coherence label by item kind (its `KINDS`)."""


def truth(ident: str) -> int:
    return TRUTH[ident.split("-")[1]]


@pytest.fixture
def ladder(llm_server, tmp_path) -> Path:
    """16 items through the three-tier ladder: 12 lines trusted (4 per tier), 4 left for a person."""
    result = ladder_demo.run_demo(llm_server, tmp_path, calibration_per_kind=8, items_per_kind=4)
    assert result["landed"] == {"1": 4, "2": 4, "3": 4, "None": 4}
    return tmp_path


def audit_queue(out: Path, draw: AuditDraw, who: str = "ann") -> ReviewQueue:
    queue = ReviewQueue(ResultsFile(out), load_config().session_store(), ModelRouter(), who=who, mode="audit",
                        draw=draw)
    queue.load()
    return queue


def test_a_blind_audit_labels_audit_and_calibrate_again(ladder, llm_server) -> None:
    out, policy = ladder / "results.jsonl", ladder / "policy.json"
    before = out.read_text()
    argv = ["review", str(out), "--audit", "12", "--escalated", "2", "--seed", "5"]
    code, listed = ladder_demo.cli(*argv, "--list")
    items = [json.loads(line) for line in listed.splitlines()]
    assert code == 0 and len(items) == 14 and len({i["id"] for i in items}) == 14
    assert sum("hopeless" in i["id"] for i in items) == 2  # the two drawn from the lines no tier trusted
    assert all("Blind audit" in i["question"] and "confidence" not in i["question"] for i in items)
    assert [json.loads(x)["id"] for x in ladder_demo.cli(*argv, "--list")[1].splitlines()] == [i["id"] for i in items]
    calls = llm_server.calls
    decisions = [f"--decide={i['id']}:coherence={truth(i['id'])}" for i in items]
    code, said = ladder_demo.cli(*argv, *decisions)
    assert code == 0 and json.loads(said.splitlines()[-1])["left"] == 0
    assert out.read_text() == before and llm_server.calls == calls  # a label only: no result changed, no call

    labels = ladder / "labels.jsonl"
    code, said = ladder_demo.cli("labels", str(out), "--out", str(labels))
    summary = ladder_demo.last_json(said)
    assert code == 0 and (summary["labels"], summary["audit"], summary["blind"]) == (14, 14, 14)
    lines = {line["id"]: line for line in map(json.loads, labels.read_text().splitlines())}
    easy = next(line for ident, line in lines.items() if "easy" in ident)
    assert (easy["human"], easy["judge"], easy["judge_confidence"], easy["where"]) == (3.0, 3.0, 1.0, "review --audit")
    assert all(line["session"].startswith("batch-") and line["blind"] for line in lines.values())

    code, said = ladder_demo.cli("audit", str(policy), str(out), "--labels", str(labels))
    summary = ladder_demo.last_json(said)
    assert code == 0 and summary["holds"] is True
    tiers = [(t["tier"], t["audited"], t["disagreements"]) for t in summary["tiers"]]
    assert tiers == [(1, 4, 0), (2, 4, 0), (3, 4, 0)]
    assert summary["all"]["audited"] == 12 and summary["all"]["p_value"] == 1.0  # the 2 escalated are not trusted

    # a worse judge: every trusted answer 2 points off the person's; the same audit now raises the alarm
    worse = ladder / "worse.jsonl"
    worse.write_text("".join(json.dumps({**row, "predicted": (row["predicted"] or 0) + 2}) + "\n"
                             for row in read_rows(out)))
    code, said = ladder_demo.cli("audit", str(policy), str(worse), "--labels", str(labels))
    summary = ladder_demo.last_json(said)
    assert code == 1 and summary["holds"] is False and summary["all"]["disagreements"] == 12
    assert summary["all"]["p_value"] == pytest.approx(0.2**12)

    unlabelled = ladder / "tier1-unlabelled.jsonl"  # new results carry no labels: only the exported ones count
    unlabelled.write_text("".join(json.dumps({k: v for k, v in row.items() if k != "human"}) + "\n"
                                  for row in read_rows(ladder / "results.tier1.jsonl")))
    code, said = ladder_demo.cli("calibrate", str(unlabelled), "--labels", str(labels), "--alpha", "0.2",
                                 "--delta", "0.2", "--min-trusted", "4", "--out", str(ladder / "again.json"), "--json")
    again = ladder_demo.last_json(said)
    assert code == 0 and again["calibrated_on"] == 14


async def test_the_screen_hides_the_judge_until_answered_then_shows_it_and_the_agreement(ladder) -> None:
    from debate_tui.meta.concordance import cohen_kappa
    from debate_tui.ui.review.app import ReviewApp

    out = ladder / "results.jsonl"
    queue = audit_queue(out, AuditDraw(6, seed=2))
    answers = {}
    app = ReviewApp(queue)
    async with app.run_test(size=(80, 24)) as pilot:
        for number in range(6):
            await wait_until(pilot, lambda n=number: f"{6 - n} of 6 left" in text_of(app, "#heading"))
            item = queue.current
            assert "Blind audit" in text_of(app, "#heading") and "completed" not in text_of(app, "#heading")
            assert not app.query_one("#positions").display and text_of(app, "#positions-text") == ""
            await pilot.press("d")
            assert not app.query_one("#debate").has_class("shown")  # no debate before the answer either
            answer = truth(item.id) if number % 2 else 1  # every other answer disagrees with the judge
            answers[item.id] = (item.judge[0], float(answer))
            await pilot.press(str(answer))
            await wait_until(pilot, lambda i=item: f"Item {i.id}, coherence: you answered" in text_of(app, "#note"))
            judge = item.judge[0]
            assert f"the judge had answered {judge:g}" in text_of(app, "#note")
        await wait_until(pilot, lambda: "All 6 item(s) answered and kept as labels" in text_of(app, "#question"))
        assert text_of(app, "#heading").startswith("Blind audit · 0 of 6 left")
        panel = text_of(app, "#agreement")
    pairs = [(f"{j:g}", f"{p:g}") for j, p in answers.values()]
    categories = sorted({c for pair in pairs for c in pair})
    table = np.zeros((len(categories), len(categories)))
    for judge, person in pairs:
        table[categories.index(judge), categories.index(person)] += 1
    table /= table.sum()
    expected = (np.trace(table) - table.sum(1) @ table.sum(0)) / (1 - table.sum(1) @ table.sum(0))
    assert cohen_kappa(pairs) == pytest.approx(expected)
    assert f"blind 6: agree 50%, κ {expected:.2f}" in panel
    sessions = load_config().session_store()
    recorded = [a for item in queue.items for a in sessions.load(item.session_id).actions if a.kind == "audit"]
    assert len(recorded) == 6 and all(a.blind and a.source == "audit" for a in recorded)
    again = audit_queue(out, AuditDraw(6, seed=2))
    assert again.left == 0 and [i.id for i in again.items] == [i.id for i in queue.items]  # reopened: all done


def test_an_audit_needs_a_ladders_results_and_a_draw(pairs, capsys) -> None:
    from tests.helpers.cli import run_cli

    code, _, err = run_cli(capsys, "review", str(pairs), "--audit", "3")
    assert code == 2 and "--audit draws from the trusted lines of `batch --policy` results" in err
    for flags, said in ((["--escalated", "2"], "--escalated goes with --audit K"),
                        (["--audit", "0"], "not both 0"), (["--audit", "2", "--override"], "give one")):
        code, _, err = run_cli(capsys, "review", str(pairs), *flags)
        assert code == 2 and said in err and len(err.strip().splitlines()) == 1


def test_an_audit_whose_session_is_gone_says_so_on_its_item(ladder) -> None:
    out = ladder / "results.jsonl"
    first = audit_queue(out, AuditDraw(3, seed=1)).items[0]
    load_config().session_store().path_for(first.session_id).write_text("{not json")
    queue = audit_queue(out, AuditDraw(3, seed=1))  # loads: the broken session is read again when opened
    assert queue.items[0].session_id == first.session_id and queue.items[0].pending


def test_an_escalated_line_a_person_decided_is_audited_against_its_last_tier_not_the_person(ladder) -> None:
    out = ladder / "results.jsonl"
    code, _ = ladder_demo.cli("review", str(out), "--decide", "new-hopeless-item-0:coherence=5")
    assert code == 0
    queue = audit_queue(out, AuditDraw(0, escalated=4))
    (item,) = [i for i in queue.items if i.id == "new-hopeless-item-0"]
    assert item.rows[0]["predicted"] == 5.0 and item.judge == (2.0, 0.0)  # the debate tier's 2, not the person's 5
