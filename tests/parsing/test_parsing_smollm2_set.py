"""The answer readers on the local model's own replies, labelled by hand against a rule card.

tests/fixtures/smollm2_set/: `replies.jsonl` (replies of SmolLM2-135M-Instruct to this product's
prompts, with what each prompt asked), `labels.jsonl` (each reply's settled label: the answer it
states as its own, or `none`), `agreement.json` (the second reader's labels of a random fifth),
`CARD.md` (the rule both readers applied, and how the set was collected) and `split.json` (`held_out`: the
held-out ids of the first 615 replies, drawn from each id and a seed before any rule was written; `later`:
parts collected afterwards, each all held out until the readers were measured on it once; `structured` and
`auto`: parts collected the same way with `--structured on` or `auto`, whose replies may end with the JSON
answer the product took). A misread is an answer read where the label says none or another answer; a miss is
none read where the label has an answer.

A part stops being held out once its misreads have been read to write rules: the first held-out part after
its first measurements, each later part after its one measurement (the figures in CARD.md). The goal is
judged on the newest later part, which no rule has seen when it is measured, and on the newest structured part.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from debate_tui.domain import Criterion
from debate_tui.engine import structured
from debate_tui.parsing import read_answer
from debate_tui.protocols import mateval
from tools import collect_replies
from tools.collect_replies import part_of

SET = Path(__file__).parents[1] / "fixtures" / "smollm2_set"
MAX_MISREADS, MAX_MISSES = 0.005, 0.02
"""The goal on the held-out part: misreads at most 0.5% of its replies, misses at most 2%."""
MEASURED = {"dev": (1, 1), "held-out": (1, 3), "later-1": (1, 7), "later-2": (3, 3), "later-3": (0, 0),
            "later-4": (1, 3), "later-5": (14, 7), "later-6": (19, 4), "structured-1": (1, 3), "structured-2": (3, 5),
            "auto-1": (9, 2), "structured-3": (0, 0)}
"""(misreads, misses) when the set was last extended: a change of the readers may not make them worse."""
AS_JSON = ("structured", "auto")
"""Parts from runs whose answers were asked as JSON too: `--structured on` (every answer), `auto` (where the free
text gave none)."""


def _rows() -> list[dict[str, Any]]:
    replies = [json.loads(line) for line in (SET / "replies.jsonl").read_text(encoding="utf-8").splitlines()]
    labels = {row["id"]: row["label"] for row in map(json.loads, (SET / "labels.jsonl").read_text().splitlines())}
    return [{**row, "label": labels[row["id"]]} for row in replies]


def _split() -> dict[str, Any]:
    return json.loads((SET / "split.json").read_text(encoding="utf-8"))


def _parts() -> dict[str, list[dict[str, Any]]]:
    split, rows = _split(), _rows()
    held = set(split["held_out"])
    kinds = {kind: [set(ids) for ids in split.get(kind, [])] for kind in ("later", *AS_JSON)}
    apart = held.union(*(ids for sets in kinds.values() for ids in sets))
    parts = {"dev": [r for r in rows if r["id"] not in apart], "held-out": [r for r in rows if r["id"] in held]}
    for kind, sets in kinds.items():
        parts |= {f"{kind}-{n}": [r for r in rows if r["id"] in ids] for n, ids in enumerate(sets, start=1)}
    return parts


def _report(reply: str, types: list[str]) -> str:
    """A MATEval report as the protocol reads it (its JSON line where `--structured` added one): per asked type it
    answers, yes (an error counted) or no."""
    answered, errors = mateval.read_report(reply, "", types)
    said = [f"{t}={'yes' if any(e.type == t for e in errors) else 'no'}" for t in types if t in answered]
    return ",".join(said) or "none"


def _json_answer(row: dict[str, Any]) -> Any:
    """With `--structured` (on or auto), the answer the JSON line gives (the product appends the line only when it
    takes it, and takes it over the free text's), or None where there is none."""
    if not row.get("structured") or row["expect"] not in structured.ASKED:
        return None
    scale = Criterion(name="asked", description="", low=row.get("low", 1), high=row.get("high", 5))
    question = structured.Question(row["expect"], scale)
    data = question.read(row["reply"].rstrip().rsplit("\n", 1)[-1])
    return None if data is None else question.answer(data)


def read(row: dict[str, Any]) -> str:
    """What the product reads from a reply, in the label's form."""
    expect, reply = row["expect"], row["reply"]
    if expect == "report":
        return _report(reply, row["options"])
    got = _json_answer(row)
    if got is None:
        got = read_answer(reply, expect, row.get("low", 1), row.get("high", 5), row.get("criterion"))
    if expect == "no_issue":
        return "yes" if got else "none"
    if got is None:
        return "none"
    if isinstance(got, tuple):
        return ",".join(repr(float(v)) for v in got)
    return got if isinstance(got, str) else repr(float(got))


def _same(got: str, label: str) -> bool:
    if label == "no" and got == "none":
        return True  # a Critic that objects: the reader's "not accepted"
    try:
        return [float(v) for v in got.split(",")] == [float(v) for v in label.split(",")]
    except ValueError:
        return got == label


def figures(rows: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]], list[dict[str, Any]]]:
    """(replies, misreads, misses)."""
    misreads, misses = [], []
    for row in rows:
        got, label = read(row), row["label"]
        if _same(got, label):
            continue
        (misses if got == "none" else misreads).append({**row, "got": got})
    return len(rows), misreads, misses


