"""Every protocol through the real CLI against a real small model (SmolLM2-135M-Instruct on llama.cpp).

Opt-in: `python3 dev.py test-local-model` builds the server into the user's cache, starts it on a
free 127.0.0.1 port and sets DEBATE_TUI_LOCAL_MODEL_API_BASE for this module. The assertions are
about behaviour, never the small model's opinions: each run ends within the bound its caps set,
every turn says how it ended, no reply passes the token cap, no score is read from a reply that
gives none (checked against the hand labels of tests/fixtures/real_replies_smollm2.jsonl for
the replies seen before, and against the reply's own text for any other), the report renders,
and the exit code matches the status.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

API_BASE = os.environ.get("DEBATE_TUI_LOCAL_MODEL_API_BASE")
if not API_BASE:
    pytest.skip("the real local model suite runs with `python3 dev.py test-local-model` "
                "(it starts the llama.cpp server this needs)", allow_module_level=True)

MODEL = os.environ.get("DEBATE_TUI_LOCAL_MODEL", "openai/smollm2-135m")
LABELS = Path(__file__).resolve().parents[1] / "fixtures" / "real_replies_smollm2.jsonl"
INPUTS = Path(__file__).resolve().parent / "inputs"
CLI = str(Path(sys.executable).parent / "debate-tui")

CAP = 200
"""--max-reply-tokens: every reply of every run here."""
TIMEOUT = 60
"""--timeout: the wall-clock deadline of one call, streaming included."""
RETRIES = 2
"""--retries: attempts per call. After a reply closed at the deadline, llama.cpp's server can take the
next call's whole deadline before its first token (seen twice in one DEBATE run); the retry answers."""
SLACK_S = 30
"""Start-up (litellm's import), saving and rendering, on top of the calls' own bound."""
FINISH_REASONS = {"stop", "length", "deadline", "cut", "error"}
EXIT = {"completed": 0, "failed": 3, "cancelled": 4, "needs_human": 5}

# One small configuration per protocol; the most calls it can make bounds its wall time.
PROTOCOLS: dict[str, tuple[list[str], int]] = {
    "single": (["--protocol", "single", "--text", "summary.txt", "--source", "article.txt",
                "--criteria", "coherence,fluency"], 2 * 2),
    "debate": (["--protocol", "debate", "--text", "summary.txt", "--source", "article.txt",
                "--criteria", "consistency", "--rounds", "1"], 2 * 3),
    "chateval": (["--protocol", "chateval", "--text", "reply.txt", "--source", "dialogue.txt",
                  "--context", "fact.txt", "--criteria", "naturalness", "--agents", "2", "--turns", "1"], 2 * 2),
    "scaleeval": (["--protocol", "scaleeval", "--text", "answer_a.txt", "--text-b", "answer_b.txt",
                   "--source", "question.txt", "--agents", "2", "--rounds", "1", "--seed", "7"], 2 * 4),
    "mateval": (["--protocol", "mateval", "--text", "story.txt", "--strategy", "SA", "--no-feedback"], 2 * 6),
}
"""protocol -> (its options, the most calls it can make: every asked turn re-asked once)."""


