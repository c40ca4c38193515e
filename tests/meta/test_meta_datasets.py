"""Data-set converters: counts, fields and human scores against the raw files."""

from __future__ import annotations

import json
import tarfile
from collections import Counter
from pathlib import Path

import pytest

from debate_tui.meta import datasets
from tests.helpers import FIXTURES

ROOT = datasets.data_dir()
DATA = datasets.DataRoot(ROOT)
SHARED = FIXTURES / "shared_data"


def test_summeval() -> None:
    lines = datasets.load("summeval", root=ROOT)
    assert len(lines) == 1200 and len({x["id"] for x in lines}) == 1200
    assert len({x["group"] for x in lines}) == 100
    first = lines[0]
    assert set(first) == {"id", "text", "source", "group", "human"}
    assert first["id"] == "dm-test-8764fb95bfad8ee849274873a92fb8d6b400eee2/M8"
    assert first["text"].startswith("paul merson has restarted his row")
    # Experts: coherence 1, 1, 3; consistency 5, 5, 5 ... (M8_outputs_annotations.jsonl, line 1).
    raw = json.loads(DATA.read_text("summeval/M8_outputs_annotations.jsonl").splitlines()[0])["expert_annotations"]
    assert first["human"] == {c: sum(e[c] for e in raw) / 3 for c in datasets.SUMMEVAL_CRITERIA}
    assert first["human"]["coherence"] == pytest.approx(5 / 3)


def test_topical_chat() -> None:
    lines = datasets.load("topical-chat", root=ROOT)
    assert len(lines) == 360 and len({x["id"] for x in lines}) == 360
    assert Counter(x["group"] for x in lines) == {f"dialogue-{i:02d}": 6 for i in range(60)}
    first = lines[0]
    assert set(first) == {"id", "text", "source", "context", "group", "human"}
    assert first["id"] == "dialogue-00/original-ground-truth"
    assert first["human"] == {
        "naturalness": 3.0, "coherence": 2.3333333333, "engagingness": 3.0, "groundedness": 0.6666666667,
    }


def test_faireval() -> None:
    lines = datasets.load("faireval", root=ROOT)
    assert len(lines) == 80
    assert Counter(x["human_verdict"] for x in lines) == {"1": 41, "2": 25, "0": 14}
    # The per-line label file agrees: CHATGPT = gpt35 = text = "1".
    labels = (SHARED / "human_labels_gpt35_vs_vicuna13b.txt").read_text().split()
    assert [{"CHATGPT": "1", "VICUNA13B": "2", "TIE": "0"}[x] for x in labels] == [x["human_verdict"] for x in lines]
    first = lines[0]
    assert set(first) == {"id", "text", "text_b", "source", "group", "human_verdict"}
    assert first["source"] == "How can I improve my time management skills?"
    assert first["text"].startswith("Here are some tips") and first["text_b"].startswith("Improving your time")


def test_mateval_roc() -> None:
    lines = datasets.load("mateval-roc", root=ROOT)
    assert len(lines) == 200
    first = lines[0]
    assert set(first) == {"id", "text", "source", "human", "errors"}
    assert first["human"] == {"REP": -1, "LINC": -1, "DCONT": 0, "ILC": -1, "FER": 0, "total": -3}
    assert first["errors"][0] == {"type": "ILC", "quote": "Every single one of the girls didn't go to sleep all night."}
    assert [e["type"] for e in first["errors"]] == ["ILC", "LINC", "REP"]
    assert all(x["human"]["total"] == sum(v for k, v in x["human"].items() if k != "total") for x in lines)
    # 13 label spellings ("Factual Errors", '"Repetition"', "Repetition.") fold into the 5 types.
    assert Counter(e["type"] for x in lines for e in x["errors"]) == {
        "LINC": 181, "DCONT": 146, "ILC": 80, "FER": 71, "REP": 70,
    }


def test_mateval_lot() -> None:
    """LOT, MATEval's Chinese set: the same fields as ROC, Chinese type names folded into the 5 types."""
    lines = datasets.load("mateval-lot", root=ROOT)
    assert len(lines) == 60
    first = lines[0]
    assert set(first) == {"id", "text", "source", "human", "errors"} and first["id"] == "lot-000"
    assert first["human"] == {"REP": -1, "LINC": -1, "DCONT": 0, "ILC": -1, "FER": 0, "total": -3}
    assert first["errors"][0] == {"type": "REP", "quote": "在饭桌上，主管仔细观察这些人的一些细节和习惯。"}
    assert all(x["human"]["total"] == sum(v for k, v in x["human"].items() if k != "total") for x in lines)
    # "逻辑问题/事实性错误" on one sentence is an error of each type
    assert Counter(e["type"] for x in lines for e in x["errors"]) == {
        "LINC": 46, "REP": 34, "ILC": 32, "FER": 32, "DCONT": 24,
    }