def test_the_set_is_labelled_varied_and_split_by_its_seed_alone() -> None:
    rows, split = _rows(), _split()
    assert len({row["id"] for row in rows}) == len(rows)
    later = set().union(*split["later"], *(ids for kind in AS_JSON for ids in split.get(kind, [])))
    drawn = {row["id"] for row in rows if row["id"] not in later and int.from_bytes(hashlib.sha256(
        f"{split['seed']}:{row['id']}".encode()).digest()[:8], "big") / 2**64 < split["fraction"]}
    assert drawn == set(split["held_out"])  # tools/collect_replies.py's rule, nothing picked by hand
    assert {row["protocol"] for row in rows} == {"single", "debate", "chateval", "scaleeval", "mateval"}
    assert {row["temperature"] for row in rows} == {0.0, 0.8}
    assert min(row["cap"] for row in rows) >= 100 and max(row["cap"] for row in rows) <= 400


def test_the_second_readers_labels_and_their_agreement() -> None:
    agreement = json.loads((SET / "agreement.json").read_text(encoding="utf-8"))
    pairs = [(p["first"], p["second"]) for p in agreement["pairs"]]
    labels = {row["id"]: row["label"] for row in _rows()}
    assert all(labels[p["id"]] == p["settled"] for p in agreement["pairs"])
    n, agreed = len(pairs), sum(a == b for a, b in pairs)
    firsts, seconds = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(firsts[k] * seconds[k] for k in firsts | seconds) / n**2
    assert (agreement["doubly_read"], agreement["agreed"]) == (n, agreed)
    assert agreement["kappa"] == round((agreed / n - chance) / (1 - chance), 4)  # Cohen's kappa


@pytest.mark.parametrize("part", list(MEASURED))
def test_the_readers_do_not_get_worse(part: str) -> None:
    count, misreads, misses = figures(_parts()[part])
    print(f"{part}: {count} replies, {len(misreads)} misread, {len(misses)} missed")
    most_misreads, most_misses = MEASURED[part]
    assert len(misreads) <= most_misreads and len(misses) <= most_misses, (
        [(r["id"], r["got"], r["label"]) for r in misreads + misses])


def _within_the_goal(part: str) -> None:
    count, misreads, misses = figures(_parts()[part])
    assert count >= 200 and len(misreads) <= MAX_MISREADS * count and len(misses) <= MAX_MISSES * count


@pytest.mark.xfail(strict=True, reason="the goal is not met in free text: 19 misreads (3.9%) and 4 misses (0.8%) of "
                   "489 replies on the sixth later part, when it was measured (the fifth: 14 (3.2%) of 442)")
def test_held_out_misreads_and_misses_are_within_the_goal() -> None:
    _within_the_goal(f"later-{len(_split()['later'])}")


def test_with_structured_answers_misreads_and_misses_are_within_the_goal() -> None:
    """Met with `--structured on` once MATEval's reports were asked as JSON too (ef1bf06): no misread, no miss of
    295 replies on the third structured part when it was measured (the second, before: 3 and 5 of 256, every
    one a report)."""
    _within_the_goal(f"structured-{len(_split()['structured'])}")


def test_with_structured_answers_every_answer_asked_as_json_is_read_as_labelled() -> None:
    """On the newest structured part, every score, pair, verdict and report (asked as JSON too) is read as its
    label."""
    rows = [r for r in _parts()[f"structured-{len(_split()['structured'])}"] if r["expect"] in structured.ASKED]
    count, misreads, misses = figures(rows)
    assert count >= 150 and not misreads and not misses


def test_the_collectors_part_counts_from_one() -> None:
    """Two servers side by side take --part 1/2 and 2/2; "0/2" would select no run and end without a word."""
    assert part_of("2/2") == (2, 2)
    for wrong in ("0/2", "3/2", "1", "a/b"):
        with pytest.raises(argparse.ArgumentTypeError):
            part_of(wrong)


def test_a_run_cut_off_before_is_collected_again_from_an_empty_folder(tmp_path, monkeypatch):
    """A collector stopped mid-run leaves that run's session without done.json: taken again, the old session
    must not stay beside the new one, whose turns would come under the same ids."""
    plan = tmp_path / "plan.jsonl"
    plan.write_text(json.dumps({"run": "run0000", "protocol": "single", "temperature": 0.0, "cap": 100,
                                "text": "A story.", "criteria": "coherence"}) + "\n")
    stale = tmp_path / "raw" / "run0000" / "sessions" / "cut-off.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    seen: list[list[str]] = []

    def fake_run(argv, **_):
        seen.append(sorted(p.name for p in stale.parent.glob("*.json")) if stale.parent.exists() else [])
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(collect_replies.subprocess, "run", fake_run)
    collect_replies.run(plan, tmp_path / "raw", "http://127.0.0.1:1/v1", "openai/m", 10, (1, 1))
    assert seen == [[]] and (tmp_path / "raw" / "run0000" / "done.json").exists()
