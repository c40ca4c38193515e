"""Numbers (issue 45): every count a person types is bounded, every number read is finite and on some scale, and a
file whose quoting or nesting is broken is refused naming its line. Each test failed before (447 GiB asked of numpy,
NaN in a policy, overflow warnings, rows swallowed, exit 0 with nothing shown)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from scipy import stats as scipy_stats

from debate_tui.cli import main
from debate_tui.meta import stats
from tests.helpers.cli import write_jsonl


def rows_with(predicted: list[float], human: list[float]) -> list[dict]:
    return [{"id": f"i{k}", "criterion": "coherence", "human": h, "predicted": p}
            for k, (p, h) in enumerate(zip(predicted, human, strict=True))]


def test_a_billion_resamples_are_refused_in_one_line(tmp_path, capsys):
    results = write_jsonl(tmp_path / "r.jsonl", rows_with([1, 2, 3, 4], [1, 3, 2, 4]))
    assert main(["meta", str(results), "--bootstrap", "1000000000"]) == 2
    err = capsys.readouterr().err
    bound = f"{stats.MAX_BOOTSTRAP:,}"
    assert err.strip() == f"error: --bootstrap must be between 0 and {bound} (resamples), got 1,000,000,000"
    with pytest.raises(ValueError, match="--resamples must be between 0 and"):
        stats.check_bootstrap(-1, "--resamples")


def test_the_bootstrap_draws_in_slices_gives_the_intervals_of_one_matrix(monkeypatch):
    """Sliced (bounded memory) or whole, the same draws: checked against scipy on the whole matrix."""
    rng = np.random.default_rng(7)
    pred, human = sorted(rng.integers(1, 6, 40).astype(float)), list(rng.integers(1, 6, 40).astype(float))
    pairs = sorted(zip(pred, human, strict=True))
    p, h = np.array([x for x, _ in pairs]), np.array([y for _, y in pairs])
    monkeypatch.setattr(stats, "DRAW_CELLS", 40 * 7)  # 7 resamples a slice: 300 take 43 slices
    sliced = stats.turn_level(list(p), list(h), bootstrap=300, seed=3)["ci"]
    idx = np.random.default_rng(3).integers(0, len(p), size=(300, len(p)))
    direct = {"pearson": [], "spearman": [], "kendall": []}
    for row in idx:
        xs, ys = p[row], h[row]
        if len(set(xs)) > 1 and len(set(ys)) > 1:
            direct["pearson"].append(scipy_stats.pearsonr(xs, ys).statistic)
            direct["spearman"].append(scipy_stats.spearmanr(xs, ys).statistic)
            direct["kendall"].append(scipy_stats.kendalltau(xs, ys).statistic)
    for method, values in direct.items():
        assert sliced[method] == pytest.approx(list(np.percentile(values, [2.5, 97.5])), abs=1e-9)


@pytest.mark.parametrize("tolerance", ["nan", "inf", "-inf"])
def test_calibrate_refuses_a_tolerance_that_is_not_a_finite_number(tmp_path, capsys, tolerance):
    tier = write_jsonl(tmp_path / "tier.jsonl", [{"id": f"x{i}", "predicted": 3, "confidence": 0.9, "human": 3}
                                                 for i in range(40)])
    policy = tmp_path / "policy.json"
    assert main(["calibrate", str(tier), "--alpha", "0.2", "--delta", "0.1", f"--tolerance={tolerance}",
                 "--out", str(policy)]) == 2
    assert "--tolerance must be a finite number" in capsys.readouterr().err
    assert not policy.exists()


def test_meta_refuses_a_risk_coverage_tolerance_that_is_not_finite(tmp_path, capsys):
    results = write_jsonl(tmp_path / "r.jsonl", rows_with([1, 2, 3, 4], [1, 3, 2, 4]))
    assert main(["meta", str(results), "--level", "turn", "--risk-coverage", "--alpha", "0.2",
                 "--tolerance", "nan"]) == 2
    assert "--tolerance a finite number" in capsys.readouterr().err


def test_off_scale_predictions_are_left_out_and_counted_without_overflow(tmp_path, capsys):
    predicted, human = [2, 1e308, 3, 4, -1e308, 2, 5], [1, 2, 3, 4, 5, 2, 4]
    results = write_jsonl(tmp_path / "r.jsonl", rows_with(predicted, human))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "overflow encountered" is an error here
        assert main(["meta", str(results), "--level", "turn", "--json", "--bootstrap", "200"]) == 0
    figures = json.loads(capsys.readouterr().out)["criteria"]["coherence"]
    kept = [(p, h) for p, h in zip(predicted, human, strict=True) if abs(p) < 1e9]
    assert (figures["n"], figures["off_scale"], figures["unscored"]) == (5, 2, 0)
    xs, ys = [p for p, _ in kept], [h for _, h in kept]
    assert figures["pearson"] == pytest.approx(scipy_stats.pearsonr(xs, ys).statistic, abs=1e-12)
    assert main(["meta", str(results), "--level", "turn", "--bootstrap", "0"]) == 0
    assert "2 predictions off any scale" in capsys.readouterr().out


def test_a_csv_quote_left_open_is_refused_naming_its_line(tmp_path, capsys):
    from debate_tui.meta.labels import LabelsError, read_rows

    labels = tmp_path / "labels.csv"
    labels.write_text('id,text,coherence\na,"Hello,3\nb,World,4\nc,Again,5\n')
    with pytest.raises(LabelsError, match=r"labels.csv:2: a quoted field opened on this record is never closed"):
        read_rows(labels)
    assert main(["dataset", str(labels)]) == 2
    err = capsys.readouterr().err
    assert "labels.csv:2: a quoted field" in err and "Traceback" not in err


def test_review_of_a_results_file_ending_in_a_deeply_nested_line_says_so(tmp_path, capsys):
    deep = '{"a": ' * 1000 + "1" + "}" * 1000
    results = tmp_path / "r.jsonl"
    results.write_text(deep + "\n")  # a whole line (a crash leaves no newline): not forgiven as a half line
    assert main(["review", str(results), "--list"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == f"debate-tui: error: {results}:1: unreadable results line (not readable JSON (nested too deeply))"


def test_review_list_names_a_missing_session_and_goes_on(tmp_path, capsys):
    results = write_jsonl(tmp_path / "r.jsonl", [
        {"id": "a", "criterion": "coherence", "session": "gone", "status": "needs_human"}])
    assert main(["review", str(results), "--list"]) == 0
    [listed] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert listed["id"] == "a" and listed["question"].startswith("(session unreadable: ")
