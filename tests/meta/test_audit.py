"""`debate-tui audit`: the binomial alarm against an independent computation, which labels count, the exit codes;
the review panel's Cohen's kappa against a hand-worked table and a numpy computation."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from debate_tui.meta.audit import MIN_AUDITED, check, p_value, read_labels, verdict
from debate_tui.meta.concordance import cohen_kappa, concordance
from tests.helpers.cli import run_cli, write_jsonl


def tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed from the definition."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


@pytest.mark.parametrize(("k", "n", "alpha"), [(0, 10, 0.2), (4, 10, 0.2), (7, 20, 0.15), (12, 50, 0.1), (50, 50, 0.3)])
def test_the_p_value_is_the_exact_one_sided_binomial_tail(k, n, alpha) -> None:
    assert p_value(k, n, alpha) == pytest.approx(tail(k, n, alpha), rel=1e-9, abs=1e-15)
    assert p_value(k, n, alpha) == pytest.approx(stats.binom.sf(k - 1, n, alpha), rel=1e-9, abs=1e-15)


def test_holds_until_the_p_value_drops_below_delta_and_cannot_tell_under_ten() -> None:
    # 20 audited at alpha 0.2: P(X >= 7) = 0.0867 >= 0.05 holds; P(X >= 8) = 0.0321 < 0.05 is violated
    assert verdict(7, 20, 0.2, 0.05)["holds"] is True
    violated = verdict(8, 20, 0.2, 0.05)
    assert violated["holds"] is False and violated["rate"] == 0.4 and "p = 0.03214" in violated["reason"]
    few = verdict(9, MIN_AUDITED - 1, 0.2, 0.05)
    assert few["holds"] is None and "only 9 audited trusted items, fewer than 10" in few["reason"]
    assert few["p_value"] == pytest.approx(tail(9, 9, 0.2))
    assert verdict(0, 0, 0.2, 0.05) | {"reason": ""} == {"audited": 0, "disagreements": 0, "rate": None,
                                                         "p_value": None, "holds": None, "reason": ""}


POLICY = {"alpha": 0.2, "delta": 0.1, "tolerance": 0.5}


def ladder_rows() -> list[dict]:
    """12 lines trusted by tier 1 (answer 3), 10 by tier 2 (answer 4), 3 no tier trusted."""
    rows = [{"id": f"a{i}", "criterion": "coherence", "predicted": 3.0, "tier": 1, "status": "completed",
             "tiers": [{"tier": 1, "protocol": "single", "threshold": 0.9}]} for i in range(12)]
    rows += [{"id": f"b{i}", "criterion": "coherence", "predicted": 4.0, "tier": 2, "status": "completed",
              "tiers": [{"tier": 1}, {"tier": 2, "protocol": "debate", "threshold": 0.5}]} for i in range(10)]
    rows += [{"id": f"c{i}", "criterion": "coherence", "predicted": None, "tier": None, "status": "needs_human",
              "tiers": [{"tier": 1}, {"tier": 2}]} for i in range(3)]
    return rows


def label(ident: str, human: float, source: str = "audit", blind: bool = True) -> dict:
    return {"id": ident, "criterion": "coherence", "human": human, "source": source, "blind": blind}


def test_per_tier_and_all_counting_only_blind_audits_by_default() -> None:
    lines = [label(f"a{i}", 3.0 if i >= 5 else 1.0) for i in range(12)]  # tier 1: 5 of 12 disagree
    lines += [label(f"b{i}", 4.5) for i in range(10)]  # within the tolerance: all agree
    lines += [label("c0", 1.0), label("a0", 3.0, source="review", blind=False)]  # not trusted; not blind (later)
    labels, counts = read_labels(lines, any_labels=False)
    assert counts == {"lines": 24, "counted": 23, "left_out": 1}
    result = check(ladder_rows(), labels, POLICY)
    one, two = result["tiers"]
    assert (one["tier"], one["protocol"], one["audited"], one["disagreements"]) == (1, "single", 11, 4)
    assert one["p_value"] == pytest.approx(tail(4, 11, 0.2)) and one["holds"] is True  # a0's later label is left out
    assert (two["audited"], two["disagreements"], two["holds"]) == (10, 0, True)
    assert (result["all"]["audited"], result["all"]["disagreements"]) == (21, 4) and result["holds"] is True
    every, _ = read_labels(lines, any_labels=True)
    assert check(ladder_rows(), every, POLICY)["tiers"][0]["disagreements"] == 4  # a0 agrees now: 4 of 12
    assert check(ladder_rows(), every, POLICY)["tiers"][0]["audited"] == 12


def files(tmp_path: Path, lines: list[dict]) -> list[str]:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"kind": "debate-tui trust policy", "version": 1, **POLICY,
                                  "tiers": [{"tier": 1, "threshold": 0.9}, {"tier": 2, "threshold": 0.5}]}))
    return [str(policy), str(write_jsonl(tmp_path / "results.jsonl", ladder_rows())), "--labels",
            str(write_jsonl(tmp_path / "labels.jsonl", lines))]


def test_the_command_exits_1_when_violated_0_when_it_cannot_tell_2_on_bad_input(tmp_path, capsys) -> None:
    bad = [label(f"b{i}", 1.0) for i in range(10)]  # tier 2: 10 of 10 disagree
    code, summary, _ = run_cli(capsys, "audit", *files(tmp_path, bad))
    assert code == 1 and summary["holds"] is False
    assert summary["tiers"][0]["tier"] == 2 and summary["tiers"][0]["p_value"] == pytest.approx(0.2**10)
    assert summary["labels_used"]["rule"].startswith("blind audit labels only")
    code, summary, _ = run_cli(capsys, "audit", *files(tmp_path, bad[:9]))
    assert code == 0 and summary["holds"] is None and "fewer than 10" in summary["all"]["reason"]
    code, summary, _ = run_cli(capsys, "audit", *files(tmp_path, [{**b, "blind": False} for b in bad]))
    assert code == 0 and summary["all"]["audited"] == 0  # seen labels do not count...
    code, summary, _ = run_cli(capsys, "audit", *files(tmp_path, [{**b, "blind": False} for b in bad]),
                               "--any-labels", "--json")
    assert code == 1 and summary["labels_used"]["rule"] == "every label (--any-labels)"  # ...unless asked
    argv = files(tmp_path, bad)
    plain = write_jsonl(tmp_path / "plain.jsonl", [{"id": "a0", "criterion": "coherence", "predicted": 3.0}])
    code, _, err = run_cli(capsys, "audit", argv[0], str(plain), *argv[2:])
    assert code == 2 and "no line says which tier trusted it" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(capsys, "audit", argv[0], argv[1], "--labels", str(tmp_path / "missing.jsonl"))
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_kappa_against_a_hand_worked_table_and_numpy() -> None:
    # judge x person: 20 agree on "1", 15 on "2", 5 "1"->"2", 10 "2"->"1" (n 50)
    pairs = [("1", "1")] * 20 + [("2", "2")] * 15 + [("1", "2")] * 5 + [("2", "1")] * 10
    # p_o = 35/50 = 0.7; judge 25/25, person 30/20: p_e = (25*30 + 25*20) / 2500 = 0.5; kappa = 0.2/0.5 = 0.4
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    rng = np.random.default_rng(7)
    judge, person = rng.integers(1, 6, 200), rng.integers(1, 6, 200)
    person[:120] = judge[:120]
    table = np.zeros((5, 5))
    np.add.at(table, (judge - 1, person - 1), 1)
    table /= table.sum()
    expected = (np.trace(table) - table.sum(1) @ table.sum(0)) / (1 - table.sum(1) @ table.sum(0))
    result = concordance([(float(a), float(b)) for a, b in zip(judge, person, strict=True)])
    assert result.kappa == pytest.approx(expected) and result.n == 200
    assert result.agreement == pytest.approx(np.mean(judge == person))
    assert sum(result.confusion.values()) == 200 and result.confusion[("3", "3")] == int(200 * table[2, 2] + 0.5)
    assert cohen_kappa([("3", "3")] * 4) is None  # one answer on both sides: undefined
