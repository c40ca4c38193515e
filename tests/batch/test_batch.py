"""`debate-tui batch` against the fake server: result lines, reruns, resume, cache, 429s, budget, bad input."""

from __future__ import annotations

import asyncio
import json

import pytest

from debate_tui.meta.evaluate import validate_row
from debate_tui.store import SessionStore
from tests.helpers.batch import model_args, prepared, read_rows, run_batch, write_items
from tests.helpers.scripts import agreeing_debate, never_agreeing_debate

SUMMARY_KEYS = {"done", "skipped", "failed", "needs_human", "calls", "cache_hits", "prompt_tokens",
                "completion_tokens", "cost_usd", "elapsed_s", "out"}
ROW_KEYS = {"id", "group", "criterion", "predicted", "human", "session", "status", "calls",
            "prompt_tokens", "completion_tokens", "cost_usd"}


def test_one_line_per_item_and_criterion_with_human_scores_and_usage(capsys, llm_server, tmp_path, isolated_dirs):
    agreeing_debate(llm_server)
    items, out = write_items(tmp_path / "in.jsonl", 6), tmp_path / "out.jsonl"
    code, summary, _ = run_batch(capsys, str(items), "--out", str(out), *model_args(llm_server),
                                 "--criteria", "coherence,relevance", "--concurrency", "3")
    assert code == 0
    assert set(summary) >= SUMMARY_KEYS
    assert summary["done"] == 6 and summary["calls"] == 6 * 2 * 2 == llm_server.calls
    rows = read_rows(out)
    assert len(rows) == 12 and {(r["id"], r["criterion"]) for r in rows} == {
        (f"i{i}", c) for i in range(6) for c in ("coherence", "relevance")}
    for row in rows:
        assert set(row) >= ROW_KEYS
        validate_row(row)  # what `debate-tui meta` accepts
        assert row["status"] == "completed" and row["predicted"] == 4 and row["calls"] == 2
        number = int(row["id"][1:])
        assert row["group"] == f"g{number // 10}"
        assert row["human"] == (1 + number % 5 if row["criterion"] == "coherence" else None)
        assert "predicted_verdict" not in row  # not a pair
    assert sum(r["calls"] for r in rows) == summary["calls"]  # usage split by criterion, never counted twice
    store = SessionStore(isolated_dirs / "sessions")
    session = store.load(rows[0]["session"])
    assert session.status == "completed" and session.task.text.startswith("Story number")
    assert all(t.usage.calls == 1 for t in session.turns)


def test_rerun_of_the_same_command_makes_zero_calls(capsys, llm_server, tmp_path):
    agreeing_debate(llm_server)
    items, out = write_items(tmp_path / "in.jsonl", 8), tmp_path / "out.jsonl"
    argv = [str(items), "--out", str(out), *model_args(llm_server)]
    run_batch(capsys, *argv)
    calls, before = llm_server.calls, out.read_text()
    code, summary, _ = run_batch(capsys, *argv)
    assert code == 0 and llm_server.calls == calls == 16
    assert summary["skipped"] == 8 and summary["done"] == 0 and summary["calls"] == 0
    assert out.read_text() == before


def test_identical_rerun_into_a_new_file_is_served_by_the_cache_unless_bypassed(capsys, llm_server, tmp_path):
    agreeing_debate(llm_server)
    items = write_items(tmp_path / "in.jsonl", 5)
    run_batch(capsys, str(items), "--out", str(tmp_path / "a.jsonl"), *model_args(llm_server))
    assert llm_server.calls == 10
    code, summary, _ = run_batch(capsys, str(items), "--out", str(tmp_path / "b.jsonl"), *model_args(llm_server))
    assert code == 0 and llm_server.calls == 10
    assert summary["calls"] == 0 and summary["cache_hits"] == 10 and summary["done"] == 5
    rows = read_rows(tmp_path / "b.jsonl")
    assert all(r["calls"] == 0 and r["cache_hits"] == 2 and r["predicted"] == 4 for r in rows)
    _, summary, _ = run_batch(capsys, str(items), "--out", str(tmp_path / "c.jsonl"), *model_args(llm_server),
                              "--no-cache")
    assert summary["calls"] == 10 and llm_server.calls == 20