def _run(protocol: str, tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], float, dict[str, Any]]:
    options, _ = PROTOCOLS[protocol]
    command = [
        CLI, "run", *options, *extra,
        "--model", MODEL, "--api-base", API_BASE,
        "--max-reply-tokens", str(CAP), "--timeout", str(TIMEOUT), "--temperature", "0", "--retries", str(RETRIES),
        "--sessions-dir", str(tmp_path / "sessions"),
    ]  # fmt: skip
    env = {**os.environ, "OPENAI_API_KEY": "sk-local-server-needs-none", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    started = time.monotonic()
    done = subprocess.run(command, cwd=INPUTS, env=env, capture_output=True, text=True,
                          timeout=_bound(protocol) + 60)
    elapsed = time.monotonic() - started
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, f"stdout must be exactly one JSON line:\n{done.stdout}\nstderr:\n{done.stderr[-2000:]}"
    return done, elapsed, json.loads(lines[0])


def _bound(protocol: str) -> float:
    """Every possible call, each attempt cut at the deadline, plus a second of back-off per retry."""
    return PROTOCOLS[protocol][1] * RETRIES * (TIMEOUT + 1) + SLACK_S


def _labels() -> dict[str, Any]:
    """Reply text -> its hand label (None: the reply gives no answer).

    A reply whose note calls it ambiguous is labelled null (a wrong number is worse than none) but
    not held against the parser here: reading it either way is defensible."""
    rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    return {row["text"]: row["label"] for row in rows if not row.get("note", "").startswith("ambiguous")}


_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _mentions(text: str, value: float) -> bool:
    """Whether a reply states `value` at all, as digits, a number word or stars."""
    digits = f"{value:g}"
    if re.search(rf"(?<![\d.]){re.escape(digits)}(?![\d])", text):
        return True
    whole = int(value) if float(value).is_integer() else None
    return whole is not None and (
        (0 <= whole < len(_NUMBER_WORDS) and re.search(rf"\b{_NUMBER_WORDS[whole]}\b", text, re.I) is not None)
        or (whole > 0 and "★" * whole in text))


@pytest.mark.serial  # asserts wall time
@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_protocol_runs_bounded_and_honest(protocol: str, tmp_path: Path) -> None:
    done, elapsed, summary = _run(protocol, tmp_path)
    session = json.loads(Path(summary["session_path"]).read_text())
    turns = session["turns"]
    labels = _labels()

    # The run ends, within the bound its caps set, with the exit code its status calls for.
    assert elapsed <= _bound(protocol), f"{protocol} took {elapsed:.0f} s, over {_bound(protocol)} s"
    assert session["status"] in {"completed", "needs_human"}, (session["status"], session["error"])
    assert done.returncode == EXIT[session["status"]], done.stderr[-2000:]
    assert summary["status"] == session["status"]
    assert 0 < summary["calls"] <= PROTOCOLS[protocol][1]

    # Every turn says how it ended; none passes the cap or the deadline.
    for turn in turns:
        assert turn.get("finish_reason") in FINISH_REASONS, turn
        # The cap is per call; a turn that sent a reminder for its score made two (its usage adds them up).
        assert turn["usage"]["completion_tokens"] <= CAP * turn["usage"]["calls"], (turn["agent"], turn["usage"])
        assert turn["duration_s"] <= TIMEOUT + 5, (turn["agent"], turn["duration_s"])
    truncated = sum(turn["finish_reason"] in {"length", "deadline", "cut"} for turn in turns)
    assert summary["truncated"] == truncated
    assert summary["unscored"] == sum(bool(turn["unscored"]) for turn in turns)

    # No score is read from a reply that gives none.
    for turn in turns:
        given = [v for v in (turn.get("score"), turn.get("score_b")) if v is not None]
        if turn["content"] in labels and labels[turn["content"]] is None:
            assert not given and turn.get("verdict") is None, (turn["agent"], turn["content"][:300])
        for value in given:
            assert _mentions(turn["content"], value), (value, turn["content"][:300])
        if turn["unscored"]:
            assert not given and turn.get("verdict") is None

    # The report renders, beside the session and again through `export`.
    report = Path(summary["report"]).read_text()
    assert report.startswith("# Evaluation report") and session["id"] in report, report[:500]
    exported = subprocess.run(
        [CLI, "export", summary["session_path"], "--format", "md",
         "--out", str(tmp_path / "export.md")], capture_output=True, text=True, timeout=120)
    assert exported.returncode == 0, exported.stderr
    assert (tmp_path / "export.md").read_text().strip()


def test_a_batch_settles_every_item_once_and_a_rerun_makes_no_call(tmp_path: Path) -> None:
    """The batch engine on a real model: each line's score is one its reply states, each line has its
    session on disk, the calls in flight stay within --concurrency, and a rerun resumes to nothing."""
    stories = (INPUTS / "story.txt").read_text(), (INPUTS / "summary.txt").read_text()
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"s{i}", "text": stories[i % 2], "human": {"coherence": 1 + i}}) + "\n"
                             for i in range(4)))
    out, sessions = tmp_path / "out.jsonl", tmp_path / "sessions"
    command = [CLI, "batch", str(items), "--out", str(out), "--protocol", "single", "--criteria", "coherence",
               "--model", MODEL, "--api-base", API_BASE, "--concurrency", "2", "--max-reply-tokens", str(CAP),
               "--retries", str(RETRIES), "--temperature", "0", "--no-cache", "--sessions-dir", str(sessions)]
    env = {**os.environ, "OPENAI_API_KEY": "sk-local-server-needs-none", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "DEBATE_TUI_TIMEOUT": str(TIMEOUT)}  # batch has no --timeout flag
    bound = 4 * RETRIES * (TIMEOUT + 1) + SLACK_S
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=bound + 60)
    assert done.stdout.strip(), done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert done.returncode == (3 if summary["failed"] else 0), done.stderr[-2000:]
    assert summary["done"] + summary["failed"] == 4 and 4 <= summary["calls"] <= 4 * RETRIES
    assert summary["concurrency"]["max"] == 2 and summary["rate_limited"] == 0

    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(row["id"] for row in rows) == ["s0", "s1", "s2", "s3"]
    for row in rows:
        session = json.loads((sessions / f"{row['session']}.json").read_text())
        assert session["status"] == row["status"]
        if row["predicted"] is not None:
            assert any(_mentions(turn["content"], row["predicted"]) for turn in session["turns"]), row
        for turn in session["turns"]:
            assert turn["usage"]["completion_tokens"] <= CAP * turn["usage"]["calls"]  # per call, as above

    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=bound + 60)
    rerun = json.loads(again.stdout.strip().splitlines()[-1])
    assert rerun["calls"] == 0 or summary["failed"], rerun  # only failed items are asked again
    assert rerun["skipped"] == summary["done"]


