"""Published figures reproduced from released judge outputs (data/README.md, published_numbers.json)."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from debate_tui.meta import datasets, reference_parsers
from debate_tui.meta.evaluate import meta_evaluate
from tests.helpers import FIXTURES

DATA = datasets.DataRoot(datasets.data_dir())
SHARED = FIXTURES / "shared_data"  # files the package does not ship


def test_unieval_topical_chat_turn_level_to_six_decimals() -> None:
    published = json.loads((SHARED / "published_numbers.json").read_text())
    expected = published["unieval_readme_topical_chat_turn_level_recomputed_here"]["pearson_spearman_kendall"]
    rows = json.loads(lzma.decompress((SHARED / "unieval_predictions.json.xz").read_bytes()))
    results = [
        {"id": str(i), "criterion": c, "predicted": row["predict_scores"][c], "human": row["scores"][c]}
        for i, row in enumerate(rows)
        for c in expected
    ]
    got = meta_evaluate(results, "turn", bootstrap=0)["criteria"]
    assert set(got) == set(expected) == {
        "naturalness", "coherence", "engagingness", "groundedness", "understandability", "overall",
    }
    for criterion, (pearson, spearman, kendall) in expected.items():
        c = got[criterion]
        assert (c["n"], c["unscored"]) == (360, 0)
        assert [round(c[m], 6) for m in ("pearson", "spearman", "kendall")] == [pearson, spearman, kendall], criterion


@pytest.fixture(scope="module")
def geval_samples() -> dict[str, dict[str, list[str]]]:
    return {dim: datasets.geval_samples(dim, DATA) for dim in datasets.GEVAL_DIMENSIONS}


def _results(samples: dict[str, dict[str, list[str]]], row_score) -> list[dict]:
    """One results row per topical-chat line and dimension; rows missing from the release are unscored."""
    return [
        {
            "id": line["id"],
            "group": line["group"],
            "criterion": dim,
            "human": line["human"][dim],
            "predicted": row_score(samples[dim][line["id"]]) if line["id"] in samples[dim] else None,
        }
        for line in datasets.load("topical-chat")
        for dim in datasets.GEVAL_DIMENSIONS
    ]


def _r_and_tau(results: list[dict]) -> dict[str, tuple[float, float]]:
    """Chiang & Lee's r (Pearson over all rows) and tau (Kendall tau-b per dialogue, averaged)."""
    turn = meta_evaluate(results, "turn", bootstrap=0)["criteria"]
    summary = meta_evaluate(results, "summary", bootstrap=0)["criteria"]
    return {dim: (round(turn[dim]["pearson"], 3), round(summary[dim]["kendall"], 3)) for dim in turn}


def test_released_rows_align_with_topical_chat(geval_samples) -> None:
    missing = {dim: 360 - len(s) for dim, s in geval_samples.items()}
    assert missing == {"naturalness": 2, "coherence": 1, "engagingness": 4, "groundedness": 3}
    assert all(len(r) == 20 for s in geval_samples.values() for r in s.values())


def test_chiang_lee_rule_reproduces_their_table_2_row(geval_samples) -> None:
    results = _results(geval_samples, reference_parsers.chiang_lee_mean)
    assert _r_and_tau(results) == {
        "naturalness": (0.393, 0.358),
        "coherence": (0.468, 0.391),
        "engagingness": (0.549, 0.513),
        "groundedness": (0.311, 0.566),
    }


def test_geval_rule_reproduces_the_readme_figures(geval_samples) -> None:
    results = _results(geval_samples, reference_parsers.geval_mean)
    assert _r_and_tau(results) == {
        "naturalness": (0.398, 0.344),
        "coherence": (0.468, 0.399),
        "engagingness": (0.491, 0.492),
        "groundedness": (0.284, 0.565),
    }
    summary = meta_evaluate(results, "summary", bootstrap=0)["criteria"]
    assert {d: (c["groups_used"], c["groups_skipped"], c["unscored"]) for d, c in summary.items()} == {
        "naturalness": (60, 0, 2),
        "coherence": (60, 0, 1),
        "engagingness": (60, 0, 4),
        "groundedness": (54, 6, 3),
    }


@pytest.mark.parametrize(
    ("raw", "geval", "chiang_lee"),
    [
        ("2", 2.0, 2.0),
        ("2.5", 2.5, 2.0),  # Chiang & Lee's expressions keep one digit
        ("1. Groundedness: 0", 1.0, 1.0),  # both read the list number
        ("- Groundedness: 0", 0.0, 0.0),
        ("Engagingness:\n2", 0.0, 2.0),
        ("Coherence: 3", 0.0, 3.0),
        ("Good (3)", 0.0, 3.0),
        ("The score is 2. Rating: 3", 0.0, 3.0),  # text after the last "rating:"
        ("on a scale of 1-3 I give 2", 0.0, 2.0),  # the scale mention is blanked
        ("N/A", 0.0, None),
        ("1.2.3", 0.0, 1.0),
    ],
)
def test_reference_rules_on_raw_answers(raw: str, geval: float, chiang_lee: float | None) -> None:
    assert reference_parsers.geval_score(raw) == geval
    assert reference_parsers.chiang_lee_score(raw) == chiang_lee


def test_row_scores_average_twenty_samples() -> None:
    assert reference_parsers.geval_mean(["3", "N/A", "2", "Coherence: 1"]) == pytest.approx(5 / 4)
    assert reference_parsers.chiang_lee_mean(["3", "N/A", "2", "Coherence: 1"]) == pytest.approx(2.0)
    assert reference_parsers.chiang_lee_mean(["N/A", "none"]) is None


def test_where_the_two_rules_disagree(geval_samples) -> None:
    """The rules disagree on 520 of the 28,600 samples; Chiang & Lee's fails on 3 (no digit)."""
    answers = [a for s in geval_samples.values() for r in s.values() for a in r]
    assert len(answers) == 28_600
    assert sum(reference_parsers.chiang_lee_score(a) is None for a in answers) == 3
    differ = sum(reference_parsers.chiang_lee_score(a) != reference_parsers.geval_score(a) for a in answers)
    assert differ == 520


def test_data_dir_defaults_to_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEBATE_TUI_DATA_DIR", raising=False)
    package = Path(datasets.__file__).resolve().parents[1]
    assert Path(str(datasets.data_dir())) == package / "data" / "datasets"
    monkeypatch.setenv("DEBATE_TUI_DATA_DIR", "/somewhere")
    assert datasets.data_dir() == Path("/somewhere")
    assert datasets.data_dir("/else") == Path("/else")