@pytest.mark.parametrize("label", ['"Factual Errors"', "“用词不当”", "Repetition.", " “Discontinuity”",
                                   "Logical Inconsistency"])
def test_mateval_labels_normalise(label: str) -> None:
    assert datasets.mateval_type(label) in datasets.MATEVAL_TYPES.values()


def test_scaleeval_pairs_by_line() -> None:
    lines = datasets.load("scaleeval", root=ROOT)
    assert len(lines) == 320 and len({x["id"] for x in lines}) == 320
    assert Counter(x["group"] for x in lines) == {
        c: 40 for c in ["brainstorming", "code", "dialog", "judgement", "math",
                        "opendomain_general", "opendomain_science", "write"]
    }
    assert lines[0]["id"] == "gpt3.5-vs-claude-instant/brainstorming/00"
    assert set(lines[0]) == {"id", "text", "text_b", "source", "group"}
    other = datasets.load("scaleeval", root=ROOT, models=("gemini", "gpt3.5"))
    assert len(other) == 320 and other[0]["text_b"] == lines[0]["text"]


def test_criteria_filter_and_limit() -> None:
    lines = datasets.load("summeval", root=ROOT, criteria=["fluency", "relevance"], limit=3)
    assert len(lines) == 12 and all(set(x["human"]) == {"fluency", "relevance"} for x in lines)
    with pytest.raises(ValueError, match="unknown criteria"):
        datasets.load("topical-chat", root=ROOT, criteria=["fluency"])
    with pytest.raises(ValueError, match="scaleeval only"):
        datasets.load("faireval", root=ROOT, models=("a", "b"))
    with pytest.raises(FileNotFoundError):
        datasets.load("faireval", root=ROOT / "nowhere")


def test_env_variable_points_at_the_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEBATE_TUI_DATA_DIR", str(ROOT))
    assert len(datasets.load("faireval")) == 80


def test_the_package_ships_every_set_as_a_resource() -> None:
    """Without --data-dir or the variable, each set loads from the package (importlib.resources)."""
    assert ROOT.joinpath("PROVENANCE.md").is_file() and ROOT.joinpath("README.md").is_file()
    sizes = {name: len(datasets.load(name)) for name in datasets.LOADERS}
    assert sizes == {"summeval": 1200, "topical-chat": 360, "faireval": 80, "mateval-roc": 200, "mateval-lot": 60,
                     "scaleeval": 320}


def test_a_plain_copy_reads_the_same_as_the_archives(tmp_path: Path) -> None:
    """--data-dir may hold the original layout (plain files): the lines are the same."""
    with ROOT.joinpath("faireval.tar.xz").open("rb") as raw, tarfile.open(fileobj=raw, mode="r:xz") as tar:
        tar.extractall(tmp_path, filter="data")
    assert (tmp_path / "faireval" / "vicuna80_pairs.json").is_file()
    assert datasets.load("faireval", root=tmp_path) == datasets.load("faireval")
    (tmp_path / "faireval" / "vicuna80_pairs.json").write_text("[]", encoding="utf-8")
    assert datasets.load("faireval", root=tmp_path) == []  # the plain file wins over any archive


def test_a_missing_file_is_named() -> None:
    with pytest.raises(FileNotFoundError, match="summeval/M99_outputs_annotations.jsonl"):
        DATA.read_text("summeval/M99_outputs_annotations.jsonl")
    assert DATA.names("nowhere") == [] and DATA.names("scaleeval/responses") == ["claude-instant", "gemini", "gpt3.5"]
    csv_text = DATA.read_text("mateval/ROC/ROC_test_change_new.csv")
    assert csv_text.startswith("Original Story,")  # byte-order mark dropped


def test_limit_cuts_at_whole_groups() -> None:
    """SummEval's lines run system by system; --limit 36 once gave 36 articles with one summary each."""
    lines = datasets.load("summeval", root=ROOT, limit=36)
    sizes = Counter(x["group"] for x in lines)
    assert len(lines) == 36 and len(sizes) == 3 and set(sizes.values()) == {12}
    assert len(datasets.load("summeval", root=ROOT, limit=37)) == 48  # rounded up to a whole group
    assert datasets.load("summeval", root=ROOT, limit=0) == []
    ungrouped = datasets.load("mateval-roc", root=ROOT, limit=5)  # no groups: each line is its own
    assert [x["id"] for x in ungrouped] == [f"roc-{i:03d}" for i in range(5)]
    everything = datasets.load("faireval", root=ROOT)
    assert datasets.load("faireval", root=ROOT, limit=10_000) == everything
