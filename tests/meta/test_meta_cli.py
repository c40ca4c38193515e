"""`debate-tui meta` and `debate-tui dataset` handlers, driven through their own parsers."""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from debate_tui.cli import dataset, meta
from debate_tui.meta import datasets
from tests.helpers.cli import run, write_jsonl

ROOT = datasets.data_dir()  # the package's own archives, given as --data-dir


def score_rows() -> list[dict]:
    return [
        {"id": f"{g}-{i}", "group": g, "criterion": "coherence", "predicted": p, "human": h}
        for g, pairs in {"d1": [(1, 1), (2, 3), (3, 2)], "d2": [(4, 4), (5, 5), (None, 1)]}.items()
        for i, (p, h) in enumerate(pairs)
    ]


def test_meta_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = write_jsonl(tmp_path / "results.jsonl", score_rows())
    assert run(meta, ["meta", str(results), "--json", "--bootstrap", "20", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    result = json.loads(out)
    assert set(result) == {"level", "criteria"} and result["level"] == "summary"
    c = result["criteria"]["coherence"]
    assert set(c) == {"pearson", "spearman", "kendall", "n", "groups_used", "groups_skipped", "unscored", "ci"}
    assert set(c["ci"]) == {"pearson", "spearman", "kendall"} and all(len(v) == 2 for v in c["ci"].values())
    assert (c["n"], c["unscored"], c["groups_used"], c["groups_skipped"]) == (5, 1, 2, 0)
    assert c["pearson"] == pytest.approx((0.5 + 1.0) / 2)


def test_meta_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = write_jsonl(tmp_path / "results.jsonl", score_rows())
    assert run(meta, ["meta", str(results), "--level", "turn", "--bootstrap", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Meta-evaluation, turn level")
    assert lines[2].split()[:4] == ["coherence", "5", "1", "-"]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"id": "a", "criterion": "x", "predicted": 1, "human": 1}\n\n{"id": "b", "predicted": 2,\n', ":3: "),
        ('{"id": "a", "criterion": "x", "predicted": "high", "human": 1}\n', ":1: 'predicted' must be a number"),
        ("[1, 2]\n", ":1: a results row must be a JSON object"),
        ('{"id": "a", "predicted_verdict": "A", "human_verdict": "1"}\n', ":1: 'predicted_verdict' must be one of"),
    ],
)
def test_meta_bad_line_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, reason: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    assert run(meta, ["meta", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and f"bad.jsonl{reason}" in captured.err


def test_meta_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(meta, ["meta", str(tmp_path / "absent.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot read") and err.count("\n") == 1


def test_faireval_accuracy_and_kappa_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A verdict file built from a chosen confusion matrix against the 80 human labels."""
    # rows: human verdict; columns: how many of them the judge called "1", "2", "0"
    confusion = {"1": {"1": 30, "2": 6, "0": 5}, "2": {"1": 5, "2": 18, "0": 2}, "0": {"1": 4, "2": 3, "0": 7}}
    lines = datasets.load("faireval", root=ROOT)
    pending = {h: [p for p, k in row.items() for _ in range(k)] for h, row in confusion.items()}
    rows = [
        {"id": x["id"], "group": x["group"], "human_verdict": x["human_verdict"],
         "predicted_verdict": pending[x["human_verdict"]].pop()}
        for x in lines
    ]
    assert not any(pending.values())  # the matrix uses every one of the 41 / 25 / 14 labels
    results = write_jsonl(tmp_path / "verdicts.jsonl", rows)
    assert run(meta, ["meta", str(results), "--json"]) == 0
    v = json.loads(capsys.readouterr().out)["verdicts"]

    # By hand: 55 of 80 agree. Human marginals 41/25/14, judge marginals 39/27/14.
    # Chance agreement (41*39 + 25*27 + 14*14) / 80^2 = 2470/6400.
    # kappa = (4400/6400 - 2470/6400) / (1 - 2470/6400) = 1930/3930 = 193/393.
    observed, chance = Fraction(55, 80), Fraction(2470, 6400)
    assert (observed - chance) / (1 - chance) == Fraction(193, 393)
    assert v["n"] == 80 and v["unscored"] == 0
    assert v["accuracy"] == pytest.approx(0.6875)
    assert v["kappa"] == pytest.approx(193 / 393)  # 0.491094...
    assert v["confusion"] == confusion
    assert v["preferred"] == {"predicted": "1", "human": "1"} and v["system_agreement"] is True


def test_dataset_writes_jsonl(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["dataset", "summeval", "--data-dir", str(ROOT), "--criteria", "coherence,fluency", "--limit", "4"]
    assert run(dataset, argv) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    # --limit cuts at whole groups: 4 lines round up to one article's 12 summaries
    assert len(lines) == 12 and len({x["group"] for x in lines}) == 1
    assert all(set(x["human"]) == {"coherence", "fluency"} for x in lines)


def test_dataset_scaleeval_models(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(dataset, ["dataset", "scaleeval", "--data-dir", str(ROOT), "--models", "claude-instant,gemini"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(lines) == 320 and Counter(x["id"].split("/")[0] for x in lines) == {"claude-instant-vs-gemini": 320}


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["dataset", "topical-chat", "--criteria", "fluency"], "unknown criteria"),
        (["dataset", "faireval", "--models", "gpt3.5,gemini"], "scaleeval only"),
        (["dataset", "scaleeval", "--models", "gpt3.5,nobody"], "nobody"),
        (["dataset", "scaleeval", "--models", "nobody,gpt3.5"], "available: claude-instant, gemini, gpt3.5"),
    ],
)
def test_dataset_errors_exit_2(argv: list[str], reason: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(dataset, [*argv, "--data-dir", str(ROOT)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and reason in captured.err and captured.err.count("\n") == 1


def test_dataset_missing_data_dir_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(dataset, ["dataset", "faireval", "--data-dir", str(tmp_path / "none")]) == 2
    assert "data folder not found" in capsys.readouterr().err