def test_sampling_temperature_is_not_cached(capsys, llm_server, tmp_path):
    agreeing_debate(llm_server)
    items = write_items(tmp_path / "in.jsonl", 3)
    for name in ("a", "b"):
        run_batch(capsys, str(items), "--out", str(tmp_path / f"{name}.jsonl"), *model_args(llm_server),
                  "--temperature", "0.7")
    assert llm_server.calls == 12
    assert all(r.body["temperature"] == 0.7 for r in llm_server.requests)


def test_limit_then_the_full_batch_does_not_redo_finished_items(capsys, llm_server, tmp_path):
    agreeing_debate(llm_server)
    items, out = write_items(tmp_path / "in.jsonl", 10), tmp_path / "out.jsonl"
    argv = [str(items), "--out", str(out), *model_args(llm_server), "--no-cache"]
    _, first, _ = run_batch(capsys, *argv, "--limit", "4")
    assert first["done"] == 4 and llm_server.calls == 8
    _, second, _ = run_batch(capsys, *argv)
    assert second["skipped"] == 4 and second["done"] == 6 and llm_server.calls == 20
    assert sorted(r["id"] for r in read_rows(out)) == sorted(f"i{i}" for i in range(10))


async def test_an_interrupted_batch_resumes_without_redoing_anything(llm_server, tmp_path):
    """Stop mid-way: finished items keep their lines, in-flight ones resume from their recorded turns."""
    agreeing_debate(llm_server)
    llm_server.latency = 0.05
    items, out = write_items(tmp_path / "in.jsonl", 30), tmp_path / "out.jsonl"
    argv = [str(items), "--out", str(out), *model_args(llm_server), "--no-cache", "--concurrency", "4"]
    batch = prepared(*argv)
    task = asyncio.ensure_future(batch.run())
    while not out.exists() or len(read_rows(out)) < 10:
        await asyncio.sleep(0.01)
    batch.stop("test interrupt")
    tally = await task
    finished = {r["id"] for r in read_rows(out)}
    assert 10 <= len(finished) < 30 and tally.cancelled >= 1
    assert batch.summary()["stopped"] == "test interrupt"
    answered = [r for r in llm_server.requests if r.fault is None]
    first_calls = llm_server.calls

    resumed = prepared(*argv)
    await resumed.run()
    rows = read_rows(out)
    assert sorted(r["id"] for r in rows) == sorted(f"i{i}" for i in range(30))  # each exactly once
    later = llm_server.requests[first_calls:]
    texts = [r.messages[-1]["content"] for r in later]
    for item in finished:  # nothing finished before the stop was asked again
        assert not any(f"Story number {item[1:]}." in text for text in texts)
    # a turn answered before the stop is replayed, not asked again: at most the stopped calls are repeated
    assert llm_server.calls - len(answered) <= 30 * 2 - len(finished) * 2 + 4
    assert resumed.tally.skipped == len(finished)


def test_a_line_cut_off_by_a_crash_is_dropped_and_the_item_recovered_from_its_session(capsys, llm_server, tmp_path):
    agreeing_debate(llm_server)
    items, out = write_items(tmp_path / "in.jsonl", 4), tmp_path / "out.jsonl"
    argv = [str(items), "--out", str(out), *model_args(llm_server), "--no-cache"]
    run_batch(capsys, *argv)
    text = out.read_text()
    out.write_text(text[: len(text) - 40])  # the last line loses its end, as in a kill mid-write
    calls = llm_server.calls
    code, summary, _ = run_batch(capsys, *argv)
    assert code == 0 and summary["skipped"] == 3 and summary["done"] == 1
    assert llm_server.calls == calls  # the item's session was complete: its line is rebuilt without a call
    rows = read_rows(out)
    assert len(rows) == 4 and all(r["status"] == "completed" for r in rows)


def test_failed_items_are_written_then_retried_on_the_next_run(capsys, llm_server, tmp_path, monkeypatch):
    monkeypatch.setenv("DEBATE_TUI_RETRIES", "1")
    llm_server.add_rule(fault=500, match="Story number 1\\.")
    agreeing_debate(llm_server)
    items, out = write_items(tmp_path / "in.jsonl", 3), tmp_path / "out.jsonl"
    argv = [str(items), "--out", str(out), *model_args(llm_server)]
    code, summary, _ = run_batch(capsys, *argv)
    assert code == 3 and summary["failed"] == 1 and summary["done"] == 2
    failed = [r for r in read_rows(out) if r["status"] == "failed"]
    assert [r["id"] for r in failed] == ["i1"] and failed[0]["predicted"] is None and failed[0]["error"]
    llm_server.reset()
    agreeing_debate(llm_server)
    code, summary, _ = run_batch(capsys, *argv)
    assert code == 0 and summary["done"] == 1 and summary["skipped"] == 2
    rows = read_rows(out)
    assert len(rows) == 3 and all(r["status"] == "completed" for r in rows)


