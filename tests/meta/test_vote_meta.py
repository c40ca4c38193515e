"""meta's vote and jury figures on results with known values, each expected value worked out by hand here."""

from __future__ import annotations

import json

import pytest

from debate_tui.cli import main
from debate_tui.meta.evaluate import meta_evaluate
from debate_tui.meta.jury import fleiss_kappa, krippendorff_interval
from tests.helpers import REPO

HUMAN, FINAL, VOTE = [1, 2, 3, 4], [1, 2, 3, 4], [1, 3, 2, 4]


def scored_rows(final=FINAL, vote=VOTE, human=HUMAN, groups=None, **extra) -> list[dict]:
    return [{"id": f"i{i}", "group": (groups or ["g"] * len(human))[i], "criterion": "coherence", "human": h,
             "predicted": f, "predicted_vote": v, "calls": 6, "calls_vote": 3, "cost_usd": 0.01,
             "cost_usd_vote": 0.004, **extra} for i, (f, v, h) in enumerate(zip(final, vote, human, strict=True))]


def test_turn_level_vote_figures_and_their_difference_from_the_final(tmp_path, capsys):
    # vote vs human: deviations (-1.5, .5, -.5, 1.5) and (-1.5, -.5, .5, 1.5): products sum 4, squares 5 and 5,
    # so Pearson = Spearman = 0.8; Kendall: of 6 pairs one (3, 2) is discordant, (5 - 1) / 6 = 2/3.
    # The final matches the humans' order exactly: 1, 1, 1.
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(row) + "\n" for row in scored_rows()))
    assert main(["meta", str(results), "--level", "turn", "--json", "--bootstrap", "200"]) == 0
    output = json.loads(capsys.readouterr().out)
    assert output["criteria"]["coherence"]["pearson"] == pytest.approx(1.0)
    vote = output["vote"]
    figures = vote["criteria"]["coherence"]
    assert figures["pearson"] == pytest.approx(0.8)
    assert figures["spearman"] == pytest.approx(0.8)
    assert figures["kendall"] == pytest.approx(2 / 3)
    difference = figures["difference"]
    assert (difference["pearson"], difference["spearman"]) == (pytest.approx(0.2), pytest.approx(0.2))
    assert difference["kendall"] == pytest.approx(1 / 3) and difference["n"] == 4
    low, high = difference["ci"]["pearson"]
    assert 0 <= low <= high  # the final is never worse on any draw: it ranks perfectly on every one


def test_the_interval_is_paired_a_vote_equal_to_the_final_differs_by_exactly_zero_on_every_draw():
    noisy = [2, 1, 4, 3, 5, 3]
    rows = scored_rows(final=noisy, vote=noisy, human=[1, 2, 3, 4, 5, 6])
    difference = meta_evaluate(rows, "turn", bootstrap=200)["vote"]["criteria"]["coherence"]["difference"]
    assert difference["pearson"] == 0 and difference["ci"]["pearson"] == [0.0, 0.0]


def test_summary_level_difference_averages_the_groups_differences():
    # g1: final (1, 2, 3) r = 1, vote (1, 3, 2) against (1, 2, 3): products 1 + 0 + 0 over sqrt(2) sqrt(2), r = 0.5
    # g2: final (3, 2, 1) r = -1, vote (1, 2, 3) r = 1
    # vote, summary level: (0.5 + 1) / 2 = 0.75; final - vote: ((1 - 0.5) + (-1 - 1)) / 2 = -0.75
    rows = scored_rows(final=[1, 2, 3, 3, 2, 1], vote=[1, 3, 2, 1, 2, 3], human=[1, 2, 3, 1, 2, 3],
                       groups=["g1"] * 3 + ["g2"] * 3)
    figures = meta_evaluate(rows, "summary", bootstrap=100)["vote"]["criteria"]["coherence"]
    assert figures["pearson"] == pytest.approx(0.75) and figures["groups_used"] == 2
    assert figures["difference"]["pearson"] == pytest.approx(-0.75)
    assert figures["difference"]["groups_used"] == 2


def test_verdict_vote_accuracy_kappa_and_difference():
    # humans 1 1 2 2; final 1 1 2 1 (accuracy 3/4); vote 1 2 1 1 (accuracy 1/4), difference 1/2.
    # vote kappa: observed 1/4; marginals vote {1: 3, 2: 1}, human {1: 2, 2: 2}: expected (3*2 + 1*2) / 16 = 1/2,
    # so (1/4 - 1/2) / (1 - 1/2) = -1/2.
    rows = [{"id": f"p{i}", "predicted_verdict": f, "verdict_vote": v, "human_verdict": h, "calls": 9,
             "calls_vote": 3} for i, (f, v, h) in enumerate(zip("1121", "1211", "1122", strict=True))]
    verdicts = meta_evaluate(rows, "turn", bootstrap=200)["vote"]["verdicts"]
    assert verdicts["accuracy"] == 0.25 and verdicts["kappa"] == pytest.approx(-0.5)
    assert verdicts["difference"]["accuracy"] == 0.5 and verdicts["difference"]["n"] == 4
    low, high = verdicts["difference"]["ci"]["accuracy"]
    assert 0 <= low <= 0.5 <= high <= 1  # per item the final's gain is 0, 1, 1, 0: every draw's mean is in [0, 1]


