"""A user's own labels: `dataset FILE.csv|FILE.jsonl` with column flags, `meta --labels`, reasons for n/a."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debate_tui.cli import dataset, meta
from tests.helpers.cli import run, write_jsonl

REVIEWS = """review_id,product,summary,quality,helpful,better
r1,kettle,"Boils fast, closes well. Boils fast, closes well.",2,0,1
r2,kettle,"Boils a litre in three minutes; the handle stays cool.",5,1,2
r3,kettle,ok,1,,0
r4,lamp,"Bright, warm light; the switch feels cheap but works.",4,1,2
"""


def reviews(tmp_path: Path, text: str = REVIEWS, name: str = "reviews.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def lines_of(capsys: pytest.CaptureFixture[str]) -> list[dict]:
    return [json.loads(x) for x in capsys.readouterr().out.splitlines()]


def test_csv_becomes_batch_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["dataset", str(reviews(tmp_path)), "--id", "review_id", "--text", "summary", "--text-b", "summary",
            "--source", "product", "--group", "product", "--human", "coherence=quality",
            "--human", "overall=helpful", "--human-verdict", "better"]
    assert run(dataset, argv) == 0
    lines = lines_of(capsys)
    assert [x["id"] for x in lines] == ["r1", "r2", "r3", "r4"]
    assert lines[1] == {
        "id": "r2", "text": "Boils a litre in three minutes; the handle stays cool.",
        "text_b": "Boils a litre in three minutes; the handle stays cool.", "source": "kettle", "group": "kettle",
        "human": {"coherence": 5.0, "overall": 1.0}, "human_verdict": "2",
    }
    assert lines[2]["human"] == {"coherence": 1.0}  # an empty cell is no label, not a zero
    assert lines[2]["human_verdict"] == "0"


def test_defaults_row_number_ids_and_text_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = reviews(tmp_path, "text,score\nfirst,1\nsecond,2\n")
    assert run(dataset, ["dataset", str(path), "--human", "coherence=score"]) == 0
    assert lines_of(capsys) == [{"id": 1, "text": "first", "human": {"coherence": 1.0}},
                                {"id": 2, "text": "second", "human": {"coherence": 2.0}}]


def test_jsonl_file_and_limit_in_whole_groups(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"key": f"k{i}", "body": f"text {i}", "doc": f"d{i // 3}", "s": i % 3} for i in range(9)]
    path = write_jsonl(tmp_path / "mine.jsonl", rows)
    argv = ["dataset", str(path), "--id", "key", "--text", "body", "--group", "doc", "--human", "fluency=s",
            "--limit", "4"]
    assert run(dataset, argv) == 0
    lines = lines_of(capsys)
    assert [x["id"] for x in lines] == ["k0", "k1", "k2", "k3", "k4", "k5"]  # two whole groups of three


@pytest.mark.parametrize(
    ("content", "flags", "reason"),
    [
        (REVIEWS, ["--text", "summary", "--human", "coherence=qualty"],
         "no column 'qualty' (--human coherence=qualty); columns present: review_id, product, summary, quality"),
        (REVIEWS, ["--text", "summary", "--human", "coherence=product"],
         "row 1: column 'product' holds 'kettle', not a number"),
        (REVIEWS, ["--text", "summary", "--id", "product"], "row 2: duplicate id 'kettle' (first in row 1)"),
        (REVIEWS, ["--text", "summary", "--human-verdict", "quality"], "row 2: column 'quality' holds '5'; a verdict"),
        ("", [], "empty file"),
        ("text,score\n", [], "no rows below the header"),
        ("text,score\n,1\n", [], "row 1: column 'text' is empty"),
        (None, [], "not UTF-8 (byte 0xff at offset 11)"),
    ],
)
def test_bad_files_get_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           content: str | None, flags: list[str], reason: str) -> None:
    path = tmp_path / "bad.csv"
    if content is None:
        path.write_bytes(b"text,score\n\xff\xfe,1\n")
    else:
        path.write_text(content, encoding="utf-8")
    assert run(dataset, ["dataset", str(path), *flags]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and reason in err, err


def test_column_flags_are_for_files_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(dataset, ["dataset", "summeval", "--text", "x"]) == 2
    assert "--text name columns of a file" in capsys.readouterr().err
    assert run(dataset, ["dataset", "no-such-set"]) == 2
    assert "unknown data set; known: summeval" in capsys.readouterr().err


def results_without_labels() -> list[dict]:
    scores = {"r1": 2, "r2": 5, "r3": 1, "r4": 3, "stray": 4}
    return [{"id": k, "criterion": "coherence", "predicted": p, "human": None, "status": "completed"}
            for k, p in scores.items()]


def test_meta_joins_a_separate_labels_file_by_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = write_jsonl(tmp_path / "results.jsonl", results_without_labels())
    assert run(meta, ["meta", str(results), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["reason"].startswith("no labels")
    labels = reviews(tmp_path)
    argv = ["meta", str(results), "--labels", str(labels), "--id", "review_id", "--human", "coherence=quality",
            "--level", "turn", "--json", "--bootstrap", "0"]
    assert run(meta, argv) == 0
    out, err = capsys.readouterr()
    c = json.loads(out)["criteria"]["coherence"]
    assert c["n"] == 4 and c["pearson"] == pytest.approx(0.9621404709)  # (2,5,1,3) against (2,5,1,4)
    assert "1 of 5 results rows have no labels" in err
    # the same labels in the `dataset` output format, read without column flags
    assert run(dataset, ["dataset", str(labels), "--id", "review_id", "--text", "summary",
                         "--human", "coherence=quality"]) == 0
    (tmp_path / "labels.jsonl").write_text(capsys.readouterr().out)
    assert run(meta, ["meta", str(results), "--labels", str(tmp_path / "labels.jsonl"), "--level", "turn",
                      "--json", "--bootstrap", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["criteria"]["coherence"]["pearson"] == pytest.approx(c["pearson"])


def test_meta_labels_that_match_nothing_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = write_jsonl(tmp_path / "results.jsonl", results_without_labels())
    argv = ["meta", str(results), "--labels", str(reviews(tmp_path)), "--human", "coherence=quality"]
    assert run(meta, argv) == 2  # ids are row numbers here: no result id matches
    assert "no id of the results ('r1', 'r2', 'r3', ...) is in the labels file" in capsys.readouterr().err
    assert run(meta, ["meta", str(results), "--human", "coherence=quality"]) == 2
    assert "give --labels FILE" in capsys.readouterr().err


def test_json_says_why_a_figure_is_null(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"id": str(i), "group": str(i), "criterion": "coherence", "predicted": i, "human": i} for i in range(4)]
    rows += [{"id": f"f{i}", "criterion": "fluency", "predicted": 3, "human": i, "group": "g"} for i in range(4)]
    results = write_jsonl(tmp_path / "results.jsonl", rows)
    assert run(meta, ["meta", str(results), "--json", "--bootstrap", "0"]) == 0
    criteria = json.loads(capsys.readouterr().out)["criteria"]
    assert criteria["coherence"]["pearson"] is None
    assert "too few groups (4 with scored items: 4 with one item" in criteria["coherence"]["reason"]
    assert criteria["fluency"]["pearson"] is None
    assert "0 with one item, 1 with constant predicted scores" in criteria["fluency"]["reason"]
    assert run(meta, ["meta", str(results), "--bootstrap", "0"]) == 0
    assert "coherence: n/a because no group has 2 or more scored items" in capsys.readouterr().out
