"""`batch --provider-batch` against the fake server's files and batches endpoints."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

import pytest

from debate_tui.batch.provider_batch import jobs_path
from tests.helpers.batch import model_args, prepared, read_rows, run_batch, write_items
from tests.helpers.scripts import CRITIC, agreeing_debate

FAST = ("--provider-batch", "--poll-interval", "0.05")
AZURE_KEY = "azure-test-not-a-real-key-9876543210"


@dataclass(frozen=True)
class Route:
    """A provider's way to the fake server: its litellm prefix, base URL and environment."""

    provider: str
    deployment: str
    env: tuple[tuple[str, str], ...] = ()

    def base(self, server) -> str:
        return server.base_url if self.provider == "openai" else server.base_url.removesuffix("/v1")


OPENAI = Route("openai", "fake-model")
ROUTES = {
    "openai": OPENAI,
    # Azure's classic API: /openai/files?api-version=..., key in the api-key header.
    "azure": Route("azure", "fake-deploy", (("AZURE_API_KEY", AZURE_KEY), ("AZURE_API_VERSION", "2024-10-21"))),
    # Azure's v1 API: /openai/v1/files, key as a bearer token.
    "azure-v1": Route("azure", "fake-deploy", (("AZURE_API_KEY", AZURE_KEY), ("AZURE_API_VERSION", "v1"))),
}


@pytest.fixture(params=list(ROUTES))
def route(request, monkeypatch) -> Route:
    """Each provider route in turn, its variables set for the test (and the commands it starts)."""
    chosen = ROUTES[request.param]
    for name, value in chosen.env:
        monkeypatch.setenv(name, value)
    return chosen


def single_args(server, *more: str, route: Route = OPENAI, deployment: str | None = None) -> list[str]:
    model = f"{route.provider}/{deployment or route.deployment}"
    return ["--protocol", "single", "--criteria", "coherence", "--model", model,
            "--api-base", route.base(server), *more]


def job_lines(server) -> list:
    return [r for r in server.requests if r.path == "batch:/v1/chat/completions"]


def live_calls(server) -> list:
    return [r for r in server.requests if r.path.endswith("/chat/completions") and not r.path.startswith("batch:")]


def test_single_judge_is_one_job_matched_by_custom_id(capsys, llm_server, tmp_path, route):
    def by_story(request) -> str:  # item i scores 1 + i % 5
        story = int(request["messages"][-1]["content"].split("Story number ")[1][0])
        return f"Reasoning.\nScore: {1 + story % 5}"

    llm_server.add_rule(by_story)
    items = write_items(tmp_path / "in.jsonl", 6)
    out = tmp_path / "out.jsonl"
    code, summary, err = run_batch(capsys, str(items), "--out", str(out), "--no-cache",
                                   *single_args(llm_server, route=route), *FAST)
    assert code == 0, err
    assert {line.model for line in job_lines(llm_server)} == {route.deployment}  # Azure: the deployment's name
    assert summary["provider_batch"]["jobs"] == 1 and summary["provider_batch"]["rounds"] == 1
    assert summary["provider_batch"]["requests_sent"] == 6 == llm_server.batches.submitted
    assert live_calls(llm_server) == []  # nothing went out as a live call
    rows = {row["id"]: row for row in read_rows(out)}
    # The fake writes its output in reverse order: each item still gets the score of its own story.
    assert {i: rows[f"i{i}"]["predicted"] for i in range(6)} == {i: 1 + i % 5 for i in range(6)}
    assert jobs_path(out).exists()


def test_a_debate_runs_round_by_round_one_job_per_round(capsys, llm_server, tmp_path):
    agreeing_debate(llm_server)
    items = write_items(tmp_path / "in.jsonl", 4)
    out = tmp_path / "out.jsonl"
    code, summary, err = run_batch(capsys, str(items), "--out", str(out), "--no-cache",
                                   *model_args(llm_server), *FAST)
    assert code == 0, err
    jobs = json.loads(jobs_path(out).read_text())["jobs"]
    assert sorted(spec["round"] for spec in jobs.values()) == [1, 2]  # scorer round, then critic round
    assert all(len(spec["custom_ids"]) == 4 for spec in jobs.values())
    critic_round = [r for r in job_lines(llm_server) if any(CRITIC in m["content"] for m in r.messages)]
    assert len(critic_round) == 4
    assert [row["predicted"] for row in read_rows(out)] == [4, 4, 4, 4]
    assert "jobs" in err and "round 2" in err


