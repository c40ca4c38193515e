"""`meta` puts the protocols of one results file side by side: cost per item and agreement per dollar."""

from __future__ import annotations

import pytest

from debate_tui.meta.evaluate import format_table, meta_evaluate


def rows(protocol: str, predicted: list[float], cost: float, calls: int) -> list[dict]:
    human = [1, 2, 3, 4, 5]
    pairs = enumerate(zip(predicted, human, strict=True))
    return [{"id": f"i{k}", "criterion": "coherence", "predicted": p, "human": h, "protocol": protocol,
             "model": "m", "calls": calls, "cost_usd": cost} for k, (p, h) in pairs]


def test_cost_per_item_and_agreement_per_dollar_side_by_side() -> None:
    both = rows("single", [1, 2, 3, 5, 4], 0.001, 1) + rows("debate", [1, 2, 3, 4, 5], 0.008, 8)
    result = meta_evaluate(both, "turn", bootstrap=0)
    single, debate = result["protocols"]["single / m"], result["protocols"]["debate / m"]
    assert single["items"] == 5 and single["calls_per_item"] == 1 and single["cost_per_item"] == pytest.approx(0.001)
    assert single["criteria"]["coherence"]["pearson"] == pytest.approx(0.9)
    assert single["criteria"]["coherence"]["per_dollar"] == pytest.approx(900)  # 0.9 / $0.001 per item
    assert debate["criteria"]["coherence"]["pearson"] == pytest.approx(1.0)
    assert debate["criteria"]["coherence"]["per_dollar"] == pytest.approx(125)  # 1.0 / $0.008 per item
    table = format_table(result)
    assert "single / m       5        1.0   0.001000  coherence pearson          0.900        900.0" in table
    assert "debate / m       5        8.0   0.008000  coherence pearson          1.000        125.0" in table


def test_a_free_run_and_unlabelled_rows_say_why() -> None:
    free = rows("single", [1, 2, 3, 5, 4], 0.0, 1)
    entry = meta_evaluate(free, "turn", bootstrap=0)["protocols"]["single / m"]["criteria"]["coherence"]
    assert entry["per_dollar"] is None and entry["reason"].startswith("free: this run cost $0")
    flat = rows("single", [3, 3, 3, 3, 3], 0.001, 1)
    entry = meta_evaluate(flat, "turn", bootstrap=0)["protocols"]["single / m"]["criteria"]["coherence"]
    assert entry["per_dollar"] is None and "the predicted scores are all equal (3)" in entry["reason"]
    assert "protocols" not in meta_evaluate([{k: v for k, v in r.items() if k != "protocol"} for r in free], "turn")
