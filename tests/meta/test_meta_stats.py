"""Statistics and `meta_evaluate` on hand-made rows whose answers are known."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from debate_tui.meta import stats
from debate_tui.meta.evaluate import error_location, format_table, located_sentences, meta_evaluate

EXPECTED_CRITERION_KEYS = {"pearson", "spearman", "kendall", "n", "groups_used", "groups_skipped", "unscored", "ci"}


def _rows(criterion: str, group: str, pred: list, human: list) -> list[dict]:
    return [
        {"id": f"{group}-{i}", "group": group, "criterion": criterion, "predicted": p, "human": h}
        for i, (p, h) in enumerate(zip(pred, human, strict=True))
    ]


def test_summary_level_skips_constant_groups_and_counts_unscored() -> None:
    rows = (
        _rows("coh", "a", [1, 2, 3], [1, 2, 3])  # r = rho = tau = 1
        + _rows("coh", "b", [1, 1, 1], [1, 2, 3])  # predictions all equal: skipped
        + _rows("coh", "c", [1, 2, 3], [2, 2, 2])  # human scores all equal: skipped
        + _rows("coh", "d", [1, 3, 2, None], [1, 2, 3, 4])  # r = rho = .5, tau = 1/3; one unscored
        + _rows("coh", "e", [5], [4])  # a single row: skipped
        + _rows("coh", "f", [None, 2], [1, 2])  # one scored row left: skipped
        + _rows("coh", "g", [None, None], [1, 2])  # nothing scored: skipped
    )
    c = meta_evaluate(rows, "summary", bootstrap=0)["criteria"]["coh"]
    assert set(c) == EXPECTED_CRITERION_KEYS
    assert (c["groups_used"], c["groups_skipped"], c["unscored"], c["n"]) == (2, 5, 4, 14)
    assert c["pearson"] == pytest.approx(0.75)
    assert c["spearman"] == pytest.approx(0.75)
    assert c["kendall"] == pytest.approx((1 + 1 / 3) / 2)
    assert c["ci"] == {m: [None, None] for m in ("pearson", "spearman", "kendall")}


def test_turn_level_pools_all_rows_and_excludes_unscored() -> None:
    rows = _rows("x", "a", [1, 2, None], [1, 2, 9]) + _rows("x", "b", [3, 4], [3, 5])
    c = meta_evaluate(rows, "turn", bootstrap=0)["criteria"]["x"]
    assert (c["n"], c["unscored"], c["groups_used"], c["groups_skipped"]) == (4, 1, None, None)
    assert c["spearman"] == pytest.approx(1.0) and c["kendall"] == pytest.approx(1.0)


def test_undefined_correlations_are_none_not_nan() -> None:
    c = meta_evaluate(_rows("x", "a", [2, 2, 2], [1, 2, 3]), "turn", bootstrap=50)["criteria"]["x"]
    assert c["pearson"] is None and c["ci"]["kendall"] == [None, None]
    assert meta_evaluate(_rows("x", "a", [1, 1], [1, 2]), "summary")["criteria"]["x"]["groups_used"] == 0


def _noisy_rows(seed: int = 7) -> list[dict]:
    rnd = random.Random(seed)
    rows = []
    for g in range(30):
        human = [rnd.randint(1, 5) for _ in range(6)]
        rows += _rows("rel", f"doc{g}", [h + rnd.gauss(0, 1.5) for h in human], human)
    return rows


@pytest.mark.parametrize("level", ["turn", "summary"])
def test_bootstrap_interval_contains_the_estimate_and_is_seeded(level: str) -> None:
    rows = _noisy_rows()
    first = meta_evaluate(rows, level, bootstrap=200, seed=3)["criteria"]["rel"]
    again = meta_evaluate(rows, level, bootstrap=200, seed=3)["criteria"]["rel"]
    other = meta_evaluate(rows, level, bootstrap=200, seed=4)["criteria"]["rel"]
    assert first == again
    assert first["ci"] != other["ci"]
    for m in ("pearson", "spearman", "kendall"):
        low, high = first["ci"][m]
        assert low < first[m] < high, m
        assert high - low < 0.5


def test_cohen_kappa_by_hand() -> None:
    # 2x2 table: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no. po = .7,
    # pe = .5 * .6 + .5 * .4 = .5, kappa = (.7 - .5) / .5 = .4.
    human = ["1"] * 25 + ["2"] * 25
    pred = ["1"] * 20 + ["2"] * 5 + ["1"] * 10 + ["2"] * 15
    assert stats.cohen_kappa(pred, human) == pytest.approx(0.4)
    assert stats.cohen_kappa(["1", "1"], ["1", "1"]) is None
    assert stats.cohen_kappa(["1", "2"], ["2", "1"]) == pytest.approx(-1.0)


def test_verdicts_accuracy_kappa_and_system_agreement() -> None:
    v = stats.verdict_agreement(["1", "1", "2", None, "0"], ["1", "1", "2", "2", "1"])
    assert (v["n"], v["unscored"]) == (4, 1)
    assert v["accuracy"] == v["example_agreement"] == pytest.approx(0.75)
    assert v["preferred"] == {"predicted": "1", "human": "1"} and v["system_agreement"] is True
    assert v["confusion"]["1"] == {"1": 2, "2": 0, "0": 1}
    with pytest.raises(ValueError):
        stats.verdict_agreement(["A"], ["1"])


def test_preferred_system_is_the_mode_and_a_tie_means_none() -> None:
    assert stats.preferred(["1", "2", "2", "0"]) == "2"
    assert stats.preferred(["1", "2"]) == "0"
    assert stats.preferred([]) == "0"


def test_position_consistency() -> None:
    p = stats.position_consistency([("1", "1"), ("1", "2"), ("0", "0"), ("2", None)])
    assert p == {"consistent": pytest.approx(2 / 3), "flipped": pytest.approx(1 / 3), "n": 3, "unscored": 1}


def test_meta_evaluate_verdicts_by_scenario_and_swaps() -> None:
    rows = [
        {"id": "1", "group": "math", "predicted_verdict": "1", "human_verdict": "1", "swapped_verdict": "1"},
        {"id": "2", "group": "math", "predicted_verdict": "1", "human_verdict": "2", "swapped_verdict": "2"},
        {"id": "3", "group": "math", "predicted_verdict": "2", "human_verdict": "2", "swapped_verdict": "2"},
        {"id": "4", "group": "write", "predicted_verdict": "2", "human_verdict": "1", "swapped_verdict": None},
    ]
    result = meta_evaluate(rows, "summary", bootstrap=0)
    assert result["criteria"] == {}
    v = result["verdicts"]
    assert (v["n"], v["accuracy"]) == (4, 0.5)
    assert v["system_agreement_by_group"] == {"math": False, "write": False}
    assert result["position"]["consistent"] == pytest.approx(2 / 3)


def test_located_sentences_split_enumerated_quotes() -> None:
    quote = '1. The girls ate pizza and watched movies all night.2. The girls stayed up talking.3. "Every one" slept.'
    assert located_sentences([quote]) == {
        "the girls ate pizza and watched movies all night",
        "the girls stayed up talking",
        "every one slept",
    }
    assert located_sentences([{"type": "REP", "quote": "  Tom  ran!"}, "42."]) == {"tom ran"}


def test_error_location_precision_and_recall() -> None:
    rows = [
        {  # 2 predicted, 1 right (a partial quote of 3+ words counts); 2 annotated, 1 found
            "predicted_errors": ["Then the dog barked", "It rained."],
            "human_errors": [{"type": "LINC", "quote": "Then the dog barked at the moon."}, "Sam left."],
        },
        {"predicted_errors": [], "human_errors": ["Ann sang."]},  # a miss
        {"predicted_errors": ["the dog"], "human_errors": ["The dog slept."]},  # 2 words: too short to match
    ]
    e = error_location(rows)
    assert (e["predicted"], e["annotated"], e["matched_predicted"], e["matched_annotated"]) == (3, 4, 1, 1)
    assert e["precision"] == pytest.approx(1 / 3) and e["recall"] == pytest.approx(1 / 4)
    assert meta_evaluate([{"id": "s", **rows[0]}], "turn")["errors"]["n"] == 1


def test_mateval_error_types_are_criteria() -> None:
    rows = []
    for i, (rep, total) in enumerate([(0, -1), (-1, -3), (-2, -2), (0, 0)]):
        rows.append({"id": str(i), "criterion": "REP", "predicted": rep, "human": rep})
        rows.append({"id": str(i), "criterion": "total", "predicted": total, "human": -i})
    criteria = meta_evaluate(rows, "turn", bootstrap=0)["criteria"]
    assert list(criteria) == ["REP", "total"]
    assert criteria["REP"]["spearman"] == pytest.approx(1.0) and criteria["REP"]["kendall"] == pytest.approx(1.0)


def test_bad_rows_and_levels_are_refused() -> None:
    with pytest.raises(ValueError, match="level"):
        meta_evaluate([], "document")
    with pytest.raises(ValueError, match="predicted"):
        meta_evaluate([{"criterion": "x", "predicted": "3", "human": 2}], "turn")
    with pytest.raises(ValueError, match="group"):
        meta_evaluate([{"id": "a", "criterion": "x", "predicted": 3, "human": 2}], "summary")


def test_format_table_is_fixed_width() -> None:
    table = format_table(meta_evaluate(_noisy_rows(), "summary", bootstrap=50))
    lines = table.splitlines()
    assert lines[0] == "Meta-evaluation, summary level (95% bootstrap intervals)"
    assert lines[1].split() == ["criterion", "n", "unscored", "groups", "pearson", "spearman", "kendall"]
    assert lines[2].split()[:4] == ["rel", "180", "0", "30/30"]
    for method in ("pearson", "spearman", "kendall"):
        assert lines[2][lines[1].index(method) :].startswith(" 0.")


def test_importing_the_meta_layer_does_not_import_scipy() -> None:
    code = (
        "import sys, debate_tui.meta.evaluate, debate_tui.meta.datasets, debate_tui.meta.reference_parsers, "
        "debate_tui.cli.meta, debate_tui.cli.dataset; print('scipy' in sys.modules, 'numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_human_may_be_the_input_lines_mapping() -> None:
    rows = [
        {"id": str(i), "criterion": "coh", "predicted": p, "human": {"coh": h, "flu": 1}}
        for i, (p, h) in enumerate([(1, 1), (2, 3), (3, 2)])
    ]
    c = meta_evaluate(rows, "turn", bootstrap=0)["criteria"]
    assert list(c) == ["coh"] and c["coh"]["pearson"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="'human'"):
        meta_evaluate([{"criterion": "coh", "predicted": 1, "human": {"coh": "x"}}], "turn")