def test_failed_items_are_retried_in_the_next_job(capsys, llm_server, tmp_path, route):
    llm_server.add_rule(fault="500", match="Story number 1\\.", times=1)
    llm_server.add_rule("Reasoning.\nScore: 2")
    items = write_items(tmp_path / "in.jsonl", 3)
    out = tmp_path / "out.jsonl"
    code, summary, err = run_batch(capsys, str(items), "--out", str(out), "--no-cache",
                                   *single_args(llm_server, route=route), *FAST)
    assert code == 0, err
    state = json.loads(jobs_path(out).read_text())
    assert len(state["jobs"]) == 2 and len(state["failed"]) == 1
    retried = next(iter(state["failed"]))
    assert retried.endswith("-0") and retried[:-1] + "1" in llm_server.batches.submitted_ids
    assert summary["provider_batch"]["requests_sent"] == 4
    assert {row["id"]: row["status"] for row in read_rows(out)} == {"i0": "completed", "i1": "completed",
                                                                    "i2": "completed"}


@pytest.mark.parametrize(("deployment", "reply_model"), [
    ("gpt-4o-mini", None),
    ("my-batch-deployment", "gpt-4o-mini-2024-07-18"),  # priced by the model that replied, as Azure names it
])
def test_cost_is_at_the_batch_price(capsys, llm_server, tmp_path, route, deployment, reply_model):
    from debate_tui.llm.litellm_client import load_litellm

    price = load_litellm().get_model_info(f"{route.provider}/{reply_model or deployment}")
    assert price["input_cost_per_token_batches"] < price["input_cost_per_token"]  # litellm has a batch price
    llm_server.reply_model = reply_model
    items = write_items(tmp_path / "in.jsonl", 3)
    code, summary, err = run_batch(capsys, str(items), "--out", str(tmp_path / "out.jsonl"), "--no-cache",
                                   *single_args(llm_server, route=route, deployment=deployment), *FAST)
    assert code == 0, err
    tokens = summary["prompt_tokens"], summary["completion_tokens"]
    assert tokens[0] > 0 and tokens[1] > 0
    batch = tokens[0] * price["input_cost_per_token_batches"] + tokens[1] * price["output_cost_per_token_batches"]
    live = tokens[0] * price["input_cost_per_token"] + tokens[1] * price["output_cost_per_token"]
    assert summary["cost_usd"] == pytest.approx(batch, abs=1e-6)
    assert summary["provider_batch"]["live_cost_usd"] == pytest.approx(live, abs=1e-6)


@pytest.mark.parametrize("route", ["azure", "azure-v1"], indirect=True)
def test_azure_batches_go_to_azures_paths_with_its_endpoint_and_api_version(capsys, llm_server, tmp_path, route):
    items = write_items(tmp_path / "in.jsonl", 2)
    code, _, err = run_batch(capsys, str(items), "--out", str(tmp_path / "out.jsonl"), "--no-cache",
                             *single_args(llm_server, route=route), *FAST)
    assert code == 0, err
    version = dict(route.env)["AZURE_API_VERSION"]
    prefix = "/openai/v1/" if version == "v1" else "/openai/"
    calls = [r for r in llm_server.requests if not r.path.startswith("batch:")]
    assert calls and all(r.path.startswith(prefix) and r.has_auth for r in calls)
    assert llm_server.batches.api_versions == {version}
    assert {job.endpoint for job in llm_server.batches.jobs.values()} == {"/chat/completions"}


