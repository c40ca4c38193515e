"""How real models end replies, played by the fake server through the real litellm path.

Each case runs the `run` command as a person would and checks that the run
ends within its bound, how each turn ended (`finish_reason`), the exit code
and the stdout JSON line's `unscored` and `truncated` counts.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from debate_tui.factory import runner_for
from debate_tui.llm.litellm_client import load_litellm
from debate_tui.llm.router import ModelRouter
from debate_tui.llm.tokens import reply_tokens
from debate_tui.store import read_session, write_session
from tests.helpers.cli import FAST, run_cli, write_config
from tests.helpers.sessions import make_session

pytestmark = pytest.mark.usefixtures("in_tmp")  # every test writes its outputs in its own folder

SCORED = "The story is clear and ordered, with one repeated sentence.\nScore: 4"


def run_single(capsys, server, *flags: str) -> tuple[int, dict, list[dict], float]:
    """`run --protocol single` against the fake server: exit code, JSON line, the session's turns, seconds."""
    from tests.helpers import STORY

    story = Path("story.txt").absolute()
    story.write_text(STORY)
    started = time.monotonic()
    code, summary, _ = run_cli(capsys, "run", "--text", str(story), "--protocol", "single",
                               "--model", "openai/fake-model", "--api-base", server.base_url,
                               "--structured", "off", *flags)  # the free-text path with its reminder: a server of
    # the user's own defaults to `auto`, whose JSON call replaces the reminder (tests/engine/test_structured.py)
    elapsed = time.monotonic() - started
    turns = json.loads(Path(summary["session_path"]).read_text())["turns"]
    return code, summary, turns, elapsed


@pytest.fixture(scope="module", autouse=True)
def litellm_loaded() -> None:
    """Imported before the clocks start: the bounds are the runs', not the seconds of `import litellm`."""
    load_litellm()


@pytest.mark.serial  # asserts wall time
def test_an_endless_stream_stops_at_the_reply_cap_and_is_re_asked_briefly(capsys, llm_server):
    llm_server.add_rule(fault="endless")
    code, summary, turns, elapsed = run_single(capsys, llm_server, "--max-reply-tokens", "60", "--timeout", "30")
    assert code == 0 and summary["status"] == "completed" and elapsed < 5
    assert [t["finish_reason"] for t in turns] == ["length", "length"]
    assert summary["truncated"] == 2 and summary["unscored"] == 1 and summary["scores"] == {"coherence": None}
    assert all(t["usage"]["completion_tokens"] == 60 for t in turns)  # counted although no usage came
    assert all(60 <= reply_tokens("openai/fake-model", t["content"]) <= 72 for t in turns)  # cut at the cap
    assert [r.body["max_tokens"] for r in llm_server.requests] == [60, 60]
    reminder = llm_server.requests[1].messages[-1]["content"]
    assert reminder.startswith("Your reply was truncated at") and "Answer briefly" in reminder


@pytest.mark.serial  # asserts wall time
def test_a_slow_stream_is_cut_at_the_deadline_and_its_partial_reply_kept(capsys, llm_server):
    llm_server.chunk_size = 8
    llm_server.add_rule(SCORED, chunk_delay=0.6)
    code, summary, turns, elapsed = run_single(capsys, llm_server, "--timeout", "1.5", "--retries", "3")
    assert code == 0 and summary["unscored"] == 1 and summary["truncated"] == 2
    assert [t["finish_reason"] for t in turns] == ["deadline", "deadline"]
    assert all(t["content"] and SCORED.startswith(t["content"]) for t in turns)
    assert 3.0 <= elapsed < 8 and all(1.4 < t["duration_s"] < 2.5 for t in turns)
    assert llm_server.calls == 2  # a deadline is not retried


def test_a_length_stop_is_recorded_and_a_readable_score_still_counts(capsys, llm_server):
    llm_server.add_rule(SCORED, fault="length")
    code, summary, turns, _ = run_single(capsys, llm_server)
    assert code == 0 and summary["scores"] == {"coherence": 4.0}
    assert [t["finish_reason"] for t in turns] == ["length"] and summary["truncated"] == 1
    assert summary["unscored"] == 0


