"""`meta.compare`: two results files paired by (id, criterion), the statistics checked against scipy."""

from __future__ import annotations

import random

import pytest
from scipy import stats

from debate_tui.domain import agrees
from debate_tui.meta.compare import by_key, compare_results, paired_interval
from debate_tui.meta.stats import MAX_BOOTSTRAP, check_bootstrap

HUMAN = [1, 2, 2, 3, 3, 3, 4, 4, 5, 5, 1, 2, 4, 5, 3, 2, 1, 4]
A = [1, 2, 3, 3, 4, 2, 4, 5, 5, 4, 2, 2, 3, 5, 3, 1, 1, 4]
B = [2, 4, 3, 5, 4, 1, 2, 5, 3, 4, 4, 5, 1, 2, 5, 1, 3, 4]


def rows(scores: list[float], *, cost: float | None = None) -> list[dict]:
    out = [{"id": f"i{k}", "criterion": "coherence", "predicted": s, "human": h, "session": f"s{k}"}
           for k, (s, h) in enumerate(zip(scores, HUMAN, strict=True))]
    if cost is not None:
        for row in out:
            row |= {"cost_usd": cost, "calls": 3}
    return out


def compared(a: list[dict], b: list[dict], **options):
    return compare_results(by_key(list(enumerate(a, 1)), "a.jsonl"), by_key(list(enumerate(b, 1)), "b.jsonl"),
                           **options)


def test_scores_and_agreement_match_scipy_on_the_same_data():
    summary = compared(rows(A, cost=0.01), rows(B, cost=0.05), bootstrap=500, seed=3).summary
    deltas = [b - a for a, b in zip(A, B, strict=True)]
    s = summary["scores"]
    assert s["pairs"] == len(A) and s["mean_delta"] == pytest.approx(sum(deltas) / len(deltas))
    assert s["mean_a"] == pytest.approx(sum(A) / len(A)) and s["mean_b"] == pytest.approx(sum(B) / len(B))
    assert s["wilcoxon_p"] == pytest.approx(stats.wilcoxon(deltas).pvalue, rel=1e-12)
    assert s["changed"] == sum(abs(d) > 0.5 for d in deltas)
    low, high = s["ci95"]
    assert low < s["mean_delta"] < high
    ok_a = [agrees(p, h) for p, h in zip(A, HUMAN, strict=True)]
    ok_b = [agrees(p, h) for p, h in zip(B, HUMAN, strict=True)]
    g = summary["agreement"]
    assert g["labelled"] == len(A) and g["a"] == pytest.approx(sum(ok_a) / len(A))
    assert g["delta"] == pytest.approx((sum(ok_b) - sum(ok_a)) / len(A))
    only_a = sum(x and not y for x, y in zip(ok_a, ok_b, strict=True))
    only_b = sum(y and not x for x, y in zip(ok_a, ok_b, strict=True))
    assert only_a + only_b > 0
    assert g["mcnemar_p"] == pytest.approx(stats.binomtest(only_b, only_a + only_b, 0.5).pvalue, rel=1e-12)
    assert summary["cost"] == {"a_usd": pytest.approx(0.01 * len(A)), "b_usd": pytest.approx(0.05 * len(A)),
                               "a_calls": 3 * len(A), "b_calls": 3 * len(A)}


def test_the_paired_interval_is_scipys_percentile_bootstrap_of_the_mean_in_distribution():
    deltas = [float(b - a) for a, b in zip(A, B, strict=True)]
    ours = paired_interval(deltas, 4000, 11)
    theirs = stats.bootstrap((deltas,), lambda x, axis: x.mean(axis=axis), n_resamples=4000, method="percentile",
                             confidence_level=0.95, random_state=5).confidence_interval
    assert ours[0] == pytest.approx(theirs.low, abs=0.12) and ours[1] == pytest.approx(theirs.high, abs=0.12)


def test_many_pairs_of_few_values_drawn_as_counts_give_scipys_interval_too():
    deltas = [float(d) for d in random.Random(4).choices([-1, 0, 0, 1, 1], k=400)]  # agreement's -1, 0, 1
    ours = paired_interval(deltas, 4000, 2)
    theirs = stats.bootstrap((deltas,), lambda x, axis: x.mean(axis=axis), n_resamples=4000, method="percentile",
                             confidence_level=0.95, random_state=5).confidence_interval
    assert ours[0] == pytest.approx(theirs.low, abs=0.02) and ours[1] == pytest.approx(theirs.high, abs=0.02)
    assert paired_interval(deltas, 4000, 2) == ours and paired_interval(sorted(deltas), 4000, 2) == ours