def test_the_fake_azure_refuses_a_request_without_key_or_api_version(llm_server):
    root = llm_server.base_url.removesuffix("/v1")

    def status(path: str, headers: dict[str, str]) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(urllib.request.Request(root + path, headers=headers)) as reply:
                return reply.status, reply.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    assert status("/openai/batches?api-version=2024-10-21", {})[0] == 401
    assert status("/openai/batches", {"api-key": AZURE_KEY})[0] == 404
    assert status("/openai/v1/batches", {})[0] == 401
    assert status("/openai/batches?api-version=2024-10-21", {"api-key": AZURE_KEY})[0] == 200


@pytest.mark.parametrize("route", ["azure"], indirect=True)
def test_no_azure_key_reaches_results_jobs_sessions_or_cache(capsys, llm_server, tmp_path, route):
    items = write_items(tmp_path / "in.jsonl", 2)
    out = tmp_path / "out.jsonl"
    code, _, err = run_batch(capsys, str(items), "--out", str(out), "--sessions-dir", str(tmp_path / "s"),
                             *single_args(llm_server, route=route), *FAST)
    assert code == 0, err
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert {out, jobs_path(out)} <= set(written) and any(path.is_relative_to(tmp_path / "s") for path in written)
    assert [path for path in written if AZURE_KEY.encode() in path.read_bytes()] == []
    assert AZURE_KEY not in err


def test_attempts_are_bounded_by_retries(capsys, llm_server, tmp_path):
    llm_server.add_rule(fault="500", match="Story number 1\\.")
    items = write_items(tmp_path / "in.jsonl", 2)
    out = tmp_path / "out.jsonl"
    code, summary, _ = run_batch(capsys, str(items), "--out", str(out), "--no-cache", "--retries", "2",
                                 *single_args(llm_server), *FAST)
    assert code == 3 and summary["failed"] == 1
    assert len(json.loads(jobs_path(out).read_text())["jobs"]) == 2  # the first job and one retry


def test_an_expired_job_has_its_missing_requests_sent_again(capsys, llm_server, tmp_path):
    llm_server.batches.expire_next = 1  # half its lines done, the rest expired
    llm_server.add_rule("Reasoning.\nScore: 5")
    items = write_items(tmp_path / "in.jsonl", 4)
    out = tmp_path / "out.jsonl"
    code, summary, err = run_batch(capsys, str(items), "--out", str(out), "--no-cache",
                                   *single_args(llm_server), *FAST)
    assert code == 0, err
    statuses = sorted(spec["status"] for spec in json.loads(jobs_path(out).read_text())["jobs"].values())
    assert statuses == ["completed", "expired"]
    assert llm_server.batches.submitted == 6  # 4, then the 2 the expired job never ran
    assert sorted(row["predicted"] for row in read_rows(out)) == [5, 5, 5, 5]


def test_a_failed_job_is_sent_again(capsys, llm_server, tmp_path):
    llm_server.batches.fail_next = 1
    items = write_items(tmp_path / "in.jsonl", 3)
    out = tmp_path / "out.jsonl"
    code, summary, err = run_batch(capsys, str(items), "--out", str(out), "--no-cache",
                                   *single_args(llm_server), *FAST)
    assert code == 0, err
    assert sorted(s["status"] for s in json.loads(jobs_path(out).read_text())["jobs"].values()) == [
        "completed", "failed"]


def test_cached_requests_are_not_submitted(capsys, llm_server, tmp_path):
    items = write_items(tmp_path / "in.jsonl", 4)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first, _, _ = run_batch(capsys, str(items), "--out", str(tmp_path / "a.jsonl"), *cache,
                            *single_args(llm_server), *FAST)
    sent = llm_server.batches.submitted
    code, summary, err = run_batch(capsys, str(items), "--out", str(tmp_path / "b.jsonl"), *cache,
                                   *single_args(llm_server), *FAST)
    assert first == code == 0, err
    assert sent == 4 and llm_server.batches.submitted == 4  # the second batch sent nothing
    assert summary["cache_hits"] == 4 and summary["provider_batch"]["jobs"] == 0


