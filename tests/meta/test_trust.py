"""calibrate and escalate: the bound and the thresholds against scipy, the ladder tier by tier, the guarantee on
held-out data, the policy file, the decisions and their summary, and the one-line errors."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from scipy.stats import beta, binomtest

from debate_tui.cli import main
from debate_tui.meta import labels, trust
from tools import trust_study


@pytest.mark.parametrize("k,n,delta", [(0, 30, 0.1), (3, 30, 0.1), (12, 40, 0.05), (50, 412, 0.1), (29, 30, 0.2),
                                       (7, 1000, 0.01)])
def test_upper_bound_is_scipys_clopper_pearson(k, n, delta) -> None:
    ours = trust.upper_bound(k, n, delta)
    assert ours == pytest.approx(beta.ppf(1 - delta, k + 1, n - k), abs=1e-9)
    assert binomtest(k, n, ours, alternative="less").pvalue == pytest.approx(delta, abs=1e-7)
    assert trust.upper_bound(n, n, delta) == 1.0


def scipy_threshold(points, alpha, delta, min_trusted):
    """Fixed-sequence testing written independently with scipy's beta quantile."""
    chosen = None
    for candidate in sorted({c for c, _ in points if c is not None}, reverse=True):
        above = [ok for c, ok in points if c is not None and c >= candidate]
        if len(above) < min_trusted:
            continue
        k = len(above) - sum(above)
        bound = 1.0 if k == len(above) else beta.ppf(1 - delta, k + 1, len(above) - k)
        if bound > alpha:
            break
        chosen = candidate
    return chosen


@pytest.mark.parametrize("seed", range(8))
def test_thresholds_match_an_independent_scipy_computation(seed) -> None:
    rng = random.Random(seed)
    points = []
    for _ in range(rng.randint(40, 300)):
        c = round(rng.random(), rng.choice([1, 2]))
        points.append((c if rng.random() > 0.05 else None, rng.random() < 0.5 + c / 2))
    alpha, delta, least = rng.choice([0.1, 0.2, 0.3]), rng.choice([0.05, 0.1, 0.2]), rng.choice([10, 30])
    assert trust.fit_tier(points, alpha, delta, least).threshold == scipy_threshold(points, alpha, delta, least)


def test_guarantee_holds_on_held_out_draws() -> None:
    """Confidence c ~ U(0, 1), agreement with probability c: the true disagreement above t is (1 - t) / 2. Over
    300 calibration sets the chosen threshold's true disagreement exceeds alpha at most delta of the time."""
    alpha, delta, rng = 0.2, 0.1, random.Random(7)
    failures = trusted = 0
    for _ in range(300):
        points = [(c, rng.random() < c) for c in (rng.random() for _ in range(300))]
        threshold = trust.fit_tier(points, alpha, delta, 30).threshold
        if threshold is not None:
            trusted += 1
            failures += (1 - threshold) / 2 > alpha
    assert trusted > 200 and failures / 300 <= delta


def test_guarantee_on_geval_held_out_halves() -> None:
    """The released G-Eval coherence judgments, 200 random halves: among the trusted test items the mean
    disagreement is <= alpha, and the test half itself rejects "disagreement <= alpha" in at most delta of them;
    the naive rule's disagreement is higher."""
    from debate_tui.meta.datasets import DataRoot, data_dir

    lines = trust_study.geval_judgments("coherence", DataRoot(data_dir()))
    result = trust_study.study(trust_study.points_of(lines), 200, 0.4, 0.1, seed=3)
    guaranteed, naive = result["guaranteed"], result["naive"]
    assert guaranteed["splits_trusting"] > 150 and guaranteed["mean_disagreement"] <= 0.4
    assert guaranteed["share_rejecting_alpha"] <= 0.1
    assert naive["mean_disagreement"] > guaranteed["mean_disagreement"]
    assert naive["mean_coverage"] > guaranteed["mean_coverage"]


# ----- the commands ---------------------------------------------------------------------------------------------

