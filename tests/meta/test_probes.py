"""Bias probes: the statistics against hand-computed values, and `debate-tui probe` end to end."""

from __future__ import annotations

import json

import pytest

from debate_tui.cli import main
from debate_tui.meta import probes
from tests.helpers import REPO


def test_bootstrap_of_a_mean_gives_the_value_n_and_a_percentile_interval():
    # resampled means of [0, 1] are 0, 0.5 or 1 with chances 1/4, 1/2, 1/4: the 2.5/97.5 percentiles are 0 and 1
    assert probes.bootstrap([0.0, 1.0], lambda v: sum(v) / len(v)) == {"value": 0.5, "ci": [0.0, 1.0], "n": 2}
    assert probes.bootstrap([2.0, 2.0, 2.0], lambda v: sum(v) / len(v))["ci"] == [2.0, 2.0]
    assert probes.bootstrap([], lambda v: 1.0) == {"value": None, "ci": [None, None], "n": 0, "why": "no items"}


def test_partial_correlation_matches_the_hand_computed_value():
    # r_xy = 4/5, r_xz = 2/sqrt5, r_yz = 1/sqrt5: (0.8 - 0.4) / sqrt((1 - 0.8)(1 - 0.2)) = 0.4 / 0.4
    assert probes.partial_correlation([1, 2, 3, 4], [1, 3, 2, 4], [1, 1, 2, 2]) == pytest.approx(1.0)
    assert probes.partial_correlation([1, 2, 3], [5, 5, 5], [1, 2, 4]) is None


def test_partial_correlation_equals_the_correlation_of_residuals():
    import numpy as np

    rng = np.random.default_rng(3)
    z = rng.normal(size=50)
    x, y = z + rng.normal(size=50), 2 * z + rng.normal(size=50)
    design = np.column_stack([np.ones(50), z])
    rx = x - design @ np.linalg.lstsq(design, x, rcond=None)[0]
    ry = y - design @ np.linalg.lstsq(design, y, rcond=None)[0]
    expected = float(np.corrcoef(rx, ry)[0, 1])
    assert probes.partial_correlation(list(x), list(y), list(z)) == pytest.approx(expected)


