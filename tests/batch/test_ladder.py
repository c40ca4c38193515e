"""`batch --policy`: a three-tier ladder (single judge, jury, debate) live on the fake server, its lines, its
summary, resuming tier by tier, and the review queue for what no tier trusted."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.batch import queue_for
from tests.helpers.ui import text_of, wait_until
from tools import ladder_demo


def test_three_tier_ladder_live(llm_server, tmp_path) -> None:
    result = ladder_demo.run_demo(llm_server, tmp_path, calibration_per_kind=8, items_per_kind=2)
    ladder, lines = result["ladder"], result["lines"]
    assert result["landed"] == {"1": 2, "2": 2, "3": 2, "None": 2}
    assert [(t["tier"], t["protocol"], t["items"], t["trusted"], t["passed_on"]) for t in ladder["tiers"]] == [
        (1, "single", 8, 2, 6), (2, "single", 6, 2, 4), (3, "debate", 4, 2, 2)]
    assert ladder["needs_human"] == 2 and ladder["calls"] == sum(t["calls"] for t in ladder["tiers"])
    assert ladder["calls"] == ladder["server_calls"]
    assert ladder["cost_usd"] < result["debate_all"]["cost_usd"]
    by_id = {line["id"]: line for line in lines}
    easy, hard, hopeless = by_id["new-easy-item-0"], by_id["new-hard-item-0"], by_id["new-hopeless-item-0"]
    assert (easy["tier"], easy["confidence"], easy["predicted"], easy["protocol"]) == (1, 1.0, 3.0, "single")
    assert [t["tier"] for t in easy["tiers"]] == [1]
    assert (hard["tier"], hard["predicted"], hard["protocol"]) == (3, 2.0, "debate")
    assert [(t["tier"], t["trusted"]) for t in hard["tiers"]] == [(1, False), (2, False), (3, True)]
    assert hard["cost_usd"] == round(sum(t["cost_usd"] for t in hard["tiers"]), 8)
    assert hopeless["status"] == "needs_human" and hopeless["tier"] is None and hopeless["predicted"] is None
    assert [t["confidence"] for t in hopeless["tiers"]] == [1 / 3, 1 / 3, 0.0]
    waiting = {item["id"]: item for item in result["review"]}
    assert set(waiting) == {"new-hopeless-item-0", "new-hopeless-item-1"}
    assert "tier 3 debate: 2.0 (confidence 0.00 < 1.00)" in waiting["new-hopeless-item-0"]["question"]


def test_ladder_resumes_and_keeps_a_persons_decision(llm_server, tmp_path) -> None:
    result = ladder_demo.run_demo(llm_server, tmp_path, calibration_per_kind=8, items_per_kind=1)
    out, items, policy = tmp_path / "results.jsonl", tmp_path / "items.jsonl", tmp_path / "policy.json"
    code, said = ladder_demo.cli("review", str(out), "--decide", "new-hopeless-item-0:coherence=5", "--who", "ann")
    assert code == 0 and json.loads(said.splitlines()[0])["status"] == "completed"
    decided = next(json.loads(line) for line in out.read_text().splitlines() if "hopeless" in line)
    assert (decided["predicted"], decided["status"], decided["decided_by"]) == (5.0, "completed", "ann")
    calls = llm_server.calls
    code, said = ladder_demo.cli("batch", str(items), "--policy", str(policy), "--out", str(out))
    summary = json.loads(said.splitlines()[-1])
    assert code == 0 and llm_server.calls == calls  # every tier's lines were there: nothing asked again
    assert [t["skipped"] for t in summary["tiers"]] == [4, 3, 2] and summary["needs_human"] == 0
    again = [json.loads(line) for line in out.read_text().splitlines()]
    assert next(r for r in again if "hopeless" in r["id"]) == decided
    assert [r for r in again if "hopeless" not in r["id"]] == [r for r in result["lines"] if "hopeless" not in r["id"]]


def test_a_policy_without_task_settings_cannot_run_live(tmp_path, capsys) -> None:
    from debate_tui.cli import main

    rows = [{"id": f"x{i}", "predicted": 3, "confidence": 0.9, "human": 3} for i in range(40)]
    tier = tmp_path / "recorded.jsonl"
    tier.write_text("".join(json.dumps(r) + "\n" for r in rows))
    policy = tmp_path / "policy.json"
    assert main(["calibrate", str(tier), "--alpha", "0.2", "--delta", "0.1", "--out", str(policy)]) == 0
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "text": "Some text."}) + "\n")
    capsys.readouterr()
    assert main(["batch", str(items), "--policy", str(policy), "--out", str(tmp_path / "r.jsonl")]) == 2
    assert "tier 1 has no task settings" in capsys.readouterr().err


def test_review_screen_shows_every_tiers_answer_and_takes_the_persons(llm_server, tmp_path) -> None:
    import asyncio

    from debate_tui.ui.review.app import ReviewApp

    ladder_demo.run_demo(llm_server, tmp_path, calibration_per_kind=8, items_per_kind=1)
    out = tmp_path / "results.jsonl"

    async def review() -> None:
        app = ReviewApp(queue_for(out, who="pilot"))
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_until(pilot, lambda: "1 of 1 left" in text_of(app, "#heading"))
            assert "Review queue" in text_of(app, "#heading")
            question = text_of(app, "#question")
            assert "tier 1 single: 3.0 (confidence 0.33 < 1.00)" in question and "tier 3 debate" in question
            await pilot.press("5")
            await wait_until(pilot, lambda: '"decided_by": "pilot"' in out.read_text())

    asyncio.run(review())
    line = next(json.loads(x) for x in out.read_text().splitlines() if "hopeless" in x)
    assert (line["predicted"], line["status"], line["tier"]) == (5.0, "completed", None)


def test_run_with_a_policy_trusts_or_climbs_to_a_person(llm_server, tmp_path, capfd) -> None:
    from debate_tui.cli import main

    ladder_demo.run_demo(llm_server, tmp_path, calibration_per_kind=8, items_per_kind=1)
    policy = str(tmp_path / "policy.json")
    easy, hopeless = tmp_path / "easy.txt", tmp_path / "hopeless.txt"
    easy.write_text("EASY-ITEM solo: He went to the pool every morning.")
    hopeless.write_text("HOPELESS-ITEM solo: He went to the pool every morning.")
    capfd.readouterr()
    assert main(["run", "--text", str(easy), "--policy", policy]) == 0
    out, err = capfd.readouterr()
    summary = json.loads(out.strip().splitlines()[-1])
    assert (summary["tier"], summary["ladder_status"], summary["scores"]) == (1, "completed", {"coherence": 3.0})
    assert "[trust] trusted: >= 80% agreement at 80% confidence, calibrated on 32 items" in err
    report = Path(summary["report"]).read_text()
    assert "## Trust ladder" in report and "Decided by: tier 1 (single)." in report
    recorded = json.loads(Path(policy).read_text())["tiers"][0]["task"]["spec"]  # calibrate kept the tier's spec
    assert recorded["protocol"] == "single" and recorded["origins"]["protocol"] == "command line"
    assert json.loads(Path(summary["session_path"]).read_text())["spec"] == recorded  # the tier ran it as recorded

    assert main(["run", "--text", str(hopeless), "--policy", policy]) == 5
    out, err = capfd.readouterr()
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["ladder_status"] == "needs_human" and summary["tier"] is None
    assert [(t["tier"], t["protocol"], t["trusted"]) for t in summary["tiers"]] == [
        (1, "single", False), (2, "single", False), (3, "debate", False)]
    assert "not sure (0.33 < 1.00): escalating to tier 2, single" in err
    assert "not sure (0.00 < 1.00): no tier left: a person decides" in err
    report = Path(summary["report"]).read_text()
    assert "Decided by: a person (no tier trusted itself)." in report
    assert "| 3 | debate | coherence 2 | 0.00 | 1.00 | no |" in report


def test_tui_with_a_policy_trusts_or_escalates_to_the_person(llm_server, tmp_path) -> None:
    import asyncio

    from debate_tui.cli import build_parser
    from debate_tui.cli.tui import tui_request
    from debate_tui.llm.router import ModelRouter
    from debate_tui.store import read_session
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.launch import launch_from
    from debate_tui.ui.screens.debate import DebateScreen
    from debate_tui.ui.screens.dialogs import DecisionDialog
    from debate_tui.ui.state import UiState

    ladder_demo.run_demo(llm_server, tmp_path, calibration_per_kind=8, items_per_kind=1)
    policy = str(tmp_path / "policy.json")

    def app_for(text: str) -> DebateTUI:
        path = tmp_path / "text.txt"
        path.write_text(text)
        args = build_parser("tui").parse_args(["tui", "--text", str(path), "--policy", policy])
        return DebateTUI(launch_from(tui_request(args), UiState()), client=ModelRouter())

    def screens(app: DebateTUI) -> list[DebateScreen]:
        return [s for s in app.screen_stack if isinstance(s, DebateScreen)]

    async def trusted_at_tier_one() -> None:
        app = app_for("EASY-ITEM tui: He went to the pool every morning.")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: screens(app) and "trusted" in screens(app)[0].status.trust, 30)
            assert len(screens(app)) == 1
            assert screens(app)[0].status.trust == ("trust ladder: confidence 1.00, threshold 1.00: trusted: >= 80% "
                                                    "agreement at 80% confidence, calibrated on 32 items")
            ladder = read_session(app.store.path_for(screens(app)[0].session.id)).state["ladder"]
            assert ladder["decided_by"] == "tier 1 (single)"

    async def escalated_to_the_person() -> None:
        app = app_for("HOPELESS-ITEM tui: He went to the pool every morning.")
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, DecisionDialog), 60)
            first, second, third = screens(app)
            assert "not sure (0.33 < 1.00): escalating to tier 2, single" in first.status.trust
            assert "escalating to tier 3, debate" in second.status.trust
            assert "no tier left: a person decides" in third.status.trust
            assert "tier 3 debate: coherence 2 (confidence 0.00)" in app.screen.question
            await pilot.press("5")
            await wait_until(pilot, lambda: "decided by" in third.status.trust, 10)
            saved = read_session(app.store.path_for(third.session.id))
            assert saved.outcome.scores["coherence"] == 5.0
            decided = saved.actions[-1]  # a label: the last tier's answer and confidence beside the person's
            assert (decided.where, decided.source, decided.judge_answer, decided.judge_confidence) == (
                "tui ladder", "decision", 2.0, 0.0)
            assert saved.state["ladder"]["decided_by"].startswith("a person (")
            assert [r["tier"] for r in saved.state["ladder"]["rungs"]] == [1, 2, 3]
            await pilot.press("escape")  # back to the debate before it: kept and reachable
            await wait_until(pilot, lambda: app.screen is second, 5)

    asyncio.run(trusted_at_tier_one())
    asyncio.run(escalated_to_the_person())


def test_ladder_shards_partition_the_items_at_every_tier(llm_server, tmp_path) -> None:
    result = ladder_demo.run_demo(llm_server, tmp_path, calibration_per_kind=8, items_per_kind=1)
    items, policy = str(tmp_path / "items.jsonl"), str(tmp_path / "policy.json")
    shards = []
    for part in ("1/2", "2/2"):
        target = tmp_path / f"shard{part[0]}.jsonl"
        code, _ = ladder_demo.cli("batch", items, "--policy", policy, "--out", str(target), "--shard", part)
        assert code == 0
        shards += [json.loads(line) for line in target.read_text().splitlines()]
    assert sorted((r["id"], r["tier"], r["predicted"]) for r in shards) == sorted(
        (r["id"], r["tier"], r["predicted"]) for r in result["lines"])
