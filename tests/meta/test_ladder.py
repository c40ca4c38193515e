"""`batch --policy`: a three-tier ladder (single judge, jury, debate) live on the fake server, its lines, its
summary, resuming tier by tier, and the review queue for what no tier trusted."""

from __future__ import annotations

import getpass
import json
from pathlib import Path

import pytest

from tests.helpers.batch import queue_for
from tests.helpers.ui import report_built, screen_text, text_of, wait_until
from tools import ladder_demo


def test_three_tier_ladder_live(llm_server, tmp_path) -> None:
    result = ladder_demo.run_demo(llm_server, tmp_path, calibration_per_kind=8, items_per_kind=2)
    ladder, lines = result["ladder"], result["lines"]
    assert result["landed"] == {"1": 2, "2": 2, "3": 2, "None": 2}
    assert [(t["tier"], t["protocol"], t["items"], t["trusted"], t["passed_on"]) for t in ladder["tiers"]] == [
        (1, "single", 8, 2, 6), (2, "single", 6, 2, 4), (3, "debate", 4, 2, 2)]
    assert [t["label"] for t in ladder["tiers"]] == ["single", "jury", "debate"]  # a single judge's jury: "jury"
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
    assert "tier 2 jury: 3.0 (confidence 0.33 < 1.00)" in waiting["new-hopeless-item-0"]["question"]
    assert [t["label"] for t in hopeless["tiers"]] == ["single", "jury", "debate"]


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
    assert summary["ladder_status"] == summary["status"] == "needs_human" and summary["tier"] is None
    assert summary["decided_by"] is None and summary["scores"] == {"coherence": None}  # no result: nobody decided
    assert [(t["tier"], t["protocol"], t["label"], t["trusted"]) for t in summary["tiers"]] == [
        (1, "single", "single", False), (2, "single", "jury", False), (3, "debate", "debate", False)]
    assert summary["ladder_calls"] == sum(t["calls"] for t in summary["tiers"]) == 15 > summary["calls"] == 9
    assert "tier 1 (single, conf 0.33 < 1.00): not sure, escalating to tier 2 (jury)" in err
    assert "tier 3 (debate, conf 0.00 < 1.00): not sure, no tier left: a person decides" in err
    report = Path(summary["report"]).read_text()
    assert "Decided by: a person" not in report and "| coherence | 1-5 |" not in report  # no result table
    assert "Decided by: nobody yet: no tier trusted its answer, so it waits for a person" in report
    assert "No result yet: the run waits for a person's decision (no tier of the trust ladder trusted" in report
    assert "| 3 | debate | coherence 2 | 0.00 | 1.00 | no | 9 |" in report
    assert "| 2 | jury | coherence 3 | 0.33 | 1.00 | no | 3 |" in report
    assert ("Guarantee: the answers a tier trusts agree with people at least 80% of the time (alpha 0.2), with "
            "probability at least 80% (delta 0.2); calibrated on 32 labelled items; thresholds: tier 1 (single) at "
            "confidence >= 1.00, chosen on the 32 items that reached it; tier 2 (jury)") in report
    spent = summary["ladder_prompt_tokens"], summary["ladder_completion_tokens"], summary["ladder_cost_usd"]
    assert (f"Ladder totals: 15 calls, {spent[0]} prompt tokens, {spent[1]} completion tokens, ${spent[2]:.4f} "
            "over 3 tiers") in report
    saved = json.loads(Path(summary["session_path"]).read_text())
    assert (saved["status"], saved["outcome"], saved["state"]["ladder"]["status"]) == ("needs_human", None,
                                                                                      "needs_human")
    session = summary["session"]
    assert main(["export", session, "--format", "html"]) == 0
    page = capfd.readouterr().out
    assert "nobody yet: no tier trusted its answer" in page and "Ladder totals" in page and "alpha 0.2" in page
    assert main(["sessions", "--json", "--no-examples"]) == 0
    row = next(r for r in json.loads(capfd.readouterr().out)["sessions"] if r["id"] == session)
    assert (row["status"], row["result"]) == ("needs_human", "")

    assert main(["resume", session]) == 2  # without an answer: one line says what it waits for
    assert "waits for a person: no tier of its trust ladder trusted its answer" in capfd.readouterr().err
    assert main(["resume", session, "--decide", "7"]) == 2
    assert "7 is outside coherence's scale 1-5" in capfd.readouterr().err
    calls = llm_server.calls
    assert main(["resume", session, "--decide", "4"]) == 0
    out, err = capfd.readouterr()
    decided = json.loads(out.strip().splitlines()[-1])
    assert llm_server.calls == calls  # nothing asked again: the person's answer is the result
    assert (decided["status"], decided["scores"], decided["decided_by"]) == ("completed", {"coherence": 4.0},
                                                                             f"a person ({getpass.getuser()})")
    report = Path(decided["report"]).read_text()
    assert f"Decided by: a person ({getpass.getuser()})." in report
    assert "| coherence | 1-5 | 4, set by you; Scorer said 2 |" in report  # the person's, beside the agents'
    assert "decided by " in report and "Scorer's last score" not in report
    saved = json.loads(Path(decided["session_path"]).read_text())
    action = saved["actions"][-1]
    assert (action["kind"], action["criterion"], action["value"]) == ("decide", "coherence", 4.0)
    assert "resume --decide" in action["text"] and "tier 3 debate: coherence 2 (confidence 0.00)" in action["text"]
    assert main(["resume", session, "--decide", "5"]) == 2  # decided once: now it is completed
    assert "already completed" in capfd.readouterr().err