def test_calls_and_cost_of_the_final_and_of_the_vote():
    vote = meta_evaluate(scored_rows(), "turn", bootstrap=0)["vote"]
    assert (vote["final_calls"], vote["calls"], vote["items"]) == (24, 12, 4)
    assert (vote["final_calls_per_item"], vote["calls_per_item"]) == (6.0, 3.0)
    assert (vote["final_cost_usd"], vote["cost_usd"]) == (pytest.approx(0.04), pytest.approx(0.016))


def test_each_protocol_and_model_in_one_file_gets_its_own_block():
    rows = scored_rows(protocol="debate", model="m") + [
        {**row, "id": row["id"] + "c", "protocol": "chateval"} for row in scored_rows(model="m")]
    vote = meta_evaluate(rows, "turn", bootstrap=0)["vote"]
    assert set(vote["by_run"]) == {"debate / m", "chateval / m"}
    assert vote["by_run"]["debate / m"]["items"] == 4 and vote["items"] == 8


def test_no_vote_block_without_vote_fields_and_the_final_s_figures_unchanged():
    plain = [{k: v for k, v in row.items() if "vote" not in k} for row in scored_rows()]
    result = meta_evaluate(plain, "turn", bootstrap=0)
    assert "vote" not in result and "jury" not in result
    assert meta_evaluate(scored_rows(), "turn", bootstrap=0)["criteria"] == result["criteria"]


def test_krippendorff_s_alpha_and_fleiss_kappa_by_hand():
    # units (1, 1), (2, 2), (3, 4): only the last disagrees, its ordered pairs 2 * 1^2 / (2 - 1) = 2, over
    # n = 6 values: observed 1/3. Pooled 1 1 2 2 3 4: sum 13, squares 35, ordered-pair gaps 2 (6*35 - 169) = 82,
    # expected 82 / (6 * 5). alpha = 1 - (1/3) / (82/30) = 72/82.
    assert krippendorff_interval([[1, 1], [2, 2], [3, 4]]) == pytest.approx(72 / 82)
    assert krippendorff_interval([[1, None], [2, 2], [3, 4]]) == pytest.approx(
        1 - (2 / 4) / (2 * (4 * (4 + 4 + 9 + 16) - 11 ** 2) / (4 * 3)))  # the lone value is not pairable
    assert krippendorff_interval([[3, 3], [3, 3]]) is None
    # 3 raters: (1, 1, 2) agreement 2/6, (2, 2, 2) 1, (1, 2, 0) 0: mean 4/9; shares 3/9, 5/9, 1/9: chance 35/81;
    # kappa = (4/9 - 35/81) / (1 - 35/81) = 1/46
    assert fleiss_kappa([list("112"), list("222"), list("120")]) == pytest.approx(1 / 46)


def test_meta_reports_a_jury_s_inter_judge_agreement(tmp_path, capsys):
    judges = {"Judge 1": [1, 2, 3], "Judge 2": [1, 2, 4], "Judge 3": [3, 2, 1]}
    rows = [{"id": f"i{i}", "group": "g", "criterion": "coherence", "human": 2, "predicted": 2,
             "predicted_judges": {name: scores[i] for name, scores in judges.items()},
             "jury": {"Judge 1": "a", "Judge 2": "b", "Judge 3": "c"}} for i in range(3)]
    results = tmp_path / "jury.jsonl"
    results.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert main(["meta", str(results), "--json", "--level", "turn"]) == 0
    jury = json.loads(capsys.readouterr().out)["jury"]
    # Spearman: judges 1 and 2 rank alike (1), judge 3 reverses both (-1, -1): mean -1/3
    assert jury["criteria"]["coherence"]["mean_spearman"] == pytest.approx(-1 / 3)
    assert jury["criteria"]["coherence"]["alpha"] == pytest.approx(
        krippendorff_interval([[1, 1, 3], [2, 2, 2], [3, 4, 1]]))
    assert jury["judges"] == ["Judge 1", "Judge 2", "Judge 3"] and jury["models"]["Judge 2"] == "b"
    assert main(["meta", str(results), "--level", "turn"]) == 0
    assert "jury of 3 (Judge 1: a, Judge 2: b, Judge 3: c)" in capsys.readouterr().out


def test_docs_vote_shows_what_the_scripted_debate_run_gives(tmp_path, capsys):
    """Issue 33 #13: docs/VOTE.md's intervals, from tools/vote_table.py's DEBATE run, in any line order."""
    import importlib.util
    import random

    from debate_tui.testing.fake_server import FakeLLMServer

    repo = REPO
    spec = importlib.util.spec_from_file_location("vote_table", repo / "tools" / "vote_table.py")
    assert spec is not None and spec.loader is not None
    vote_table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vote_table)
    protocol, dataset, flags = vote_table.RUNS[0]
    with FakeLLMServer() as server:
        scripted = ["--model", "openai/oracle", "--api-base", server.base_url]
        result = vote_table.measure(protocol, dataset, flags, scripted, tmp_path, 30, 1000, server)
    doc = (repo / "docs" / "VOTE.md").read_text()
    assert vote_table.row(protocol, dataset, "fake server, scripted", result) in doc.splitlines()
    (results,) = tmp_path.glob("debate-*.jsonl")
    lines = results.read_text().splitlines(keepends=True)
    random.Random(1).shuffle(lines)
    results.write_text("".join(lines))
    assert main(["meta", str(results), "--level", "turn"]) == 0
    assert capsys.readouterr().out in doc
