"""Public data sets with human judgments, converted to batch input lines.

A line is a dict `{"id", "text", "text_b"?, "source"?, "context"?, "group"?,
"human"?: {criterion: number}, "human_verdict"?: "1"|"2"|"0"}` (MATEval adds
"errors"), so a batch run over it yields results that `evaluate` can
correlate with the humans. The package ships the files as one xz-compressed
tar per set (debate_tui/data/datasets, read with importlib.resources; README and
PROVENANCE there); `--data-dir`/$DEBATE_TUI_DATA_DIR read another copy, plain
or archived.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tarfile
from collections.abc import Callable, Iterable, Iterator
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from debate_tui.domain import CHINESE_ERROR_TYPES, ERROR_TYPES
from debate_tui.readfile import jsonl_records

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


def data_dir(override: str | Path | None = None) -> Traversable:
    """The data folder: the argument, else $DEBATE_TUI_DATA_DIR, else the copy shipped in the package."""
    if override is not None:
        return Path(override)
    if env := os.environ.get("DEBATE_TUI_DATA_DIR"):
        return Path(env)
    return files("debate_tui").joinpath("data").joinpath("datasets")


class DataRoot:
    """Files of a data folder by their path in the original layout ("summeval/M8_....jsonl").

    A file is read as it is, else from `<first folder>.tar.xz` beside it (how the
    package ships each set); an archive is decompressed once, when first needed.
    """

    def __init__(self, root: Traversable) -> None:
        self.root = root
        self._archives: dict[str, dict[str, bytes]] = {}

    def _plain(self, relative: str) -> Traversable:
        node = self.root
        for part in relative.split("/"):
            node = node.joinpath(part)
        return node

    def _archive(self, relative: str) -> dict[str, bytes]:
        name = relative.split("/", 1)[0]
        if name not in self._archives:
            archive = self.root.joinpath(f"{name}.tar.xz")
            members: dict[str, bytes] = {}
            if archive.is_file():
                with archive.open("rb") as raw, tarfile.open(fileobj=raw, mode="r:xz") as tar:
                    for member in tar.getmembers():
                        if (content := tar.extractfile(member)) is not None:
                            members[member.name] = content.read()
            self._archives[name] = members
        return self._archives[name]

    def read_text(self, relative: str) -> str:
        """The file's text (UTF-8; a byte-order mark is dropped)."""
        plain = self._plain(relative)
        if plain.is_file():
            data = plain.read_bytes()
        elif (packed := self._archive(relative).get(relative)) is not None:
            data = packed
        else:
            raise FileNotFoundError(f"{relative} not found in {self.root}")
        return data.decode("utf-8-sig")

    def names(self, folder: str) -> list[str]:
        """Sorted names of the files and folders directly inside `folder` (empty when it is absent)."""
        plain = self._plain(folder)
        if plain.is_dir():
            return sorted(child.name for child in plain.iterdir())
        prefix = folder.rstrip("/") + "/"
        inside = (name.removeprefix(prefix) for name in self._archive(folder) if name.startswith(prefix))
        return sorted({name.split("/", 1)[0] for name in inside})


def _read_json(root: DataRoot, relative: str) -> Any:
    return json.loads(root.read_text(relative))


def _read_jsonl(root: DataRoot, relative: str) -> list[dict[str, Any]]:
    return [value for _, value in jsonl_records(root.read_text(relative), relative)]


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values)


def summeval(root: DataRoot) -> list[Line]:
    """1,200 summaries (12 systems x 100 CNN/DM articles); human = mean of the 3 experts."""
    pattern = re.compile(r"M(\d+)_outputs_annotations\.jsonl")
    systems = sorted(
        (int(match[1]), name) for name in root.names("summeval") if (match := pattern.fullmatch(name))
    )
    lines = []
    for _, name in systems:
        for row in _read_jsonl(root, f"summeval/{name}"):
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


def topical_chat(root: DataRoot) -> list[Line]:
    """360 responses (60 dialogue contexts x 6 systems), USR scores (mean of 3 annotators).

    The group is a short name for the dialogue context (its `source`), in
    order of first appearance; the id adds the system that wrote the response.
    """
    rows = _read_json(root, "topical_chat/topical_chat.json")
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