def test_tui_with_a_policy_trusts_or_escalates_to_the_person(llm_server, tmp_path) -> None:
    import asyncio

    from debate_tui.cli import build_parser
    from debate_tui.cli.tui import tui_request
    from debate_tui.llm.router import ModelRouter
    from debate_tui.report.markdown import render
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
        from debate_tui.ui.screens.help import HelpScreen

        app = app_for("HOPELESS-ITEM tui: He went to the pool every morning.")
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_until(pilot, lambda: len(screens(app)) == 2, 60)
            first, second = screens(app)
            climbed = "tier 1 (single, conf 0.33 < 1.00): not sure, escalating to tier 2 (jury)"
            assert climbed in first.status.trust
            assert climbed in second.status.trust
            # whichever tier plays now, the line that sent the climb on is on show (once its screen is drawn)
            await wait_until(pilot, lambda: climbed in screen_text(app), 10, what="the climb line on screen")
            await wait_until(pilot, lambda: isinstance(app.screen, DecisionDialog), 60)
            third = screens(app)[2]
            assert third.status.trust.splitlines() == [
                climbed, "tier 2 (jury, conf 0.33 < 1.00): not sure, escalating to tier 3 (debate)",
                "tier 3 (debate, conf 0.00 < 1.00): not sure, no tier left: a person decides"]
            dialog = app.screen
            assert "tier 3 debate: coherence 2 (confidence 0.00)" in dialog.question
            await wait_until(pilot, lambda: "HOPELESS-ITEM tui: He went to the pool every morning." in screen_text(app),
                             5, what="the text judged, in the dialog")
            assert third.session.status == "needs_human" and third.session.outcome is None
            await pilot.press("r")
            await report_built(pilot)
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is dialog, 5)
            await pilot.press("f1")
            await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), 5)
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is dialog, 5)
            await pilot.press("4")
            await wait_until(pilot, lambda: "decided by" in third.status.trust, 10)
            saved = read_session(app.store.path_for(third.session.id))
            assert (saved.status, saved.outcome.scores["coherence"]) == ("completed", 4.0)
            decided = saved.actions[-1]  # a label: the last tier's answer and confidence beside the person's
            assert (decided.where, decided.source, decided.judge_answer, decided.judge_confidence) == (
                "TUI decision dialog", "decision", 2.0, 0.0)
            assert saved.state["ladder"]["decided_by"] == f"a person ({app.user})"
            assert [r["tier"] for r in saved.state["ladder"]["rungs"]] == [1, 2, 3]
            verdict = str(third.query_one("#verdict").render())
            assert "Final: coherence 4, set by you; Scorer said 2" in verdict  # the person's, beside the agents'
            assert "Scorer's last score" not in verdict
            assert "finished: completed" in str(third.status.render())
            await pilot.press("escape")  # back to the debate before it: kept and reachable
            await wait_until(pilot, lambda: app.screen is second, 5)

    async def left_waiting_then_decided_from_the_sessions_screen() -> None:
        from debate_tui.ui.screens.sessions import SessionsScreen

        app = app_for("HOPELESS-ITEM later: He went to the pool every morning.")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, DecisionDialog), 60)
            third = screens(app)[2]
            await pilot.press("escape")  # nobody decides now
            await wait_until(pilot, lambda: any("waits for a person" in n.message for n in app._notifications), 5)
            assert not any("decided by" in n.message for n in app._notifications)
            path = app.store.path_for(third.session.id)
            saved = read_session(path)
            assert (saved.status, saved.outcome, saved.state["ladder"]["decided_by"]) == ("needs_human", None, None)
            assert "waits for a person" in str(third.query_one("#verdict").render())
            report = render(saved)
            assert "Decided by: a person" not in report and "No result yet" in report
            assert "Scorer's last score" not in report.split("## Transcript")[0]
            await pilot.press("f2")
            await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.rows, 10)
            table = app.screen.query_one("#sessions-table")
            table.move_cursor(row=table.get_row_index(str(path)))
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, DecisionDialog), 10)
            await pilot.press("2")
            await wait_until(pilot, lambda: read_session(path).status == "completed", 10)
        saved = read_session(path)
        assert saved.outcome.scores == {"coherence": 2.0} and saved.state["ladder"]["decided_by"].startswith("a person")
        assert "TUI sessions screen" in saved.actions[-1].text

    async def left_waiting() -> str:
        app = app_for("HOPELESS-ITEM resumed: He went to the pool every morning.")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, DecisionDialog), 60)
            await pilot.press("escape")
            await wait_until(pilot, lambda: read_session(app.store.path_for(screens(app)[2].session.id)).state[
                "ladder"]["status"] == "needs_human", 5)
            return screens(app)[2].session.id

    asyncio.run(trusted_at_tier_one())
    asyncio.run(escalated_to_the_person())
    asyncio.run(left_waiting_then_decided_from_the_sessions_screen())
    from debate_tui.cli import main
    from debate_tui.config import load_config

    waiting = asyncio.run(left_waiting())  # the TUI's waiting session, decided from the command line
    assert main(["resume", waiting, "--decide", "5"]) == 0
    saved = load_config().session_store().load(waiting)
    assert (saved.status, saved.outcome.scores, saved.actions[-1].kind) == ("completed", {"coherence": 5.0}, "decide")


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


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_ladder_demo_serve_says_how_to_open_the_tui_and_stops_on_ctrl_c_and_sigterm(tmp_path, stop) -> None:
    import os
    import signal
    import subprocess
    import sys

    work = tmp_path / "served"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    process = subprocess.Popen([sys.executable, "tools/ladder_demo.py", "--serve", str(work), "--calibration-per-kind",
                                "8"], cwd=env["PYTHONPATH"], env=env, stdout=subprocess.PIPE, text=True)
    try:
        said = []
        for line in process.stdout:  # type: ignore[union-attr]
            said.append(line)
            if line.startswith("Ctrl+C (or SIGTERM) stops the server"):
                break
        opening = next(line for line in said if "debate-tui --text" in line)
        assert f"--policy {work / 'policy.json'}" in opening
        assert f"DEBATE_TUI_SESSIONS_DIR={work / 'sessions'}" in opening
        assert (work / "texts" / "hopeless.txt").is_file() and (work / "policy.json").is_file()
        process.send_signal(getattr(signal, stop))
        assert process.wait(timeout=60) == 0
        assert process.stdout.read().strip() == "stopped"  # type: ignore[union-attr]
    finally:
        process.kill()


