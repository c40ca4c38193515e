"""Bootstrap intervals depend on the data, not on the order of its lines (issue 33 #13).

The seed was fixed, but a resample draws positions: the same result lines in another
order (a batch writes them as items finish) gave other intervals, so docs could not
quote them. Each test below failed before the units were put in a canonical order.
"""

from __future__ import annotations

import random

import pytest

from debate_tui.meta import probes
from debate_tui.meta.evaluate import meta_evaluate


def result_rows(count: int = 40) -> list[dict]:
    """Scores, votes and verdicts of `count` items in 6 groups, uncorrelated enough for wide intervals."""
    draw = random.Random(7)
    rows = []
    for i in range(count):
        human = draw.randint(1, 5)
        rows.append({
            "id": f"i{i}", "group": f"g{i % 6}", "criterion": "coherence", "human": {"coherence": human},
            "predicted": min(5, max(1, human + draw.choice((-2, -1, 0, 0, 1)))), "predicted_vote": draw.randint(1, 5),
            "human_verdict": draw.choice("120"), "predicted_verdict": draw.choice("120"),
            "verdict_vote": draw.choice("120"), "protocol": "debate", "model": "m", "calls": 4, "calls_vote": 1,
        })
    return rows


def shuffled(rows: list, seed: int) -> list:
    out = list(rows)
    random.Random(seed).shuffle(out)
    return out


@pytest.mark.parametrize("level", ["turn", "summary"])
def test_meta_and_vote_intervals_do_not_depend_on_line_order(level):
    rows = result_rows()
    first = meta_evaluate(rows, level, bootstrap=300)
    assert first["criteria"]["coherence"]["ci"]["pearson"][0] is not None
    assert first["vote"]["criteria"]["coherence"]["difference"]["ci"]["pearson"][0] is not None
    assert first["vote"]["verdicts"]["difference"]["ci"]["accuracy"][0] is not None
    for seed in (1, 2):
        again = meta_evaluate(shuffled(rows, seed), level, bootstrap=300)
        assert again["criteria"] == first["criteria"]
        assert again["vote"] == first["vote"]


def test_probe_intervals_do_not_depend_on_item_order():
    draw = random.Random(3)
    pairs = [(draw.choice("120"), draw.choice("120")) for _ in range(30)]
    triples = [(float(draw.randint(1, 5)), float(draw.randint(50, 400)), float(draw.randint(1, 5))) for _ in range(30)]
    scores = [(float(draw.randint(1, 5)), float(draw.randint(1, 5))) for _ in range(30)]
    systems = [(draw.choice(("gpt-4", "claude")), float(draw.randint(1, 5)), float(draw.randint(1, 5)))
               for _ in range(30)]

    def figures(order: int) -> list:
        def arranged(values: list) -> list:
            return values if order == 0 else shuffled(values, order)

        return [probes.position(arranged(pairs)), probes.length(arranged(triples)),
                probes.retest(arranged(scores)), probes.self_preference(arranged(systems), ["openai/gpt-4o"]),
                probes.rubric_shift(arranged(triples), verdicts=False)]

    first = figures(0)
    assert first[0]["flip_rate"]["ci"][0] is not None
    assert figures(1) == first and figures(2) == first