def test_provider_batch_refuses_the_demo_model_and_a_router(capsys, tmp_path):
    items = write_items(tmp_path / "in.jsonl", 1)
    code, _, err = run_batch(capsys, str(items), "--out", str(tmp_path / "o.jsonl"), "--provider-batch",
                             "--protocol", "single", "--criteria", "coherence")
    assert code == 2 and "demo model" in err


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_killed_batch_resumes_by_polling_its_job_without_sending_again(llm_server, tmp_path, route):
    llm_server.batches.step_s = 1.0  # the job takes 3 s: the kill lands while it is being polled
    items = write_items(tmp_path / "in.jsonl", 20)
    out = tmp_path / "out.jsonl"
    argv = [sys.executable, "-c", "import sys; from debate_tui.cli import main; sys.exit(main())",
            "batch", str(items), "--out", str(out), "--no-cache",
            "--sessions-dir", str(tmp_path / "s"), *single_args(llm_server, route=route), *FAST]
    env = {**os.environ, "OPENAI_API_KEY": "sk-fake"}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not llm_server.batches.jobs and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert llm_server.batches.submitted == 20 and not out.exists()
    rerun = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert llm_server.batches.submitted == 20  # nothing sent twice
    assert len(set(llm_server.batches.submitted_ids)) == 20
    ids = [row["id"] for row in read_rows(out)]
    assert sorted(ids) == sorted(f"i{i}" for i in range(20))  # none lost, none twice


def test_an_upload_whose_job_id_was_lost_is_found_by_its_file(capsys, llm_server, tmp_path):
    items = write_items(tmp_path / "in.jsonl", 3)
    out = tmp_path / "out.jsonl"
    argv = [str(items), "--out", str(out), "--no-cache", "--sessions-dir", str(tmp_path / "s"),
            *single_args(llm_server), *FAST]
    assert run_batch(capsys, *argv)[0] == 0
    state = json.loads(jobs_path(out).read_text())
    (job_id, spec), = state["jobs"].items()
    # As if killed between creating the job and writing its id: only the upload is on record.
    state["uploads"] = {spec["file_id"]: {k: spec[k] for k in ("target", "round", "custom_ids")}}
    state["jobs"] = {}
    jobs_path(out).write_text(json.dumps(state))
    out.unlink()
    code, summary, err = run_batch(capsys, *argv)
    assert code == 0, err
    assert llm_server.batches.submitted == 3 and len(llm_server.batches.jobs) == 1
    assert list(json.loads(jobs_path(out).read_text())["jobs"]) == [job_id]
    assert len(read_rows(out)) == 3


def test_an_upload_whose_job_creation_failed_is_never_made_a_job_later(capsys, llm_server, tmp_path):
    llm_server.batches.refuse_next = 3  # the create fails 3 times (the openai SDK's own tries): the round fails
    out = tmp_path / "out.jsonl"
    argv = ["--out", str(out), "--no-cache", "--sessions-dir", str(tmp_path / "s"), *single_args(llm_server), *FAST]
    code, summary, err = run_batch(capsys, str(write_items(tmp_path / "in.jsonl", 3)), *argv)
    assert code == 0, err
    assert llm_server.batches.submitted == 3 and len(llm_server.batches.jobs) == 1  # the calls' second upload
    # A rerun with one more item: the first upload's calls were answered under new ids, so it is no job to make.
    code, summary, err = run_batch(capsys, str(write_items(tmp_path / "in.jsonl", 4)), *argv)
    assert code == 0, err
    assert llm_server.batches.submitted == 4 and len(llm_server.batches.jobs) == 2
    assert json.loads(jobs_path(out).read_text())["uploads"] == {}