def test_review_decides_a_waiting_one_text_ladder(llm_server, tmp_path, capfd) -> None:
    from debate_tui.cli import main

    ladder_demo.run_demo(llm_server, tmp_path, calibration_per_kind=8, items_per_kind=1)
    hopeless = tmp_path / "hopeless.txt"
    hopeless.write_text("HOPELESS-ITEM review: He went to the pool every morning.")
    capfd.readouterr()
    assert main(["run", "--text", str(hopeless), "--policy", str(tmp_path / "policy.json")]) == 5
    session = json.loads(capfd.readouterr().out.strip().splitlines()[-1])["session"]
    assert main(["review", session, "--list"]) == 0
    listed = json.loads(capfd.readouterr().out)
    assert listed["id"] == session and "No tier trusted its answer (tier 1 single: coherence 3" in listed["question"]
    assert main(["review", session]) == 2  # no screen for one session: one line says how to answer it
    assert f"--decide {session}=VALUE" in capfd.readouterr().err
    assert main(["review", session, "--decide", f"{session}=3", "--who", "ann"]) == 0
    said = json.loads(capfd.readouterr().out)
    assert (said["status"], said["decided_by"]) == ("completed", "a person (ann)")
    assert main(["sessions", "--json", "--no-examples"]) == 0
    row = next(r for r in json.loads(capfd.readouterr().out)["sessions"] if r["id"] == session)
    assert (row["status"], row["result"]) == ("completed", "coherence 3")
    assert "Decided by: a person (ann)." in Path(row["path"]).with_suffix(".md").read_text()
