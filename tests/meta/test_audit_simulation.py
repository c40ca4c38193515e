"""The core of tools/audit_simulation.py: the audits it draws are judged by `audit`'s own rule, and its share of
alarms agrees with the exact binomial probability (computed here from scipy, independently)."""

from __future__ import annotations

import pytest
from scipy import stats

from tools.audit_simulation import Pools, alarm_share, exact_alarm, pools


def first_alarm(size: int, alpha: float, delta: float) -> int:
    """The fewest disagreements of `size` whose one-sided p-value is below delta, from scipy's survival function."""
    return next(k for k in range(size + 1) if stats.binom.sf(k - 1, size, alpha) < delta)


@pytest.mark.parametrize(("rate", "size"), [(0.2, 50), (0.4, 25), (0.4, 50), (0.4, 100)])
def test_the_exact_alarm_probability_is_the_binomial_tail_past_the_first_alarm(rate, size) -> None:
    k = first_alarm(size, 0.2, 0.1)
    assert exact_alarm(rate, size, 0.2, 0.1) == pytest.approx(stats.binom.sf(k - 1, size, rate))
    assert exact_alarm(0.2, size, 0.2, 0.1) <= 0.1  # at the guaranteed rate, at most delta


def test_the_simulated_share_is_seeded_and_close_to_the_exact_one() -> None:
    judged = [(3.0, 3.0), (3.0, 3.4), (4.0, 2.0), ("1", "2"), ("1", "1")]
    split = pools(judged)
    assert split == Pools([(3.0, 3.0), (3.0, 3.4), ("1", "1")], [(4.0, 2.0), ("1", "2")])
    share = alarm_share(split, 0.4, 50, 2000, 0.2, 0.1, seed=3)
    assert share == alarm_share(split, 0.4, 50, 2000, 0.2, 0.1, seed=3)
    assert share == pytest.approx(exact_alarm(0.4, 50, 0.2, 0.1), abs=0.02)  # 2000 draws: standard error 0.005
    assert alarm_share(split, 0.0, 50, 200, 0.2, 0.1, seed=3) == 0.0  # a judge that always agrees never alarms
    assert alarm_share(split, 1.0, 9, 50, 0.2, 0.1, seed=3) == 0.0  # fewer than 10 audited: cannot tell, no alarm