def test_the_server_honours_max_tokens_with_a_length_stop(capsys, llm_server):
    llm_server.add_rule("The story " * 100 + "\nScore: 4")
    code, summary, turns, _ = run_single(capsys, llm_server, "--max-reply-tokens", "20")
    assert code == 0 and [t["finish_reason"] for t in turns] == ["length", "length"]
    assert summary["unscored"] == 1 and summary["truncated"] == 2


def test_a_cut_stream_is_a_fault_retried_not_an_answer(capsys, llm_server, monkeypatch):
    """A stream that ends with neither a finish reason nor [DONE] is asked again; the whole reply is the answer."""
    monkeypatch.setenv("DEBATE_TUI_RETRY_DELAY", "0")
    llm_server.add_rule(SCORED.replace("4", "2"), fault="cut", times=1)
    llm_server.add_rule(SCORED)
    code, summary, turns, _ = run_single(capsys, llm_server, "--retries", "3")
    assert code == 0 and summary["scores"] == {"coherence": 4.0} and llm_server.calls == 2
    assert [t["finish_reason"] for t in turns] == ["cut", "stop"]
    assert turns[0]["error"] and turns[0]["score"] is None and turns[0]["content"].endswith("Score: 2")
    assert summary["truncated"] == 1 and summary["unscored"] == 0


def test_a_stream_cut_on_every_try_leaves_the_turn_unscored_with_its_text(capsys, llm_server, monkeypatch):
    monkeypatch.setenv("DEBATE_TUI_RETRY_DELAY", "0")
    llm_server.add_rule(SCORED, fault="cut")
    code, summary, turns, _ = run_single(capsys, llm_server, "--retries", "2")
    assert code == 0 and summary["scores"] == {"coherence": None} and summary["unscored"] == 1
    assert llm_server.calls == 2  # within --retries, and no reminder on top
    assert [t["finish_reason"] for t in turns] == ["cut", "cut"]
    last = turns[-1]
    assert last["error"] is None and last["unscored"] and last["score"] is None
    assert last["content"] == SCORED  # kept for reading only
    report = Path(summary["report"]).read_text()
    assert "cut off" in report


@pytest.mark.serial  # asserts wall time
@pytest.mark.parametrize("fault", ["error200", "error_midstream"])
def test_an_error_object_inside_a_200_fails_the_run_with_one_short_line(capsys, llm_server, fault):
    llm_server.add_rule(SCORED, fault=fault)
    code, summary, turns, elapsed = run_single(capsys, llm_server, "--retries", "2")
    assert code == 3 and summary["status"] == "failed" and elapsed < 10
    error = summary["error"]
    assert "\n" not in error and error.count("the model failed while generating") == 1
    assert "Original exception" not in error and len(error) < 250
    assert [t["finish_reason"] for t in turns] == ["error", "error"]


def test_an_error_object_as_the_body_of_a_plain_call_fails_the_batch_item(capsys, llm_server, tmp_path):
    llm_server.add_rule(fault="error200")
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "text": "A short story."}) + "\n")
    code, summary, _ = run_cli(capsys, "batch", str(items), "--out", str(tmp_path / "out.jsonl"), "--protocol",
                               "single", "--model", "openai/fake-model", "--api-base", llm_server.base_url,
                               "--retries", "1")
    assert code == 3 and summary["failed"] == 1 and summary["done"] == 0
    assert summary["unscored"] == 0 and summary["truncated"] == 0
    row = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    assert row["status"] == "failed"


def test_a_context_overflow_from_the_server_is_reported_as_such(capsys, llm_server):
    llm_server.context_window = 200
    code, summary, turns, elapsed = run_single(capsys, llm_server, "--max-reply-tokens", "150")
    assert code == 3 and summary["status"] == "failed" and llm_server.calls == 1  # not retried
    assert "context window" in summary["error"] and "exceed context window of 200" in summary["error"]
    assert "--max-history-tokens" in summary["error"] and turns[0]["finish_reason"] == "error"


def test_a_prompt_over_a_configured_window_is_refused_before_any_call(capsys, llm_server):
    write_config('[models."openai/fake-model"]\ncontext_window = 400\n')
    code, summary, turns, _ = run_single(capsys, llm_server, "--max-reply-tokens", "300")
    assert code == 3 and llm_server.calls == 0 and turns == []
    error = summary["error"]
    assert "400-token window of openai/fake-model" in error and "reply may take 300" in error
    assert "--max-history-tokens" in error and "\n" not in error