def geval_samples(dimension: str, root: DataRoot) -> dict[str, list[str]]:
    """The 20 raw GPT-3.5 G-Eval answers per topical-chat line id, for one dimension.

    The released files keep topical_chat.json's order but miss a few rows
    (API failures: 2 for naturalness, 1 coherence, 4 engagingness, 3
    groundedness); rows are matched on (source, system, response).
    """
    ids = {
        (row["source"], row["system_id"], row["system_output"]): line["id"]
        for row, line in zip(
            _read_json(root, "topical_chat/topical_chat.json"),
            topical_chat(root),
            strict=True,
        )
    }
    rows = _read_json(root, f"topical_chat/gpt35_geval/gpt3.5_{GEVAL_DIMENSIONS[dimension]}_geval.json")
    return {ids[(r["source"], r["system_id"], r["system_output"])]: r["all_responses"] for r in rows}


def faireval(root: DataRoot) -> list[Line]:
    """Vicuna-80: GPT-3.5 (text) against Vicuna-13B (text_b), with the human majority verdict."""
    rows = _read_json(root, "faireval/vicuna80_pairs.json")
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
    name = {zh: ERROR_TYPES[abbr] for abbr, zh in CHINESE_ERROR_TYPES.items()}.get(name, name)  # LOT's labels
    if name not in MATEVAL_TYPES:
        raise ValueError(f"unknown MATEval error type {label!r}")
    return MATEVAL_TYPES[name]


def _type_scores(cell: str) -> dict[str, float]:
    """A CSV cell of "<type>:<score>" lines as {abbreviation: score}, plus their sum as "total"."""
    human = {}
    for item in cell.splitlines():
        label, _, value = item.rpartition(":")
        human[mateval_type(label)] = float(value)
    human["total"] = sum(human.values())
    return human


def mateval_roc(root: DataRoot) -> list[Line]:
    """200 ROC stories with injected errors; human = per-type deductions and their total.

    Per-type scores come from the CSV's `Score_new`; `total` is their sum,
    the paper's rule (each error deducts one point). The CSV's own `Score`
    column is not used: it disagrees with that sum in 178 of 200 stories and
    even holds positive values. `errors` lists the annotated locations.
    """
    lines = []
    for i, story, row in _mateval_stories(root, "ROC", "ROC_test_change_new.csv", "Story"):
        errors = [
            {"type": mateval_type(row[f"Error Type{k}"]), "quote": row[f"Error Location{k}"].strip()}
            for k in range(1, 10)
            if row.get(f"Error Type{k}", "").strip()
        ]
        lines.append(_mateval_line(f"roc-{i:03d}", story, row["Score_new"], errors))
    return lines


def mateval_lot(root: DataRoot) -> list[Line]:
    """MATEval's first 60 LOT stories (Chinese) with injected errors; fields as `mateval_roc`.

    Per-type scores come from the CSV's `新得分` ("重复问题:-1" per line), `total` is their sum;
    `errors` lists the annotated 错误定位/错误类型 pairs.
    """
    lines = []
    for i, story, row in _mateval_stories(root, "LOT", "LOT_test_output_new.csv", "故事"):
        errors = [  # "逻辑问题/事实性错误": one sentence, two types
            {"type": mateval_type(label), "quote": row[f"错误定位{k}"].strip().strip("“”")}
            for k in range(1, 7)
            for label in re.split(r"[/／、]", row.get(f"错误类型{k}", "").strip().strip("“”"))
            if label.strip()
        ]
        lines.append(_mateval_line(f"lot-{i:03d}", story, row["新得分"], errors))
    return lines


def _mateval_stories(root: DataRoot, corpus: str, table: str,
                     story_column: str) -> Iterator[tuple[int, Any, dict[str, str]]]:
    """(index, story, CSV row) of a MATEval corpus, whose JSON and CSV must hold the same stories in order."""
    stories = _read_json(root, f"mateval/{corpus}/{corpus}_test_change_final.json")
    rows = csv.DictReader(io.StringIO(root.read_text(f"mateval/{corpus}/{table}"), newline=""))
    for i, (story, row) in enumerate(zip(stories, list(rows), strict=True)):
        if story["story"] != row[story_column]:
            raise ValueError(f"MATEval {corpus}: story {i} differs between the JSON and the CSV")
        yield i, story, row