@pytest.mark.serial  # asserts wall time
def test_structured_on_reads_every_answer_from_the_json_the_server_constrains(tmp_path: Path) -> None:
    """`--structured on` against llama-cpp-python's server: the JSON schema form it refuses is tried once, its
    own form is used from then on, and each asked answer is the JSON line the turn ends with, on the scale."""
    done, elapsed, summary = _run("single", tmp_path, "--structured", "on")
    session = json.loads(Path(summary["session_path"]).read_text())
    assert done.returncode == EXIT[session["status"]], done.stderr[-2000:]
    assert session["state"]["answer_format"] == {MODEL: "json_object"}
    lines = [turn["content"].rstrip().rsplit("\n", 1)[-1] for turn in session["turns"]]
    from_json = [(json.loads(line), turn) for line, turn in zip(lines, session["turns"], strict=True)
                 if line.startswith('{"reason"')]  # a turn whose JSON call failed keeps its free text's answer
    assert from_json, "no answer came from JSON"
    for answer, turn in from_json:
        assert answer["score"] == turn["score"] and 1 <= turn["score"] <= 5 and float(turn["score"]).is_integer()
    assert elapsed <= _bound("single") * 2  # each answer asked twice at most: the argument, then its JSON


@pytest.mark.serial  # asserts wall time
def test_structured_on_reads_a_matevals_report_from_its_json_answers(tmp_path: Path) -> None:
    """`--structured on` asks the Summarizer's report again as JSON, a yes or no per error type with its sentence
    (each within the grammar's bounds, so the answers fit the tokens they are given): the report's turn ends with
    that line, and every type is scored from it, a "no" as 0."""
    done, elapsed, summary = _run("mateval", tmp_path, "--structured", "on")
    session = json.loads(Path(summary["session_path"]).read_text())
    assert done.returncode == EXIT[session["status"]], done.stderr[-2000:]
    report = [turn for turn in session["turns"] if turn["agent"] == "Summarizer" and turn["error"] is None][-1]
    answers = json.loads(report["content"].rstrip().rsplit("\n", 1)[-1])
    types = [name for name in summary["scores"] if name != "total"]
    assert all(answers[name] in ("yes", "no") for name in types), answers
    assert all(summary["scores"][name] == 0 for name in types if answers[name] == "no")
    assert all(summary["scores"][name] is not None for name in types)
    assert elapsed <= _bound("mateval") * 2  # each answer asked twice at most: the report, then its JSON