async def test_the_session_file_is_written_when_the_run_starts(llm_server, tmp_path):
    llm_server.hang_seconds = 30
    llm_server.add_rule(fault="hang")
    path = tmp_path / "s.json"
    runner = runner_for(make_session("debate", llm_server), ModelRouter(timeout_s=20), retry=FAST,
                        save=lambda s: write_session(path, s))
    task = asyncio.ensure_future(runner.run())
    for _ in range(100):
        await asyncio.sleep(0.05)
        if path.exists() and llm_server.calls:
            break
    saved = read_session(path)
    assert saved.status == "running" and saved.turns == []
    runner.control.stop("test over")
    assert (await task).status == "cancelled"


async def test_the_pane_marks_a_reply_that_did_not_end_on_its_own():
    from textual.app import App, ComposeResult

    from debate_tui.domain import AgentSpec, Turn, Usage
    from debate_tui.ui.widgets.agent_pane import AgentPane

    agent = AgentSpec(name="Judge", role="judge", model="openai/fake-model")

    class PaneApp(App):
        def compose(self) -> ComposeResult:
            yield AgentPane(agent, {"coherence": (1, 5)})

    async with PaneApp().run_test(size=(80, 30)) as pilot:
        pane = pilot.app.query_one(AgentPane)
        pane.finish_turn(Turn(slot=0, agent="Judge", role="judge", round=1, content="It rambles on and", unscored=True,
                              usage=Usage(completion_tokens=200), finish_reason="length"))
        pane.finish_turn(Turn(slot=1, agent="Judge", role="judge", round=2, content="Fine.\nScore: 4", score=4,
                              finish_reason="stop"))
        await pilot.pause()
        lines = [line.text for line in pane.turns._lines]
        assert any("round 1 · unscored · truncated at 200 tokens" in line for line in lines)
        assert not any("round 2" in line and ("truncated" in line or "cut off" in line) for line in lines)


def test_the_connection_is_closed_at_the_deadline_and_at_the_cap_so_the_server_stops(capsys, llm_server):
    """The server sees the client hang up as soon as we stop reading: a local server frees its slot."""
    llm_server.chunk_size = 8
    llm_server.add_rule(SCORED, chunk_delay=0.6, times=2)
    _, _, turns, _ = run_single(capsys, llm_server, "--timeout", "1.5", "--retries", "1")
    assert [t["finish_reason"] for t in turns] == ["deadline", "deadline"] and len(llm_server.hangups) == 2
    for request, hangup in zip(llm_server.requests, llm_server.hangups, strict=True):
        assert hangup - request.at < 1.6  # by the 1.5 s deadline (counted from the call's start), not at the
        # reply's end, 10 chunks 0.6 s apart
    llm_server.reset()
    llm_server.add_rule(fault="endless")
    _, _, turns, _ = run_single(capsys, llm_server, "--max-reply-tokens", "40", "--timeout", "30")
    assert [t["finish_reason"] for t in turns] == ["length", "length"] and len(llm_server.hangups) == 2


def test_a_plain_call_hangs_up_at_the_deadline_and_the_servers_next_calls_stream(capsys, llm_server, tmp_path,
                                                                               monkeypatch):
    """`batch` calls without streaming: at the deadline the connection is closed as well. A server may still go on
    generating a plain reply nobody reads (llama-cpp-python's does), so after one such overrun the calls to that
    model and server stream, and the next deadline stops the server mid-reply."""
    from tests.helpers.batch import model_args, run_batch, write_items

    llm_server.add_rule(fault="hang", times=1)
    llm_server.add_rule(SCORED, chunk_delay=0.6)
    monkeypatch.setenv("DEBATE_TUI_TIMEOUT", "1.5")  # batch takes the deadline from the configuration
    items = write_items(tmp_path / "in.jsonl", 1)
    code, summary, _ = run_batch(capsys, str(items), "--out", str(tmp_path / "out.jsonl"),
                                 *model_args(llm_server, "--protocol", "single"), "--retries", "2",
                                 "--no-cache")
    assert summary is not None
    first, second = llm_server.requests[:2]
    assert not first.body.get("stream") and second.body.get("stream")
    assert len(llm_server.hangups) >= 2
    assert llm_server.hangups[0] - first.at < 1.6  # by the 1.5 s deadline, not the server's 30 s hang
    assert llm_server.hangups[1] - second.at < 1.6  # the streamed reply (10 chunks 0.6 s apart) cut at it too