def _mateval_line(ident: str, story: dict[str, Any], scores: str, errors: list[dict[str, str]]) -> Line:
    return {"id": ident, "text": story["story"], "source": story["prompt"], "human": _type_scores(scores),
            "errors": errors}


def scaleeval(root: DataRoot, models: tuple[str, str] = DEFAULT_SCALEEVAL_MODELS) -> list[Line]:
    """Two models' answers to the same ScaleEval prompts (8 scenarios x 40), no human verdict.

    Answers are paired by line number, not by prompt text: some prompts
    occur twice in a file with different answers.
    """
    a, b = models
    folder = "scaleeval/responses"
    known = root.names(folder)
    for model in models:
        if model not in known:
            raise FileNotFoundError(f"no ScaleEval answers for model {model!r}; available: {', '.join(known)}")
    lines = []
    for name in [n for n in root.names(f"{folder}/{a}") if n.endswith(".jsonl")]:
        first, second = _read_jsonl(root, f"{folder}/{a}/{name}"), _read_jsonl(root, f"{folder}/{b}/{name}")
        for i, (x, y) in enumerate(zip(first, second, strict=True)):
            if x["prompt"] != y["prompt"]:
                raise ValueError(f"ScaleEval {name} line {i + 1}: {a} and {b} answer different prompts")
            lines.append({
                "id": f"{a}-vs-{b}/{name.removesuffix('.jsonl')}/{i:02d}",
                "text": x["response"],
                "text_b": y["response"],
                "source": x["prompt"],
                "group": x["category"],
            })
    return lines


LOADERS: dict[str, Callable[[DataRoot], list[Line]]] = {
    "summeval": summeval,
    "topical-chat": topical_chat,
    "faireval": faireval,
    "mateval-roc": mateval_roc,
    "mateval-lot": mateval_lot,
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
    """Lines of one data set; `criteria` keeps only those human scores, `limit` about that many lines in whole
    groups (see `whole_groups`)."""
    if name not in LOADERS:
        raise ValueError(f"unknown data set {name!r}; known: {', '.join(LOADERS)}")
    folder = data_dir(root)
    if not folder.is_dir():
        raise FileNotFoundError(f"data folder not found: {folder} (set DEBATE_TUI_DATA_DIR or --data-dir)")
    if models is not None and name != "scaleeval":
        raise ValueError("models apply to scaleeval only")
    source = DataRoot(folder)
    lines = scaleeval(source, models) if models else LOADERS[name](source)
    if criteria is not None:
        lines = keep_criteria(lines, list(criteria))
    return lines if limit is None else whole_groups(lines, limit)


def whole_groups(lines: list[Line], limit: int) -> list[Line]:
    """The lines of the first groups (in order of first appearance) until `limit` lines are reached.

    Summary-level correlation works within a group (a SummEval article, a
    Topical-Chat dialogue), so cutting a group in pieces, or taking one
    line of each of many groups, leaves it nothing to correlate. The cut is
    rounded up to a whole group (`--limit 36` of SummEval: 3 articles x 12
    systems); a line without a group is a group of its own. Order is kept.
    """
    if limit <= 0:
        return []
    keys = [("group", line["group"]) if line.get("group") is not None else ("line", i) for i, line in enumerate(lines)]
    count: dict[tuple[str, Any], int] = {}
    for key in keys:
        count[key] = count.get(key, 0) + 1
    chosen: set[tuple[str, Any]] = set()
    total = 0
    for key, size in count.items():
        if total >= limit:
            break
        chosen.add(key)
        total += size
    return [line for line, key in zip(lines, keys, strict=True) if key in chosen]


def keep_criteria(lines: list[Line], wanted: list[str]) -> list[Line]:
    known = {c for line in lines for c in line.get("human", {})}
    if unknown := [c for c in wanted if c not in known]:
        raise ValueError(f"unknown criteria {unknown}; this data set has {sorted(known)}")
    return [
        {**line, "human": {c: v for c, v in line["human"].items() if c in wanted}} if "human" in line else line
        for line in lines
    ]