def test_the_fake_server_speaks_the_batches_api_through_litellm(llm_server):
    import asyncio

    from debate_tui.llm.litellm_client import load_litellm

    litellm = load_litellm()
    where = {"custom_llm_provider": "openai", "api_base": llm_server.base_url, "api_key": "sk-fake"}
    llm_server.batches.step_s = 60  # stays in validating until cancelled
    line = {"custom_id": "a", "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}}

    async def scenario() -> tuple:
        made = await litellm.acreate_file(file=("in.jsonl", (json.dumps(line) + "\n").encode()), purpose="batch",
                                          **where)
        stored = await litellm.afile_retrieve(file_id=made.id, **where)
        job = await litellm.acreate_batch(completion_window="24h", endpoint="/v1/chat/completions",
                                          input_file_id=made.id, **where)
        polled = await litellm.aretrieve_batch(batch_id=job.id, **where)
        cancelled = await litellm.acancel_batch(batch_id=job.id, **where)
        errors = await litellm.afile_content(file_id=cancelled.error_file_id, **where)
        return stored, polled, cancelled, errors

    stored, polled, cancelled, errors = asyncio.run(scenario())
    assert stored.purpose == "batch" and stored.bytes > 0
    assert polled.status == "validating" and cancelled.status == "cancelled"
    assert cancelled.output_file_id is None
    assert json.loads(errors.content)["error"]["code"] == "batch_cancelled"


def test_a_stop_while_polling_ends_the_run_and_the_rerun_collects_the_job(capsys, llm_server, tmp_path):
    import asyncio


    llm_server.batches.step_s = 0.5
    items = write_items(tmp_path / "in.jsonl", 3)
    out = tmp_path / "out.jsonl"
    argv = [str(items), "--out", str(out), "--no-cache", "--sessions-dir", str(tmp_path / "s"),
            *single_args(llm_server), *FAST]
    batch = prepared(*argv)

    async def stop_once_submitted() -> None:
        run = asyncio.ensure_future(batch.run())
        while not llm_server.batches.jobs:
            await asyncio.sleep(0.02)
        batch.stop("interrupted (Ctrl+C)")
        await asyncio.wait_for(run, 5)  # not held until the job ends

    asyncio.run(stop_once_submitted())
    assert batch.summary()["cancelled"] == 3
    assert not out.exists() or read_rows(out) == []
    code, summary, err = run_batch(capsys, *argv)
    assert code == 0, err
    assert llm_server.batches.submitted == 3 and len(read_rows(out)) == 3


def test_chateval_simultaneous_talk_puts_each_rounds_parallel_calls_in_one_job(capsys, llm_server, tmp_path):
    llm_server.add_rule("Reasoning about the text.\nScore: 4")
    items = write_items(tmp_path / "in.jsonl", 3)
    out = tmp_path / "out.jsonl"
    live = run_batch(capsys, str(items), "--out", str(tmp_path / "live.jsonl"), "--no-cache",
                     "--protocol", "chateval", "--option", "strategy=simultaneous-talk", "--criteria", "coherence",
                     "--model", "openai/fake-model", "--api-base", llm_server.base_url)
    calls_live = live[1]["calls"]
    code, summary, err = run_batch(capsys, str(items), "--out", str(out), "--no-cache",
                                   "--protocol", "chateval", "--option", "strategy=simultaneous-talk",
                                   "--criteria", "coherence", "--model", "openai/fake-model",
                                   "--api-base", llm_server.base_url, *FAST)
    assert live[0] == code == 0, err
    jobs = json.loads(jobs_path(out).read_text())["jobs"].values()
    assert sum(len(spec["custom_ids"]) for spec in jobs) == calls_live == summary["calls"]
    # Every job holds one round's calls of all three items: the referees' parallel calls wait for each other.
    assert all(len(spec["custom_ids"]) % 3 == 0 and len(spec["custom_ids"]) > 3 for spec in jobs)
    assert sorted(r["predicted"] for r in read_rows(out)) == sorted(r["predicted"]
                                                                    for r in read_rows(tmp_path / "live.jsonl"))


def test_an_unreadable_jobs_file_is_named_before_any_call(capsys, llm_server, tmp_path):
    items = write_items(tmp_path / "in.jsonl", 1)
    out = tmp_path / "out.jsonl"
    jobs_path(out).write_text("{not json")
    code, _, err = run_batch(capsys, str(items), "--out", str(out), *single_args(llm_server), *FAST)
    assert code == 2 and "out.jsonl.jobs.json: unreadable" in err
    assert llm_server.requests == []
