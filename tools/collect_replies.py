"""Collect real replies of a served model to this product's own prompts, for hand labelling.

    python tools/collect_replies.py plan --runs 400 --seed 30 --max-chars 1400 > plan.jsonl
    python tools/collect_replies.py run plan.jsonl --api-base http://127.0.0.1:PORT/v1 --out raw/
    python tools/collect_replies.py rows raw/ --seed 2611 --held-out 0.4 --to labels/
    python tools/collect_replies.py run plan.jsonl --api-base ... --out auto/ --structured auto --only 24
    python tools/collect_replies.py compare raw/ auto/     # per protocol: unscored, JSON answers, calls

`plan`: one line per CLI run, drawn with a fixed seed: a protocol (single, debate, chateval,
scaleeval, mateval twice, in turn), an item of a shipped data set that protocol reads (SummEval,
Topical-Chat, FairEval, ScaleEval, MATEval ROC), a criterion, a temperature (0 or 0.8) and a
reply cap (100-400 tokens).
`run`: each planned run through the real CLI (`debate-tui run`) against the served model, its
inputs written as files, its session file kept under `--out` (a run already done is skipped, so
the step can be resumed).
`rows`: every turn whose answer the product reads (a score, a pair of scores, a verdict, a
Critic's acceptance, a MATEval report), one JSON object a line, with what was asked, under an id
made of its run and slot (`run0042.3`; `run0042-on.3` for a run asked with `--structured on`, whose
rows say `structured`), so rows already labelled keep their ids when more runs finish. Each row's
part (development or held out) is drawn once, from `--seed` and its id alone: a row is held out
when a seeded hash of its id falls under `--held-out` (a fraction), so the split is random, fixed
before any rule is written, and does not move as rows are added.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from debate_tui.meta import datasets

PROTOCOLS = ("single", "debate", "chateval", "scaleeval", "mateval", "mateval")
"""The order runs take turns in: MATEval twice, as its run gives one reply to read (the report), the others 1-5."""
TEMPERATURES = (0.0, 0.8)
CAPS = (100, 150, 200, 300, 400)
EXPECT_OF_ROLE = {"judge": "score", "referee": "score", "scorer": "score", "tie_breaker": "score",
                  "critic": "no_issue", "speaker": "verdict"}
"""The answer the product reads from each role's turns; a pairwise task's scores come as a pair."""
VERDICT_OPTIONS = ["1", "2", "0"]
STRUCTURED_ID = {True: "-on", "auto": "-auto"}
"""What a run's id takes in its rows' ids when its answers were asked as JSON too (`--structured`): the same
planned run asked both ways gives two sets of replies, which must not share ids."""


INPUTS = ("text", "text_b", "source", "context")


def _sets(max_chars: int) -> dict[str, list[dict[str, Any]]]:
    """The items each protocol is run on, by data set: those whose inputs together are at most `max_chars` long
    (a small model on a shared CPU reads about 40 prompt tokens a second)."""
    sets = {name: datasets.load(name) for name in ("summeval", "topical-chat", "faireval", "scaleeval", "mateval-roc")}
    return {name: [item for item in items if sum(len(item.get(key) or "") for key in INPUTS) <= max_chars]
            for name, items in sets.items()}


def _criterion(data_set: str, rng: random.Random) -> str:
    choices = {"summeval": ["summeval/" + c for c in datasets.SUMMEVAL_CRITERIA],
               "topical-chat": ["topical-chat/" + c for c in datasets.TOPICAL_CHAT_CRITERIA],
               "faireval": ["faireval/overall"], "scaleeval": ["scaleeval/helpfulness", "scaleeval/reasoning"]}
    return rng.choice(choices[data_set])


def plan(runs: int, seed: int, max_chars: int) -> list[dict[str, Any]]:
    """The runs, drawn once: protocols in turn, everything else at random."""
    rng, sets = random.Random(seed), _sets(max_chars)
    by_protocol = {"single": ["summeval", "topical-chat", "faireval"], "debate": ["summeval", "topical-chat"],
                   "chateval": ["topical-chat", "summeval", "faireval"], "scaleeval": ["scaleeval", "faireval"],
                   "mateval": ["mateval-roc"]}
    out = []
    for n in range(runs):
        protocol = PROTOCOLS[n % len(PROTOCOLS)]
        data_set = rng.choice(by_protocol[protocol])
        item = rng.choice(sets[data_set])
        job: dict[str, Any] = {
            "run": f"run{n:04d}", "protocol": protocol, "data_set": data_set, "item": item["id"],
            "text": item["text"], "text_b": item.get("text_b"), "source": item.get("source"),
            "context": item.get("context"), "temperature": rng.choice(TEMPERATURES), "cap": rng.choice(CAPS),
        }
        if protocol == "mateval":
            job["criteria"] = ",".join(rng.sample(sorted(datasets.MATEVAL_TYPES.values()), rng.choice((2, 3, 5))))
        elif protocol != "scaleeval":
            job["criteria"] = _criterion(data_set, rng)
        out.append(job)
    return out


def _files(job: dict[str, Any], folder: Path) -> list[str]:
    """The job's inputs written as files; the CLI options naming them."""
    folder.mkdir(parents=True, exist_ok=True)
    options = []
    for key in INPUTS:
        flag = "--" + key.replace("_", "-")
        if job.get(key):
            (folder / f"{key}.txt").write_text(job[key], encoding="utf-8")
            options += [flag, str(folder / f"{key}.txt")]
    return options