def test_two_versions_of_a_story_compared_keep_every_error_on_its_side(tmp_path: Path) -> None:
    """`compare` on MATEval sessions of a story with a repeated sentence and of the story without it. What the
    small model finds is its own affair; every error of each session is in `both` or in that side's own list."""
    story = (Path(__file__).resolve().parents[2] / "examples" / "story.txt").read_text()
    v1, v2 = tmp_path / "v1.txt", tmp_path / "v2.txt"
    v1.write_text(story)
    v2.write_text(story.replace("He went to the pool every morning. He went", "He went"))
    summaries = [_run("mateval", tmp_path, "--text", str(path))[2] for path in (v1, v2)]
    done = subprocess.run([CLI, "compare", *(s["session_path"] for s in summaries), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    compared = json.loads(done.stdout)
    assert compared["kind"] == "sessions" and compared["same_text"] is False
    sessions = [json.loads(Path(s["session_path"]).read_text()) for s in summaries]
    found = [len((session["outcome"] or {}).get("errors", [])) for session in sessions]
    errors = compared["errors"]
    assert (len(errors["both"]) + len(errors["only_a"]), len(errors["both"]) + len(errors["only_b"])) == tuple(found)


@pytest.mark.serial  # asserts wall time
def test_a_debate_forked_at_turn_2_with_a_remark_copies_two_turns_and_asks_only_the_rest(tmp_path: Path) -> None:
    """`fork --at 2 --inject`: the original's first two turns verbatim (no call for them), the remark recorded
    before turn 3, the rest asked of the real model to the protocol's end, within the same bounds as a run."""
    done, _, first = _run("debate", tmp_path, "--rounds", "2")
    assert done.returncode == EXIT[first["status"]], done.stderr[-2000:]
    original = json.loads(Path(first["session_path"]).read_text())
    assert sum(turn["error"] is None for turn in original["turns"]) >= 2, original["turns"]
    env = {**os.environ, "OPENAI_API_KEY": "sk-local-server-needs-none", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    remark = "Check every number against the article before you score."
    started = time.monotonic()
    forked = subprocess.run(
        [CLI, "fork", first["session_path"], "--at", "2", "--inject", remark, "--timeout", str(TIMEOUT),
         "--retries", str(RETRIES), "--sessions-dir", str(tmp_path / "sessions")],
        env=env, capture_output=True, text=True, timeout=_bound("debate") * 2 + 60)
    elapsed = time.monotonic() - started
    lines = [line for line in forked.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, forked.stderr[-2000:]
    summary = json.loads(lines[0])
    fork = json.loads(Path(summary["session_path"]).read_text())
    assert summary["forked_from"] == fork["forked_from"] == {"session": original["id"], "turns": 2}
    assert forked.returncode == EXIT[fork["status"]], forked.stderr[-2000:]
    assert elapsed <= _bound("debate") * 2
    kept = [t for t in fork["turns"] if t["error"] is None][:2]
    assert kept == [t for t in original["turns"] if t["error"] is None][:2]
    assert [(a["kind"], a["after_turn"], a["text"]) for a in fork["actions"]] == [("inject", 2, remark)]
    asked = fork["turns"][original["turns"].index(kept[-1]) + 1:]  # what came after the copied turns
    assert summary["calls"] == sum(turn["usage"]["calls"] for turn in asked)
    for turn in asked:
        assert turn["usage"]["completion_tokens"] <= CAP * turn["usage"]["calls"]  # per call, as above
        assert turn.get("finish_reason") in FINISH_REASONS
    print(f"original {original['id']}: {len(original['turns'])} turns, {first['calls']} calls, {first['scores']}; "
          f"fork {fork['id']}: 2 turns copied, {summary['calls']} calls, {summary['scores']}")
