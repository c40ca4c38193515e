"""`meta --plot FILE.svg|png`: the series drawn, the files written headless, and one-line refusals."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from debate_tui.cli import meta
from debate_tui.meta.evaluate import meta_evaluate
from debate_tui.meta.plots import plot_data
from tests.helpers.cli import run, scored_rows, write_jsonl


def test_series_scatter_calibration_and_cost() -> None:
    rows = scored_rows()
    data = plot_data(rows, meta_evaluate(rows, "turn", bootstrap=0))
    assert data.scatter["coherence"][:2] == [(1.0, 2.0), (1.2, 3.0)]
    # human 1 and 1.2 round to 1: their judge scores 2 and 3 average 2.5
    assert data.calibration["coherence"] == [(1.0, 2.5, 2), (2.0, 2.0, 1), (3.0, 4.0, 1), (4.0, 4.0, 1),
                                             (5.0, 5.0, 1)]
    assert data.cost[0][0] == "single / m" and data.cost[0][1] == pytest.approx(0.002)
    pearson = meta_evaluate(rows, "turn", bootstrap=0)["criteria"]["coherence"]["pearson"]
    assert data.cost[0][2] == pytest.approx(pearson)


def test_meta_plot_writes_svg_and_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")  # the `plot` extra, installed by dev.py
    results = write_jsonl(tmp_path / "results.jsonl", scored_rows())
    argv = ["meta", str(results), "--level", "turn", "--bootstrap", "0", "--plot", str(tmp_path / "m.svg")]
    assert run(meta, argv) == 0
    assert "coherence" in capsys.readouterr().out  # the table still prints
    assert (tmp_path / "m.svg").read_text().lstrip().startswith("<?xml")
    verdicts = [{"id": f"v{k}", "predicted_verdict": p, "human_verdict": h}
                for k, (p, h) in enumerate([("1", "1"), ("2", "1"), ("0", "0"), ("2", "2")])]
    pairs = write_jsonl(tmp_path / "pairs.jsonl", verdicts)
    assert run(meta, ["meta", str(pairs), "--plot", str(tmp_path / "v.png")]) == 0
    assert (tmp_path / "v.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("target", "rows", "reason"),
    [
        ("m.pdf", None, "--plot writes .svg or .png"),
        ("m.svg", [{"id": "1", "criterion": "coherence", "predicted": 3}], "nothing to plot"),
    ],
)
def test_meta_plot_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str,
                            rows: list[dict] | None, reason: str) -> None:
    results = write_jsonl(tmp_path / "results.jsonl", rows or scored_rows())
    assert run(meta, ["meta", str(results), "--level", "turn", "--plot", str(tmp_path / target)]) == 2
    err = capsys.readouterr().err
    assert reason in err and err.count("\n") == 1
    assert not (tmp_path / target).exists()


def test_without_matplotlib_one_line_says_how_to_get_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    results = write_jsonl(tmp_path / "results.jsonl", scored_rows())
    assert run(meta, ["meta", str(results), "--level", "turn", "--plot", str(tmp_path / "m.svg")]) == 2
    assert capsys.readouterr().err == "error: meta --plot needs matplotlib: pip install 'debate-tui[plot]' " \
                                      "(or pip install matplotlib)\n"
    assert not (tmp_path / "m.svg").exists()