def test_a_429_pauses_every_worker(capsys, llm_server, tmp_path, monkeypatch):
    """After a rate limit no new request reaches the server until the shared pause is over."""
    monkeypatch.setenv("DEBATE_TUI_RETRY_DELAY", "1.0")
    llm_server.latency = 0.02
    llm_server.add_rule(fault=429, times=1, match="Story number 3\\.")
    agreeing_debate(llm_server)
    items = write_items(tmp_path / "in.jsonl", 24)
    code, summary, _ = run_batch(capsys, str(items), "--out", str(tmp_path / "out.jsonl"), *model_args(llm_server),
                                 "--concurrency", "8")
    assert code == 0 and summary["done"] == 24 and summary["rate_limited"] == 1
    requests = llm_server.requests
    limited = next(r for r in requests if r.fault == "429")
    told = limited.at + llm_server.latency  # when the client got the 429 (about)
    # From 0.3 s on: a call that had passed the gate before the 429 may still be on its way (litellm's
    # own work before the socket takes tens of milliseconds on a loaded machine).
    quiet = [r for r in requests if told + 0.3 < r.at < told + 0.95]
    assert quiet == []
    assert any(r.at >= told + 0.95 for r in requests)  # and work went on afterwards


def test_token_budget_stops_the_batch_with_exit_4_and_a_rerun_finishes_it(capsys, llm_server, tmp_path):
    agreeing_debate(llm_server)
    items, out = write_items(tmp_path / "in.jsonl", 12), tmp_path / "out.jsonl"
    argv = [str(items), "--out", str(out), *model_args(llm_server), "--concurrency", "2", "--no-cache"]
    code, summary, err = run_batch(capsys, *argv, "--max-tokens", "600")
    assert code == 4 and "budget reached" in summary["stopped"] and "budget reached" in err
    assert 0 < summary["done"] < 12 and summary["remaining"] == 12 - summary["done"]
    first = llm_server.calls
    spent = summary["prompt_tokens"] + summary["completion_tokens"]
    per_call = spent / max(summary["calls"], 1)
    assert spent + per_call > 600  # one more call would have passed the budget ...
    assert spent <= 600 + 2 * per_call  # ... and at most one call per worker was already under way
    assert first <= 2 * summary["done"] + 2 + 1  # at most one call per worker went out after the limit
    code, summary, _ = run_batch(capsys, *argv)
    assert code == 0 and len(read_rows(out)) == 12


def test_undecided_debates_are_marked_for_a_person(capsys, llm_server, tmp_path):
    never_agreeing_debate(llm_server)
    items, out = write_items(tmp_path / "in.jsonl", 3), tmp_path / "out.jsonl"
    argv = [str(items), "--out", str(out), *model_args(llm_server, "--rounds", "1", "--option", "tie_breaker=human")]
    code, summary, _ = run_batch(capsys, *argv)
    assert code == 0 and summary["needs_human"] == 3
    rows = read_rows(out)
    assert all(r["status"] == "needs_human" and r["predicted"] is None and r["calls"] == 3 for r in rows)
    calls = llm_server.calls
    _, again, _ = run_batch(capsys, *argv)
    assert again["skipped"] == 3 and llm_server.calls == calls  # waiting for review, not rerun


def test_pairs_carry_predicted_and_human_verdicts(capsys, llm_server, tmp_path):
    llm_server.add_rule("Submission 1 answers the question; 2 does not.\n1")
    path = tmp_path / "pairs.jsonl"
    pair = {"text": "Paris.", "text_b": "Lyon.", "source": "Capital of France?", "group": "qa", "human_verdict": "1"}
    path.write_text("".join(json.dumps({"id": f"p{i}", **pair}) + "\n" for i in range(3)))
    out = tmp_path / "out.jsonl"
    code, summary, _ = run_batch(capsys, str(path), "--out", str(out), "--protocol", "scaleeval",
                                 "--criteria", "helpfulness", "--model", "openai/fake-model",
                                 "--api-base", llm_server.base_url)
    assert code == 0 and summary["done"] == 3
    rows = read_rows(out)
    assert all(r["human_verdict"] == "1" and r["predicted_verdict"] in ("1", "2") for r in rows)
    for row in rows:
        validate_row(row)


