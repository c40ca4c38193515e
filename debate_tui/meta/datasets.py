"""Public data sets with human judgments, converted to batch input lines.

A line is a dict `{"id", "text", "text_b"?, "source"?, "context"?, "group"?,
"human"?: {criterion: number}, "human_verdict"?: "1"|"2"|"0"}` (MATEval adds
"errors"), so a batch run over it yields results that `evaluate` can
correlate with the humans. The files are described in the data dir's README.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

Line = dict[str, Any]

DEFAULT_SCALEEVAL_MODELS = ("gpt3.5", "claude-instant")
SUMMEVAL_CRITERIA = ("coherence", "consistency", "fluency", "relevance")
TOPICAL_CHAT_CRITERIA = ("naturalness", "coherence", "engagingness", "groundedness")
MATEVAL_TYPES = {
    "Repetition": "REP",
    "Logical Inconsistency": "LINC",
    "Discontinuity": "DCONT",
    "Inappropriate Lexical Choice": "ILC",
    "Factual Error": "FER",
}
GEVAL_DIMENSIONS = {"naturalness": "nat", "coherence": "coh", "engagingness": "eng", "groundedness": "gro"}
FAIREVAL_VERDICTS = {"gpt35": "1", "vicuna": "2", "tie": "0"}


def data_dir(override: str | Path | None = None) -> Path:
    """The shared data folder: the argument, else $DEBATE_TUI_DATA_DIR, else ../shared/data beside the repo."""
    if override is not None:
        return Path(override)
    if env := os.environ.get("DEBATE_TUI_DATA_DIR"):
        return Path(env)
    return Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values)


def summeval(root: Path) -> list[Line]:
    """1,200 summaries (12 systems x 100 CNN/DM articles); human = mean of the 3 experts."""
    files = sorted(
        (root / "summeval").glob("M*_outputs_annotations.jsonl"),
        key=lambda p: int(re.search(r"\d+", p.name).group()),  # type: ignore[union-attr]
    )
    lines = []
    for path in files:
        for row in _read_jsonl(path):
            experts = row["expert_annotations"]
            lines.append({
                "id": f"{row['id']}/{row['model_id']}",
                "text": row["decoded"],
                "source": row["text"],
                "group": row["id"],
                "human": {c: _mean(e[c] for e in experts) for c in SUMMEVAL_CRITERIA},
            })
    return lines


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


def topical_chat(root: Path) -> list[Line]:
    """360 responses (60 dialogue contexts x 6 systems), USR scores (mean of 3 annotators).

    The group is a short name for the dialogue context (its `source`), in
    order of first appearance; the id adds the system that wrote the response.
    """
    rows = json.loads((root / "topical_chat" / "topical_chat.json").read_text(encoding="utf-8"))
    contexts: dict[str, str] = {}
    lines = []
    for row in rows:
        group = contexts.setdefault(row["source"], f"dialogue-{len(contexts):02d}")
        lines.append({
            "id": f"{group}/{_slug(row['system_id'])}",
            "text": row["system_output"],
            "source": row["source"],
            "context": row["context"],
            "group": group,
            "human": {c: row["scores"][c] for c in TOPICAL_CHAT_CRITERIA},
        })
    return lines


def geval_samples(dimension: str, root: Path) -> dict[str, list[str]]:
    """The 20 raw GPT-3.5 G-Eval answers per topical-chat line id, for one dimension.

    The released files keep topical_chat.json's order but miss a few rows
    (API failures: 2 for naturalness, 1 coherence, 4 engagingness, 3
    groundedness); rows are matched on (source, system, response).
    """
    ids = {
        (row["source"], row["system_id"], row["system_output"]): line["id"]
        for row, line in zip(
            json.loads((root / "topical_chat" / "topical_chat.json").read_text(encoding="utf-8")),
            topical_chat(root),
        )
    }
    path = root / "topical_chat" / "gpt35_geval" / f"gpt3.5_{GEVAL_DIMENSIONS[dimension]}_geval.json"
    rows = json.loads(path.read_text(encoding="utf-8"))
    return {ids[(r["source"], r["system_id"], r["system_output"])]: r["all_responses"] for r in rows}


def faireval(root: Path) -> list[Line]:
    """Vicuna-80: GPT-3.5 (text) against Vicuna-13B (text_b), with the human majority verdict."""
    rows = json.loads((root / "faireval" / "vicuna80_pairs.json").read_text(encoding="utf-8"))
    return [
        {
            "id": f"vicuna80-{row['question_id']}",
            "text": row["response"]["gpt35"],
            "text_b": row["response"]["vicuna"],
            "source": row["question"],
            "group": row["category"],
            "human_verdict": FAIREVAL_VERDICTS[row["human_results"]],
        }
        for row in rows
    ]


def mateval_type(label: str) -> str:
    """The abbreviation of a MATEval error-type label, whatever its quoting or plural."""
    name = label.strip().strip('"“”').strip().rstrip(".").strip()
    name = {"Factual Errors": "Factual Error"}.get(name, name)
    if name not in MATEVAL_TYPES:
        raise ValueError(f"unknown MATEval error type {label!r}")
    return MATEVAL_TYPES[name]


def mateval_roc(root: Path) -> list[Line]:
    """200 ROC stories with injected errors; human = per-type deductions and their total.

    Per-type scores come from the CSV's `Score_new`; `total` is their sum,
    the paper's rule (each error deducts one point). The CSV's own `Score`
    column is not used: it disagrees with that sum in 178 of 200 stories and
    even holds positive values. `errors` lists the annotated locations.
    """
    folder = root / "mateval" / "ROC"
    stories = json.loads((folder / "ROC_test_change_final.json").read_text(encoding="utf-8"))
    with (folder / "ROC_test_change_new.csv").open(encoding="utf-8-sig", newline="") as f:
        table = list(csv.DictReader(f))
    lines = []
    for i, (story, row) in enumerate(zip(stories, table, strict=True)):
        if story["story"] != row["Story"]:
            raise ValueError(f"MATEval ROC: story {i} differs between the JSON and the CSV")
        human = {}
        for item in row["Score_new"].splitlines():
            label, _, value = item.rpartition(":")
            human[mateval_type(label)] = float(value)
        human["total"] = sum(human.values())
        errors = [
            {"type": mateval_type(row[f"Error Type{k}"]), "quote": row[f"Error Location{k}"].strip()}
            for k in range(1, 10)
            if row.get(f"Error Type{k}", "").strip()
        ]
        lines.append({
            "id": f"roc-{i:03d}",
            "text": story["story"],
            "source": story["prompt"],
            "human": human,
            "errors": errors,
        })
    return lines


def scaleeval(root: Path, models: tuple[str, str] = DEFAULT_SCALEEVAL_MODELS) -> list[Line]:
    """Two models' answers to the same ScaleEval prompts (8 scenarios x 40), no human verdict.

    Answers are paired by line number, not by prompt text: some prompts
    occur twice in a file with different answers.
    """
    a, b = models
    folder = root / "scaleeval" / "responses"
    for model in models:
        if not (folder / model).is_dir():
            known = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
            raise FileNotFoundError(f"no ScaleEval answers for model {model!r}; available: {', '.join(known)}")
    lines = []
    for path in sorted((folder / a).glob("*.jsonl")):
        first, second = _read_jsonl(path), _read_jsonl(folder / b / path.name)
        for i, (x, y) in enumerate(zip(first, second, strict=True)):
            if x["prompt"] != y["prompt"]:
                raise ValueError(f"ScaleEval {path.name} line {i + 1}: {a} and {b} answer different prompts")
            lines.append({
                "id": f"{a}-vs-{b}/{path.stem}/{i:02d}",
                "text": x["response"],
                "text_b": y["response"],
                "source": x["prompt"],
                "group": x["category"],
            })
    return lines


LOADERS: dict[str, Callable[[Path], list[Line]]] = {
    "summeval": summeval,
    "topical-chat": topical_chat,
    "faireval": faireval,
    "mateval-roc": mateval_roc,
    "scaleeval": scaleeval,
}


def load(
    name: str,
    *,
    root: str | Path | None = None,
    criteria: Iterable[str] | None = None,
    limit: int | None = None,
    models: tuple[str, str] | None = None,
) -> list[Line]:
    """Lines of one data set; `criteria` keeps only those human scores, `limit` the first lines."""
    if name not in LOADERS:
        raise ValueError(f"unknown data set {name!r}; known: {', '.join(LOADERS)}")
    folder = data_dir(root)
    if not folder.is_dir():
        raise FileNotFoundError(f"data folder not found: {folder} (set DEBATE_TUI_DATA_DIR or --data-dir)")
    if models is not None and name != "scaleeval":
        raise ValueError("models apply to scaleeval only")
    lines = scaleeval(folder, models) if models else LOADERS[name](folder)
    if criteria is not None:
        lines = _keep_criteria(lines, list(criteria))
    return lines if limit is None else lines[:limit]


def _keep_criteria(lines: list[Line], wanted: list[str]) -> list[Line]:
    known = {c for line in lines for c in line.get("human", {})}
    if unknown := [c for c in wanted if c not in known]:
        raise ValueError(f"unknown criteria {unknown}; this data set has {sorted(known)}")
    return [
        {**line, "human": {c: v for c, v in line["human"].items() if c in wanted}} if "human" in line else line
        for line in lines
    ]