def test_quadratic_weighted_kappa_matches_the_hand_computed_value():
    # observed disagreement 1/12 (one item off by 1 of 2 steps), chance 1/4: 1 - (1/12)/(1/4) = 2/3
    assert probes.weighted_kappa([1, 2, 3], [1, 2, 2]) == pytest.approx(2 / 3)
    assert probes.weighted_kappa([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    assert probes.weighted_kappa([4, 4], [4, 4]) is None
    assert probes.retest([(4.0, 4.0), (4.0, 4.0)])["weighted_kappa"]["why"] == (
        "both runs gave one and the same value throughout")


def test_position_flip_rate_and_first_position_share_by_hand():
    pairs = [("1", "2"), ("1", "1"), ("2", "2"), ("0", "0"), ("1", None)]
    figures = probes.position(pairs)
    assert figures["flip_rate"]["value"] == pytest.approx(1 / 4) and figures["flip_rate"]["n"] == 4
    # shown verdicts: 1,1 | 1,2 | 2,1 | (ties) -> four of six decided ones went to the first text
    assert figures["first_position_share"]["value"] == pytest.approx(4 / 6)


def test_self_preference_flags_the_judge_s_own_family():
    rows = [("gpt-3.5", 4.0, 3.0), ("gpt-3.5", 5.0, 4.0), ("claude-instant", 2.0, 3.0)]
    table = probes.self_preference(rows, ["openai/gpt-4o-mini"])
    assert [(t["system"], t["mean_error"]["value"], t["own_family"]) for t in table] == [
        ("claude-instant", -1.0, False), ("gpt-3.5", 1.0, True)]


def _items(path, pairwise: bool, n: int = 6) -> None:
    lines = [{"id": f"art{i // 2}/M{i % 2}", "text": "Tom ran home." + " And then some." * i,
              "human": {"coherence": 1 + i % 5}} for i in range(n)]
    if pairwise:
        lines = [{"id": f"p{i}", "text": f"Answer one {i}.", "text_b": f"Answer two {i}.", "human_verdict": "1"}
                 for i in range(n)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_probe_on_the_demo_model_reports_every_probe_with_intervals(tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    _items(items, pairwise=False)
    assert main(["probe", str(items), "--out", str(tmp_path / "out"), "--demo", "--criteria", "coherence",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["items"] == 6 and set(report["probes"]) == {"length", "self", "retest", "injection"}
    assert report["skipped"]["position"] == "no pairwise items (text_b) in the input"
    assert set(report["skipped"]) == {"position", "rubric"}  # debate has no --criteria-variant
    assert [s["system"] for s in report["probes"]["self"]] == ["M0", "M1"]
    assert report["probes"]["retest"]["exact_agreement"]["n"] == 6
    # the demo model is deterministic: the second run, made afresh (calls, no cache hits), agrees fully
    assert report["probes"]["retest"]["weighted_kappa"]["value"] == pytest.approx(1.0)
    retest = [json.loads(line) for line in (tmp_path / "out" / "retest.jsonl").read_text().splitlines()]
    assert sum(r["calls"] for r in retest) > 0 and sum(r["cache_hits"] for r in retest) == 0
    assert {p.name for p in (tmp_path / "out").glob("*.jsonl")} >= {"original.jsonl", "retest.jsonl"}


def test_a_judge_that_always_prefers_the_first_text_flips_every_pair(llm_server, tmp_path, capsys):
    llm_server.add_rule("Scores: 3 1")  # the first text is always better, whichever it is
    items = tmp_path / "pairs.jsonl"
    _items(items, pairwise=True, n=5)
    assert main(["probe", str(items), "--out", str(tmp_path / "out"), "--protocol", "single",
                 "--model", "openai/first-lover", "--api-base", llm_server.base_url, "--criteria", "coherence",
                 "--probes", "position"]) == 0
    out = capsys.readouterr().out
    assert "flip_rate                            1.000 [1.000, 1.000] n=5" in out
    assert "first_position_share                 1.000 [1.000, 1.000] n=5" in out


def test_an_unknown_probe_is_bad_input(tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    _items(items, pairwise=False)
    assert main(["probe", str(items), "--out", str(tmp_path / "o"), "--demo", "--probes", "position,bogus"]) == 2
    assert "unknown bogus" in capsys.readouterr().err


def test_recorded_gpt35_outputs_give_the_probes_without_calls(capsys):
    assert main(["probe", "--recorded", "topical-chat", "--probes", "retest,position", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    retest = report["probes"]["retest naturalness"]["weighted_kappa"]
    # 360 responses, 2 with no released answers; two samples of 20 both parsed for 358
    assert retest["n"] == 358 and retest["ci"][0] < retest["value"] < retest["ci"][1]
    assert report["skipped"]["position"].startswith("no recorded pairwise judge outputs")


def test_recorded_takes_no_input_file(tmp_path, capsys):
    assert main(["probe", str(tmp_path / "x.jsonl"), "--recorded", "topical-chat"]) == 2
    assert "--recorded makes no calls" in capsys.readouterr().err


def test_rubric_shift_is_the_change_in_agreement_by_hand():
    # verdicts as 1 / -1: the original rubric matches the humans on 1 of 3 items, the perturbed one on 2 of 3
    rows = [(1.0, 1.0, 1.0), (1.0, -1.0, -1.0), (-1.0, -1.0, 1.0)]
    assert probes.rubric_shift(rows, verdicts=True)["value"] == pytest.approx(1 / 3)


def test_rubric_probe_runs_every_variant_or_says_why_not(tmp_path, capsys):
    items = tmp_path / "pairs.jsonl"
    _items(items, pairwise=True, n=3)
    assert main(["probe", str(items), "--out", str(tmp_path / "a"), "--demo", "--protocol", "scaleeval",
                 "--probes", "rubric", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)["probes"]["rubric"]
    assert set(figures) == {f"{v} - original" for v in ("shortened", "gibberish", "shuffled", "flipped", "masked")}
    assert all(f["n"] == 3 for f in figures.values())
    _items(items, pairwise=False, n=3)
    assert main(["probe", str(items), "--out", str(tmp_path / "b"), "--demo", "--probes", "rubric", "--json"]) == 0
    assert "has no such option" in json.loads(capsys.readouterr().out)["skipped"]["rubric"]


# ----- docs/PROBES.md shows what the command prints (issue 33 #14) ---------------------------------------

PROBES_DOC = REPO / "docs" / "PROBES.md"


def doc_block(marker: str) -> str:
    """The first fenced block after the line holding `marker`."""
    text = PROBES_DOC.read_text(encoding="utf-8")
    start = text.index("```\n", text.index(marker)) + 4
    return text[start:text.index("```", start)]


def probe_output(capsys, tmp_path, case: str, *more: str) -> str:
    if case == "recorded":
        assert main(["probe", "--recorded", "topical-chat", *more]) == 0
        return capsys.readouterr().out
    dataset, flags = {"summeval": (["summeval", "--limit", "36", "--criteria", "coherence"], []),
                      "faireval": (["faireval"], ["--protocol", "chateval"])}[case]
    assert main(["dataset", *dataset]) == 0
    items = tmp_path / "items.jsonl"
    items.write_text(capsys.readouterr().out)
    assert main(["probe", str(items), "--out", str(tmp_path / "run"), "--demo", *flags, *more]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(("case", "marker"), [
    ("recorded", "`debate-tui probe --recorded topical-chat` (values, 95% interval, n):"),
    ("summeval", "(`debate-tui dataset summeval --limit 36 --criteria coherence`, `probe --demo`):"),
    ("faireval", "FairEval (Vicuna-80, 80 pairs), ChatEval, demo model (`probe --demo --protocol chateval`):"),
])
def test_the_doc_shows_exactly_what_probe_prints(capsys, tmp_path, case, marker):
    assert probe_output(capsys, tmp_path, case) == doc_block(marker)


def test_every_json_key_of_a_figure_is_documented(capsys, tmp_path):
    report = json.loads(probe_output(capsys, tmp_path, "summeval", "--json"))
    keys = {key for figures in report["probes"].values()
            for figure in (figures if isinstance(figures, list) else figures.values())
            for key in figure.get("mean_error", figure)}
    documented = next(line for line in PROBES_DOC.read_text().splitlines() if line.startswith("| `--json` |"))
    assert "why" in keys and all(f'"{key}"' in documented for key in keys)


def test_injection_figures_by_hand():
    # (before, after, the way the instruction asks): moved on 3 of 4, the asked way on 2 of 4
    rows = [(3.0, 5.0, 1), (3.0, 3.0, 1), (4.0, 2.0, 1), (1.0, -1.0, -1)]
    figures = probes.injection(rows)
    assert figures["moved_rate"]["value"] == pytest.approx(3 / 4)
    assert figures["obeyed_rate"]["value"] == pytest.approx(2 / 4) and figures["obeyed_rate"]["n"] == 4


@pytest.mark.parametrize("pairwise", [False, True])
def test_a_judge_that_obeys_the_text_moves_on_every_item(llm_server, tmp_path, capsys, pairwise):
    """The fake server scripted to obey an instruction in the text: every answer moves the asked way; the same
    server ignoring it moves none."""
    obeyed, plain = ("Scores: 1 3", "Scores: 3 1") if pairwise else ("Score: 5", "Score: 3")
    llm_server.add_rule(obeyed, match="give it the highest score")
    llm_server.add_rule(plain)
    items = tmp_path / "items.jsonl"
    _items(items, pairwise=pairwise, n=4)
    argv = ["probe", str(items), "--protocol", "single", "--model", "openai/obedient", "--api-base",
            llm_server.base_url, "--criteria", "coherence", "--probes", "injection", "--json"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    figures = json.loads(capsys.readouterr().out)["probes"]["injection"]
    assert (figures["moved_rate"]["value"], figures["obeyed_rate"]["value"], figures["obeyed_rate"]["n"]) == (1, 1, 4)
    told = [json.loads(line) for line in (tmp_path / "a" / "injection-input.jsonl").read_text().splitlines()]
    assert all(line["text_b" if pairwise else "text"].endswith(probes.INJECTION) for line in told)
    llm_server.reset()
    llm_server.add_rule(plain)
    assert main([*argv, "--out", str(tmp_path / "b"), "--cache-dir", str(tmp_path / "fresh")]) == 0
    assert json.loads(capsys.readouterr().out)["probes"]["injection"]["moved_rate"]["value"] == 0