def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def ladder(tmp_path: Path, n: int = 200) -> tuple[Path, Path]:
    """Tier 1 sure and right on the first 40% of items, unsure and wrong elsewhere; tier 2 right and sure on the
    rest but wrong on the last 30 items; costs 0.001 and 0.01 a line."""
    one, two = [], []
    for i in range(n):
        human = 1 + i % 5
        easy, hard = i < 0.4 * n, i >= n - 30
        one.append({"id": f"x{i}", "criterion": "coherence", "predicted": human if easy else human + 2,
                    "confidence": 0.95 if easy else 0.3, "human": human, "cost_usd": 0.001})
        two.append({"id": f"x{i}", "criterion": "coherence", "predicted": human + (3 if hard else 0.25),
                    "confidence": 0.2 if hard else 0.9, "human": human, "cost_usd": 0.01})
    return write(tmp_path / "one.jsonl", one), write(tmp_path / "two.jsonl", two)


def test_calibrate_tier_two_only_on_what_tier_one_passed(tmp_path, capsys) -> None:
    one, two = ladder(tmp_path)
    policy_path = tmp_path / "policy.json"
    code = main(["calibrate", str(one), str(two), "--alpha", "0.1", "--delta", "0.1", "--out", str(policy_path),
                 "--json"])
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    policy = json.loads(policy_path.read_text())
    assert printed == policy and policy["kind"] == trust.POLICY_KIND and policy["version"] == 1
    first, second = policy["tiers"]
    assert (first["threshold"], first["trusted"], first["reached"], first["passed_on"]) == (0.95, 80, 200, 120)
    assert (second["threshold"], second["trusted"], second["reached"]) == (0.9, 90, 120)
    assert second["agreement"] == 1.0 and policy["needs_human"] == 30
    assert first["guaranteed_agreement"] == pytest.approx(0.9)
    assert first["disagreement_bound"] == pytest.approx(beta.ppf(0.9, 1, 80))


def test_calibrate_table_and_never_trusts_with_its_reason(tmp_path, capsys) -> None:
    one, _ = ladder(tmp_path)
    rows = [json.loads(line) | {"confidence": 0.5, "predicted": 9} for line in one.read_text().splitlines()]
    bad = write(tmp_path / "bad.jsonl", rows)
    assert main(["calibrate", str(bad), "--alpha", "0.2", "--delta", "0.1", "--out", str(tmp_path / "p.json")]) == 0
    out = capsys.readouterr().out
    assert "never trusts: already at its top 200 items (confidence >= 0.5) the disagreement bound is 1.000" in out
    assert "left for a person: 200 (100.0%)" in out
    assert json.loads((tmp_path / "p.json").read_text())["tiers"][0]["threshold"] is None