def command(job: dict[str, Any], folder: Path, api_base: str, model: str, timeout: int,
            structured: str = "off") -> list[str]:
    protocol = job["protocol"]
    options = {"single": ["--samples", "5" if job["temperature"] else "1"],
               "debate": ["--rounds", "1"], "chateval": ["--agents", "2", "--turns", "2"],
               "scaleeval": ["--agents", "2", "--rounds", "1", "--seed", "7"],
               "mateval": ["--strategy", "SA", "--no-feedback"]}[protocol]
    criteria = ["--criteria", job["criteria"]] if job.get("criteria") else []
    return [str(Path(sys.executable).parent / "debate-tui"), "run", "--protocol", protocol, *_files(job, folder),
            *criteria, *options, "--model", model, "--api-base", api_base,
            "--temperature", str(job["temperature"]), "--max-reply-tokens", str(job["cap"]),
            "--timeout", str(timeout), "--retries", "1", "--sessions-dir", str(folder / "sessions"),
            "--structured", structured]


def part_of(value: str) -> tuple[int, int]:
    """--part "I/N", 1 <= I <= N (counted from 1: "0/2" would take no run at all)."""
    try:
        index, count = (int(n) for n in value.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: expected I/N, e.g. 1/2") from None
    if not 1 <= index <= count:
        raise argparse.ArgumentTypeError(f"{value!r}: I counts from 1 to N")
    return index, count


def run(plan_file: Path, out: Path, api_base: str, model: str, timeout: int, part: tuple[int, int],
        structured: str = "off", only: int | None = None, start: int = 0) -> None:
    """The planned runs in order (those of `part` (I, N): every N-th from the I-th, for N servers side by side)."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-local-server-needs-none", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    index, count = part
    for n, line in enumerate(plan_file.read_text(encoding="utf-8").splitlines()):
        if n % count != index - 1 or n < start or (only is not None and n >= only):
            continue
        job = json.loads(line)
        folder = out / job["run"]
        if (folder / "done.json").exists():
            continue
        shutil.rmtree(folder / "sessions", ignore_errors=True)  # a run cut off before: its session would be read too
        started = time.monotonic()
        done = subprocess.run(command(job, folder, api_base, model, timeout, structured), env=env, capture_output=True,
                              text=True, check=False)
        record = {"job": {k: v for k, v in job.items() if k not in INPUTS},
                  "exit": done.returncode, "seconds": round(time.monotonic() - started, 1),
                  "stderr": done.stderr[-500:]}
        (folder / "done.json").write_text(json.dumps(record), encoding="utf-8")
        print(f"{job['run']} {job['protocol']} exit {done.returncode} {record['seconds']} s", file=sys.stderr)


def _expect(session: dict[str, Any], role: str) -> str | None:
    if role == "summarizer":
        return "report" if session["protocol"] == "mateval" else None
    expect = EXPECT_OF_ROLE.get(role)
    return "pair" if expect == "score" and session["task"].get("text_b") else expect


def rows_of(folder: Path) -> list[dict[str, Any]]:
    """The read turns of one run's session, with what they were asked."""
    record = json.loads((folder / "done.json").read_text(encoding="utf-8"))
    job, rows = record["job"], []
    for path in sorted((folder / "sessions").glob("*.json")):
        session = json.loads(path.read_text(encoding="utf-8"))
        roles = {agent["name"]: agent["role"] for agent in session["agents"]}
        criteria = {c["name"]: c for c in session["criteria"]}
        structured = session["options"].get("structured") or False
        run_id = job["run"] + STRUCTURED_ID.get(structured, "")
        for turn in session["turns"]:
            expect = _expect(session, roles.get(turn["agent"], ""))
            if expect is None or not turn["content"].strip():
                continue
            row: dict[str, Any] = {"id": f"{run_id}.{turn['slot']}", "protocol": session["protocol"],
                                   "expect": expect, "role": roles[turn["agent"]],
                                   "origin": f"{job['run']} {session['id']} slot {turn['slot']}",
                                   "data_set": job["data_set"], "item": job["item"],
                                   "temperature": job["temperature"], "cap": job["cap"],
                                   "finish_reason": turn.get("finish_reason")}
            criterion = criteria.get(turn.get("criterion") or "")
            if expect in ("score", "pair") and criterion:
                row.update(criterion=criterion["name"], low=criterion["low"], high=criterion["high"])
            elif expect == "verdict":
                row["options"] = VERDICT_OPTIONS
            elif expect == "report":
                row["options"] = [c.get("abbreviation") or c["name"] for c in session["criteria"]]
            if structured:
                row["structured"] = structured
            row["reply"] = turn["content"]
            rows.append(row)
    return rows


def held_out(row_id: str, seed: int, fraction: float) -> bool:
    """Whether a row is in the held-out part: a seeded hash of its id, uniform on [0, 1), under `fraction`."""
    digest = hashlib.sha256(f"{seed}:{row_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def rows(raw: Path, seed: int, fraction: float, to: Path) -> None:
    """Every read turn of every finished run, with its stable id; then the split (ids of the held-out part)."""
    found = [row for folder in sorted(p for p in raw.iterdir() if (p / "done.json").exists())
             for row in rows_of(folder)]
    held = sorted(row["id"] for row in found if held_out(row["id"], seed, fraction))
    to.mkdir(parents=True, exist_ok=True)
    with (to / "replies.jsonl").open("w", encoding="utf-8") as sink:
        for row in found:
            sink.write(json.dumps({"id": row.pop("id"), **row}, ensure_ascii=False) + "\n")
    split = {"seed": seed, "fraction": fraction, "held_out": held}
    (to / "split.json").write_text(json.dumps(split, indent=0) + "\n", encoding="utf-8")
    print(f"{len(found)} replies, {len(held)} held out", file=sys.stderr)


def measured(raw: Path) -> dict[str, dict[str, float]]:
    """Per protocol, over the finished runs of `raw`: runs, failed runs, answers asked and left unscored,
    calls, wall seconds, and the turns whose answer came from a JSON answer (`--structured`)."""
    out: dict[str, dict[str, float]] = {}
    for folder in sorted(p for p in raw.iterdir() if (p / "done.json").exists()):
        record = json.loads((folder / "done.json").read_text(encoding="utf-8"))
        tally = out.setdefault(record["job"]["protocol"], dict.fromkeys(
            ("runs", "failed", "asked", "unscored", "json", "calls", "seconds"), 0.0))
        tally["runs"] += 1
        tally["failed"] += record["exit"] != 0
        tally["seconds"] += record["seconds"]
        for path in (folder / "sessions").glob("*.json"):
            session = json.loads(path.read_text(encoding="utf-8"))
            tally["calls"] += session["usage"]["calls"]
            read = [t for t in session["turns"] if not t.get("error") and t.get("role") != "summarizer"
                    and (t.get("score") is not None or t.get("verdict") is not None or t.get("unscored"))]
            tally["asked"] += len(read)
            tally["unscored"] += sum(bool(t.get("unscored")) for t in read)
            tally["json"] += sum(_json_answer(t["content"]) for t in read if not t.get("unscored"))
    return out


def _json_answer(content: str) -> bool:
    """Whether a turn ends with the JSON answer `--structured` adds (its reason first)."""
    try:
        last = json.loads(content.rstrip().rsplit("\n", 1)[-1])
    except ValueError:
        return False
    return isinstance(last, dict) and "reason" in last


def compare(folders: list[Path]) -> None:
    """One table: each folder's figures per protocol, side by side."""
    print("| protocol | run | runs (failed) | unscored / asked | answers from JSON | calls | wall s |")
    print("|---|---|---|---|---|---|---|")
    tables = {folder.name: measured(folder) for folder in folders}
    for protocol in sorted({name for table in tables.values() for name in table}):
        for name, table in tables.items():
            t = table.get(protocol)
            if t:
                print(f"| {protocol} | {name} | {t['runs']:.0f} ({t['failed']:.0f}) | {t['unscored']:.0f} / "
                      f"{t['asked']:.0f} | {t['json']:.0f} | {t['calls']:.0f} | {t['seconds']:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--runs", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--max-chars", type=int, default=2000, help="the longest inputs (text, source, ...) of an item")
    r = sub.add_parser("run")
    r.add_argument("plan", type=Path)
    r.add_argument("--api-base", required=True)
    r.add_argument("--model", default="openai/smollm2-135m")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--timeout", type=int, default=90)
    r.add_argument("--part", default=(1, 1), type=part_of, help="I/N: every N-th planned run from the I-th (1 to N)")
    r.add_argument("--structured", default="off", choices=("auto", "on", "off"))
    r.add_argument("--only", type=int, help="only the first N planned runs")
    r.add_argument("--start", type=int, default=0, help="skip the planned runs before the N-th (0-based): those a "
                   "labelled set already holds, when their raw folders are gone (a rerun would give new replies "
                   "under the same ids)")
    c = sub.add_parser("compare", help="per protocol: unscored, calls and wall time of runs folders side by side")
    c.add_argument("raw", type=Path, nargs="+")
    w = sub.add_parser("rows")
    w.add_argument("raw", type=Path)
    w.add_argument("--seed", type=int, required=True)
    w.add_argument("--held-out", type=float, required=True, help="the fraction of rows held out, e.g. 0.4")
    w.add_argument("--to", type=Path, required=True)
    args = parser.parse_args()
    if args.step == "plan":
        for job in plan(args.runs, args.seed, args.max_chars):
            print(json.dumps(job, ensure_ascii=False))
    elif args.step == "run":
        run(args.plan, args.out, args.api_base, args.model, args.timeout, args.part, args.structured, args.only,
            args.start)
    elif args.step == "compare":
        compare(args.raw)
    else:
        rows(args.raw, args.seed, args.held_out, args.to)


if __name__ == "__main__":
    main()
