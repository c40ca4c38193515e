"""Providers that misbehave by size or by shape (issue 45), through the real litellm path against the fake server.

Each reply that could take gigabytes ends at the byte bound, in one line naming it; a body that is not a
completion says so, in `run` (streamed) and `batch` (plain) alike. The memory figures are measured by
benchmarks/hostile_replies.py, not here.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from debate_tui.cli import main
from debate_tui.llm.base import ChatRequest, LLMError
from debate_tui.llm.bounded_http import MB, NOT_OPENAI_FORMAT, REPLY_BYTES_CAP
from debate_tui.llm.litellm_client import LiteLLMClient
from debate_tui.testing.hostile_replies import ODD_VALUE
from tests.helpers.batch import read_rows
from tests.helpers.cli import cli_command, cli_env

PAST_THE_BOUND = f"the reply passed {REPLY_BYTES_CAP // MB} MB"


def call(server, stream: bool) -> None:
    request = ChatRequest("openai/fake-model", [{"role": "user", "content": "Rate it."}], {"api_base": server.base_url})
    asyncio.run(LiteLLMClient(timeout_s=60).complete(request, (lambda delta: None) if stream else None))


@pytest.mark.parametrize(("fault", "stream"), [("gzip_bomb", False), ("gzip_bomb", True), ("huge", False),
                                               ("endless_line", True)])
def test_a_reply_past_the_byte_bound_ends_in_one_line_naming_the_bound(llm_server, fault, stream):
    llm_server.add_rule(fault=fault)
    with pytest.raises(LLMError) as caught:
        call(llm_server, stream)
    assert caught.value.kind == "reply" and not caught.value.retryable
    assert str(caught.value) == PAST_THE_BOUND


def single(capfd, server, tmp_path: Path, command: str, *flags: str) -> tuple[int, str, str, list[dict]]:
    """`run` (streamed) or `batch` (plain) of one story: exit code, stdout, stderr, and the batch's rows."""
    story = tmp_path / "story.txt"
    story.write_text("Tom went home. He slept well.")
    model = ["--protocol", "single", "--model", "openai/fake-model", "--api-base", server.base_url, "--retries", "2"]
    if command == "run":
        code = main(["run", "--text", str(story), *model, *flags])
    else:
        items = tmp_path / "items.jsonl"
        items.write_text(json.dumps({"id": "a", "text": story.read_text()}) + "\n")
        code = main(["batch", str(items), "--out", str(tmp_path / "out.jsonl"), "--no-cache", *model, *flags])
    out, err = capfd.readouterr()
    return code, out, err, read_rows(tmp_path / "out.jsonl") if command == "batch" else []


@pytest.mark.parametrize(("command", "fault"), [("run", "endless_line"), ("batch", "huge"), ("batch", "gzip_bomb")])
def test_a_run_or_a_batch_fails_the_turn_at_the_bound(capfd, llm_server, tmp_path, command, fault):
    llm_server.add_rule(fault=fault)
    code, out, err, rows = single(capfd, llm_server, tmp_path, command)
    error = rows[0]["error"] if rows else json.loads(out.splitlines()[-1])["error"]
    assert code == 3 and error == f"Judge (openai/fake-model): {PAST_THE_BOUND}, not retried"
    assert llm_server.calls == 1 and "Traceback" not in err


@pytest.mark.parametrize("command", ["run", "batch"])
@pytest.mark.parametrize(("fault", "detail"), [
    ("html", "(a 200 text/html page: is the api_base right?)"),
    ("no_choices", "(a reply with no choices)"),
    ("odd_shapes", "(litellm could not read the reply as a completion)"),
])
def test_a_body_that_is_not_a_completion_says_so_in_run_and_batch_alike(capfd, llm_server, tmp_path, command,
                                                                          fault, detail):
    llm_server.add_rule(fault=fault)
    code, out, err, rows = single(capfd, llm_server, tmp_path, command)
    error = rows[0]["error"] if rows else json.loads(out.splitlines()[-1])["error"]
    if command == "run" and fault != "html":  # a streamed call answered with a JSON body: no events to read
        detail = "(a streamed call answered with application/json, not server-sent events)"
    assert code == 3 and error == f"Judge (openai/fake-model): {NOT_OPENAI_FORMAT} {detail}, not retried"
    assert llm_server.calls == 1  # no retry can make a page a completion
    assert "IndexError" not in out + err and "Traceback" not in out + err


def test_a_stream_whose_chunks_have_the_wrong_types_says_so(capfd, llm_server, tmp_path):
    """litellm passes a chunk's fields on as they came: a list as the text was 'internal error: TypeError'."""
    llm_server.add_rule(fault="odd_stream")
    code, out, err, _ = single(capfd, llm_server, tmp_path, "run")
    assert code == 3 and json.loads(out.splitlines()[-1])["error"] == (
        f"Judge (openai/fake-model): {NOT_OPENAI_FORMAT} (a streamed chunk whose content is not text), not retried")
    assert ODD_VALUE not in err and "internal error" not in out + err


def test_library_warnings_carrying_the_providers_values_stay_off_stderr(llm_server, tmp_path):
    """In a child process: pytest records warnings itself, so only a real stderr shows what a person sees."""
    llm_server.add_rule(fault="odd_shapes")
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "text": "Tom went home."}) + "\n")
    done = subprocess.run([*cli_command(), "batch", str(items), "--out", str(tmp_path / "out.jsonl"), "--protocol",
                           "single", "--model", "openai/fake-model", "--api-base", llm_server.base_url, "--retries",
                           "1"], env=cli_env(tmp_path) | {"OPENAI_API_KEY": "sk-test"}, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 3 and NOT_OPENAI_FORMAT in read_rows(tmp_path / "out.jsonl")[0]["error"]
    assert ODD_VALUE not in done.stdout + done.stderr and "Pydantic" not in done.stderr


def test_absurd_token_counts_are_counted_from_the_text_and_spend_no_budget(capfd, caplog, llm_server, tmp_path):
    llm_server.usage = {"prompt_tokens": 10**30, "completion_tokens": 10**30, "total_tokens": 2 * 10**30}
    code, out, _, _ = single(capfd, llm_server, tmp_path, "run", "--max-tokens", "5000")
    summary = json.loads(out.splitlines()[-1])
    assert code == 0 and summary["status"] == "completed" and summary["scores"] == {"coherence": 3.0}
    assert 0 < summary["prompt_tokens"] < 5000 and 0 < summary["completion_tokens"] < 50
    assert any("prompt_tokens 1e+30, completion_tokens 1e+30" in r.message for r in caplog.records)


@pytest.mark.parametrize("command", ["run", "batch"])
def test_max_cost_for_a_model_litellm_cannot_price_says_it_cannot_be_enforced(capfd, llm_server, tmp_path, command):
    code, _, err, _ = single(capfd, llm_server, tmp_path, command, "--max-cost", "0.01")
    assert code == 0
    assert ("debate-tui: warning: --max-cost cannot be enforced for openai/fake-model: litellm has no price for it, "
            "so its calls count $0; bound them with --max-tokens N\n") in err


def test_max_cost_for_a_priced_model_gives_no_such_warning():
    from debate_tui.engine.budget import Budget

    assert Budget(max_cost=1.0).unenforceable(["gpt-4o-mini"]) is None
    assert Budget(max_tokens=100).unenforceable(["openai/fake-model"]) is None