@pytest.mark.parametrize("change,message", [
    (lambda rows: rows[:20], "20 labelled items, fewer than --min-trusted 30"),
    (lambda rows: [{k: v for k, v in r.items() if k != "confidence"} for r in rows], "no confidence"),
    (lambda rows: [r | {"confidence": 1.5} for r in rows], "confidence must be a number in [0, 1]"),
])
def test_calibrate_errors_are_one_line_and_exit_2(tmp_path, capsys, change, message) -> None:
    one, _ = ladder(tmp_path)
    rows = change([json.loads(line) for line in one.read_text().splitlines()])
    bad = write(tmp_path / "bad.jsonl", rows)
    assert main(["calibrate", str(bad), "--alpha", "0.2", "--delta", "0.1", "--out", str(tmp_path / "p.json")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_ids_that_do_not_join_exit_2(tmp_path, capsys) -> None:
    one, two = ladder(tmp_path)
    rows = [json.loads(line) for line in two.read_text().splitlines()]
    rows[5]["id"] = "elsewhere"
    write(two, rows)
    assert main(["calibrate", str(one), str(two), "--alpha", "0.2", "--delta", "0.1",
                 "--out", str(tmp_path / "p.json")]) == 2
    assert "does not join" in capsys.readouterr().err


def test_labels_from_a_file(tmp_path) -> None:
    one, _ = ladder(tmp_path)
    rows = [json.loads(line) for line in one.read_text().splitlines()]
    labels = write(tmp_path / "labels.jsonl", [{"id": r["id"], "human": {"coherence": r.pop("human")}} for r in rows])
    write(one, rows)
    assert main(["calibrate", str(one), "--labels", str(labels), "--alpha", "0.1", "--delta", "0.1",
                 "--out", str(tmp_path / "p.json")]) == 0
    assert json.loads((tmp_path / "p.json").read_text())["tiers"][0]["trusted"] == 80


def test_escalate_lines_and_summary(tmp_path, capsys) -> None:
    one, two = ladder(tmp_path)
    policy = tmp_path / "policy.json"
    assert main(["calibrate", str(one), str(two), "--alpha", "0.1", "--delta", "0.1", "--out", str(policy)]) == 0
    capsys.readouterr()
    out = tmp_path / "decisions.jsonl"
    assert main(["escalate", str(policy), str(one), str(two), "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0] == {"id": "x0", "criterion": "coherence", "predicted": 1, "confidence": 0.95, "tier": 1,
                        "status": "trusted", "human": 1}
    assert lines[100]["tier"] == 2 and lines[100]["predicted"] == lines[100]["human"] + 0.25
    assert lines[-1] == {"id": "x199", "criterion": "coherence", "confidence": None, "tier": None,
                         "status": "needs_human", "human": 5}
    assert summary["items"] == 200 and summary["needs_human"] == 30
    assert [t["trusted"] for t in summary["tiers"]] == [80, 90]
    assert summary["tiers"][0]["share"] == 0.4 and summary["coverage"] == 0.85 and summary["agreement"] == 1.0
    # tier 1 on all 200, tier 2 on the 120 it passed on; against tier 2 on everything
    assert summary["cost_usd"] == pytest.approx(200 * 0.001 + 120 * 0.01)
    assert summary["cost_usd_last_tier"] == pytest.approx(200 * 0.01)


def test_escalate_refuses_a_policy_of_other_tiers(tmp_path, capsys) -> None:
    one, two = ladder(tmp_path)
    policy = tmp_path / "policy.json"
    main(["calibrate", str(one), "--alpha", "0.1", "--delta", "0.1", "--out", str(policy)])
    assert main(["escalate", str(policy), str(one), str(two), "--out", str(tmp_path / "d.jsonl")]) == 2
    assert "has 1 tiers; 2 files were given" in capsys.readouterr().err
    assert main(["escalate", str(one), str(one), "--out", str(tmp_path / "d.jsonl")]) == 2
    assert "cannot read the policy" in capsys.readouterr().err
    policy.write_text(json.dumps({"kind": "something else"}))
    assert main(["escalate", str(policy), str(one), "--out", str(tmp_path / "d.jsonl")]) == 2
    assert "not a trust policy" in capsys.readouterr().err


# ----- meta --risk-coverage -------------------------------------------------------------------------------------

def test_risk_coverage_curve_per_tier() -> None:
    rows = [{"id": f"r{i}", "criterion": "c", "predicted": 3, "human": 3 if i < 6 else 1, "protocol": "single",
             "confidence": [0.9, 0.9, 0.8, 0.8, 0.7, 0.7, 0.6, 0.6, None, 0.1][i]} for i in range(10)]
    curve = trust.risk_coverage(rows)["single"]
    assert [(p["threshold"], p["trusted"], p["coverage"], p["agreement"]) for p in curve] == [
        (0.9, 2, 0.2, 1.0), (0.8, 4, 0.4, 1.0), (0.7, 6, 0.6, 1.0), (0.6, 8, 0.8, 0.75), (0.1, 9, 0.9, 6 / 9)]
    policy_row = {"id": "p", "criterion": "c", "predicted": 2, "human": 2,
                  "tiers": [{"tier": 1, "protocol": "single", "predicted": 4, "confidence": 0.3},
                            {"tier": 2, "protocol": "debate", "predicted": 2, "confidence": 0.9}]}
    curves = trust.risk_coverage([policy_row])
    assert curves == {"tier 1 (single)": [{"threshold": 0.3, "trusted": 1, "coverage": 1.0, "agreement": 0.0}],
                      "tier 2 (debate)": [{"threshold": 0.9, "trusted": 1, "coverage": 1.0, "agreement": 1.0}]}


def test_meta_risk_coverage_table_json_and_plot(tmp_path, capsys) -> None:
    one, _ = ladder(tmp_path)
    rows = [json.loads(line) | {"protocol": "single"} for line in one.read_text().splitlines()]
    write(one, rows)
    assert main(["meta", str(one), "--level", "turn", "--bootstrap", "0", "--risk-coverage", "--alpha", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "risk against coverage" in out and "* = at least 90%" in out
    assert "        0.95       80     40.0%     100.0% *" in out
    assert "         0.3      200    100.0%      40.0%" in out
    assert main(["meta", str(one), "--level", "turn", "--bootstrap", "0", "--risk-coverage", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["risk_coverage"]["alpha"] == 0.2 and len(result["risk_coverage"]["curves"]["single"]) == 2
    pytest.importorskip("matplotlib")
    svg = tmp_path / "risk.svg"
    assert main(["meta", str(one), "--level", "turn", "--bootstrap", "0", "--risk-coverage", "--plot", str(svg)]) == 0
    assert "risk against coverage" in svg.read_text()


async def test_meta_screen_has_a_risk_coverage_tab(tmp_path) -> None:
    from textual.widgets import TabbedContent
    from textual_plotext import PlotextPlot

    from debate_tui.meta.evaluate import format_table, meta_evaluate
    from debate_tui.meta.plots import plot_data
    from debate_tui.ui.meta_view import MetaApp

    one, _ = ladder(tmp_path)
    rows = [json.loads(line) | {"protocol": "single"} for line in one.read_text().splitlines()]
    result = meta_evaluate(rows, "turn", bootstrap=0)
    result["risk_coverage"] = {"alpha": 0.2, "tolerance": 0.5, "curves": trust.risk_coverage(rows)}
    app = MetaApp("meta", format_table(result, rows), plot_data(rows, result))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("5")
        assert app.query_one(TabbedContent).active == "risk"
        await pilot.pause()
        assert app.query_one("#risk-plot", PlotextPlot).size.width > 40


def test_calibrate_and_escalate_never_replace_a_file_unasked(tmp_path, capsys) -> None:
    one, two = ladder(tmp_path)
    policy = tmp_path / "policy.json"
    policy.write_text("notes\n")
    assert main(["calibrate", str(one), "--alpha", "0.1", "--delta", "0.1", "--out", str(policy)]) == 2
    assert "exists; pass --force" in capsys.readouterr().err and policy.read_text() == "notes\n"
    assert main(["calibrate", str(one), "--alpha", "0.1", "--delta", "0.1", "--out", str(one), "--force"]) == 2
    assert "same file as input 1" in capsys.readouterr().err
    assert main(["calibrate", str(one), "--alpha", "0.1", "--delta", "0.1", "--out", str(policy), "--force"]) == 0
    capsys.readouterr()
    assert main(["escalate", str(policy), str(one), "--out", str(policy), "--force"]) == 2
    assert "same file as input 1" in capsys.readouterr().err
    assert json.loads(policy.read_text())["kind"] == "debate-tui trust policy"


def test_tier_files_are_read_by_newlines_alone_and_bounded(tmp_path, capsys, monkeypatch) -> None:
    one, _ = ladder(tmp_path)
    rows = [json.loads(line) for line in one.read_text().splitlines()]
    rows[0]["note"] = "a\u2028b"  # valid JSON, raw: no line break
    one.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    assert main(["calibrate", str(one), "--alpha", "0.1", "--delta", "0.1", "--out", str(tmp_path / "p.json")]) == 0
    capsys.readouterr()
    nested = tmp_path / "nested.jsonl"
    nested.write_text("[" * 5000 + "]" * 5000 + "\n")
    assert main(["calibrate", str(nested), "--alpha", "0.1", "--delta", "0.1", "--out", str(tmp_path / "q.json")]) == 2
    err = capsys.readouterr().err
    assert "nested.jsonl:1" in err and err.count("\n") == 1
    monkeypatch.setenv("DEBATE_TUI_MAX_RESULTS_BYTES", "100")
    assert main(["calibrate", str(one), "--alpha", "0.1", "--delta", "0.1", "--out", str(tmp_path / "r.json")]) == 2
    assert "DEBATE_TUI_MAX_RESULTS_BYTES" in capsys.readouterr().err


@pytest.mark.parametrize("read,error", [(trust.read_jsonl, trust.TrustError)] + [
    (labels.read_rows, labels.LabelsError)])
def test_judgments_and_labels_are_read_as_json_objects_alike(tmp_path, read, error) -> None:
    """One JSONL row reader (`readfile.jsonl_objects`): the same rows, and the same words for a line that is
    no object, whichever file it is."""
    path = tmp_path / "rows.jsonl"
    path.write_text('{"id": "a", "score": 1}\n\n{"id": "b\u2028c", "score": 2}\r\n')
    assert read(path) == [{"id": "a", "score": 1}, {"id": "b\u2028c", "score": 2}]
    path.write_text('{"id": "a"}\n[1, 2]\n')
    with pytest.raises(error, match=rf"^{path}:2: expected a JSON object, got list$"):
        read(path)
