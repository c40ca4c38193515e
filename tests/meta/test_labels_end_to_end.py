"""docs/LABELS.md's worked example, run: a user's CSV with its own labels -> dataset -> batch (demo) -> meta."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debate_tui.cli import main
from tests.helpers import REPO

EXAMPLE = REPO / "docs" / "examples" / "reviews.csv"
DOC = REPO / "docs" / "LABELS.md"


def test_csv_with_labels_to_a_meta_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["dataset", str(EXAMPLE), "--id", "review_id", "--text", "review", "--group", "product",
            "--human", "coherence=coherence_label"]
    assert main(argv) == 0
    items = tmp_path / "items.jsonl"
    items.write_text(capsys.readouterr().out)
    assert [json.loads(x)["id"] for x in items.read_text().splitlines()] == [f"r{i:02d}" for i in range(1, 9)]
    outs = []
    for protocol in ("single", "debate"):
        out = tmp_path / f"{protocol}.jsonl"
        assert main(["batch", str(items), "--demo", "--protocol", protocol, "--criteria", "coherence",
                     "--out", str(out), "--sessions-dir", str(tmp_path / "s"), "--no-cache"]) == 0
        outs.append(out.read_text())
    capsys.readouterr()
    results = tmp_path / "results.jsonl"
    results.write_text("".join(outs))
    assert main(["meta", str(tmp_path / "single.jsonl"), "--level", "turn", "--bootstrap", "200"]) == 0
    table = capsys.readouterr().out
    row = next(line for line in table.splitlines() if line.startswith("coherence"))
    assert row.split()[:3] == ["coherence", "8", "0"]  # 8 items, none unscored
    pearson = float(row.split()[4])
    assert pearson == pytest.approx(0.239, abs=5e-4)  # the figure printed in docs/LABELS.md
    assert main(["meta", str(results), "--level", "turn", "--bootstrap", "0"]) == 0
    table = capsys.readouterr().out
    assert "single / demo/offline     8        1.0   0.000000  coherence pearson          0.239" in table
    assert "debate / demo/offline     8" in table
    # the labels can also stay in the CSV and be joined by id afterwards
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps({**json.loads(x), "human": None}) + "\n"
                            for x in (tmp_path / "single.jsonl").read_text().splitlines()))
    assert main(["meta", str(bare), "--level", "turn", "--bootstrap", "0", "--labels", str(EXAMPLE),
                 "--id", "review_id", "--human", "coherence=coherence_label", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["criteria"]["coherence"]["pearson"] == pytest.approx(pearson, abs=5e-4)


def test_the_doc_shows_the_commands_the_test_runs() -> None:
    doc = DOC.read_text()
    assert "debate-tui dataset docs/examples/reviews.csv --id review_id --text review --group product" in doc
    assert "--human coherence=coherence_label" in doc and "0.239" in doc


def test_the_doc_shows_the_table_meta_prints_in_any_line_order(tmp_path: Path, capsys) -> None:
    """Issue 33 #13: the doc's intervals were not the program's, and changed with the results' line order."""
    assert main(["dataset", str(EXAMPLE), "--id", "review_id", "--text", "review", "--group", "product",
                 "--human", "coherence=coherence_label"]) == 0
    items = tmp_path / "items.jsonl"
    items.write_text(capsys.readouterr().out)
    single = tmp_path / "single.jsonl"
    assert main(["batch", str(items), "--demo", "--protocol", "single", "--criteria", "coherence", "--out",
                 str(single), "--sessions-dir", str(tmp_path / "s"), "--no-cache"]) == 0
    capsys.readouterr()
    lines = single.read_text().splitlines(keepends=True)
    tables = []
    for order in (lines, lines[::-1], lines[1::2] + lines[::2]):
        single.write_text("".join(order))
        assert main(["meta", str(single), "--level", "turn"]) == 0
        tables.append(capsys.readouterr().out)
    assert tables[0] == tables[1] == tables[2]
    shown = "\n".join(line.removeprefix("   ") for line in DOC.read_text().splitlines())
    assert tables[0] in shown