@pytest.mark.parametrize(("content", "message"), [
    ('{"id": "a", "text": "fine"}\n{"id": "b", "text": \n', "in.jsonl:2: not valid JSON"),
    ('{"id": "a", "text": "fine"}\n{"id": "b"}\n', "in.jsonl:2: missing 'text'"),
    ('{"text": "no id"}\n', "in.jsonl:1: missing 'id'"),
    ('{"id": "a", "text": "x"}\n\n{"id": "a", "text": "y"}\n', "in.jsonl:3: duplicate id 'a' (first on line 1)"),
    ('{"id": "a", "text": "x", "human": {"coherence": "high"}}\n', "'human.coherence' must be a number"),
    ('{"id": "a", "text": "x", "human_verdict": "A"}\n', "'human_verdict' must be"),
    ('{"id": "a", "text": "   "}\n', "'text' is empty"),
])
def test_bad_input_exits_2_naming_the_line(capsys, llm_server, tmp_path, content, message):
    path = tmp_path / "in.jsonl"
    path.write_text(content)
    code, summary, err = run_batch(capsys, str(path), "--out", str(tmp_path / "out.jsonl"), *model_args(llm_server))
    assert code == 2 and summary is None and message in err
    assert llm_server.calls == 0 and not (tmp_path / "out.jsonl").exists()


def test_protocol_refusals_are_reported_per_line_before_any_call(capsys, llm_server, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"id": "a", "text": "x", "text_b": "y"}\n{"id": "b", "text": "only one"}\n')
    code, _, err = run_batch(capsys, str(path), "--out", str(tmp_path / "o.jsonl"), "--protocol", "scaleeval",
                             "--criteria", "helpfulness", "--demo")
    assert code == 2 and "line 2 (id 'b')" in err and llm_server.calls == 0


@pytest.mark.parametrize(("lines", "protocol", "expected"), [
    (['{"id": "a", "text": "only one"}', '{"id": "b", "text": "x", "text_b": "y"}'], "scaleeval",
     "line 1 (id 'a'): ScaleEval compares two texts: give the second with \"text_b\""),
    (['{"id": "a", "text": "x", "text_b": "y"}'], "mateval", "line 1 (id 'a'): MATEval judges one text; \"text_b\""),
])
def test_a_refused_first_line_is_named_by_its_number_and_fields(capsys, llm_server, tmp_path, lines, protocol,
                                                               expected):
    """Issue 33 #15: a refusal on line 1 came without its line number, and named --text-b, which batch lacks."""
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run_batch(capsys, str(path), "--out", str(tmp_path / "o.jsonl"), "--protocol", protocol, "--demo")
    assert code == 2 and expected in err and "--text-b" not in err and "--source" not in err


@pytest.mark.parametrize(("flags", "message"), [
    (["--option", "tie_breaker=sometimes"], "--option tie_breaker"),
    (["--option", "no_such=1"], "has no option no_such"),
    (["--option", "novalue"], "expected KEY=VALUE"),
    (["--concurrency", "0"], "--concurrency"),
    (["--max-cost", "-1"], "--max-cost"),
    (["--limit", "-1"], "--limit"),
])
def test_bad_flags_exit_2(capsys, llm_server, tmp_path, flags, message):
    items = write_items(tmp_path / "in.jsonl", 2)
    code, _, err = run_batch(capsys, str(items), "--out", str(tmp_path / "o.jsonl"), *model_args(llm_server), *flags)
    assert code == 2 and message in err and llm_server.calls == 0


def test_a_second_batch_on_the_same_results_file_is_refused(capsys, llm_server, tmp_path):
    from debate_tui.batch.results import ResultsFile

    items, out = write_items(tmp_path / "in.jsonl", 2), tmp_path / "out.jsonl"
    with ResultsFile(out).locked("a batch"):
        code, _, err = run_batch(capsys, str(items), "--out", str(out), *model_args(llm_server))
    assert code == 2 and "is in use (a batch, pid" in err and llm_server.calls == 0


def test_stdin_input_and_the_demo_model_work_offline(capsys, tmp_path, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO('{"id": 1, "text": "He went home. He went home. Then he slept."}\n'))
    out = tmp_path / "out.jsonl"
    code, summary, _ = run_batch(capsys, "-", "--out", str(out), "--demo")
    assert code == 0 and summary["done"] == 1
    (row,) = read_rows(out)
    assert row["id"] == "1" and row["predicted"] is not None and row["group"] is None