def test_the_bootstrap_is_the_same_for_the_same_seed_in_any_line_order():
    a, b = rows(A), rows(B)
    first = compared(a, b, bootstrap=300, seed=7).summary
    shuffled_a, shuffled_b = a[:], b[:]
    random.Random(1).shuffle(shuffled_a)
    random.Random(2).shuffle(shuffled_b)
    assert compared(shuffled_a, shuffled_b, bootstrap=300, seed=7).summary == first
    other = compared(a, b, bootstrap=300, seed=8).summary
    assert other["scores"]["ci95"] != first["scores"]["ci95"]


def test_b_worse_when_the_agreement_interval_lies_below_zero_and_better_names_the_side():
    humans = [1, 2, 3, 4, 5] * 8
    good = [{"id": f"i{k}", "predicted": h, "human": h} for k, h in enumerate(humans)]
    bad = [{"id": f"i{k}", "predicted": 6 - h if h != 3 else 1, "human": h} for k, h in enumerate(humans)]
    worse = compared(good, bad, bootstrap=400).summary
    assert worse["agreement"]["better"] == "a" and worse["agreement"]["ci95"][1] < 0 and worse["worse"] is True
    better = compared(bad, good, bootstrap=400).summary
    assert better["agreement"]["better"] == "b" and better["worse"] is False


def test_without_labels_agreement_and_worse_are_null():
    a = [{"id": k, "predicted": s} for k, s in enumerate(A)]
    b = [{"id": k, "predicted": s} for k, s in enumerate(B)]
    summary = compared(a, b, bootstrap=0).summary
    assert summary["agreement"] is None and summary["worse"] is None
    assert summary["scores"]["ci95"] == [None, None]
    assert summary["cost"] == {"a_usd": None, "b_usd": None, "a_calls": None, "b_calls": None}


def test_verdict_flips_and_changed_items_most_first():
    a = [{"id": "p1", "predicted_verdict": "1"}, {"id": "p2", "predicted_verdict": "2"},
         {"id": "p3", "predicted_verdict": "0"}, {"id": "p4", "predicted_verdict": None}]
    b = [{"id": "p1", "predicted_verdict": "2"}, {"id": "p2", "predicted_verdict": "2"},
         {"id": "p3", "predicted_verdict": "1"}, {"id": "p4", "predicted_verdict": "1"}]
    comparison = compared(a, b, bootstrap=0)
    assert comparison.summary["verdicts"] == {"pairs": 3, "flips": 2, "flip_rate": pytest.approx(2 / 3)}
    assert [c.pair.key[0] for c in comparison.changed] == ["p1", "p3"]
    scored = compared(rows(A), rows(B), bootstrap=0)
    deltas = [abs(c.pair.delta or 0) for c in scored.changed]
    assert deltas == sorted(deltas, reverse=True) and min(deltas) > 0.5
    assert scored.changed[0].data()["session_a"] == scored.changed[0].data()["session_b"]


def test_pairs_by_id_and_criterion_and_counts_each_side_alone():
    a = [{"id": 1, "criterion": "coherence", "predicted": 3}, {"id": 1, "criterion": "fluency", "predicted": 2},
         {"id": 2, "criterion": "coherence", "predicted": 4}]
    b = [{"id": "1", "criterion": "coherence", "predicted": 5}, {"id": 3, "criterion": "coherence", "predicted": 1}]
    comparison = compared(a, b, bootstrap=0)
    assert [p.key for p in comparison.pairs] == [("1", "coherence")]
    assert comparison.only_a == [("1", "fluency"), ("2", "coherence")] and comparison.only_b == [("3", "coherence")]
    assert comparison.summary["pairs"] == 1 and comparison.summary["only_a"] == 2
    assert comparison.summary["scores"]["mean_delta"] == 2


def test_one_bootstrap_bound_for_every_command():
    assert check_bootstrap(MAX_BOOTSTRAP) == MAX_BOOTSTRAP and check_bootstrap(0) == 0
    for wrong in (MAX_BOOTSTRAP + 1, -1):
        with pytest.raises(ValueError, match=f"{MAX_BOOTSTRAP:,}"):
            check_bootstrap(wrong)
