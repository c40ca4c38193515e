"""One place assembles a run (debate_tui.assembly): `run`, `batch` and the TUI get the same retry policy and budget
from the same limits, and the client and the batch backend are chosen there."""

from __future__ import annotations

import pytest

from debate_tui.assembly import single
from debate_tui.assembly.batch import BatchRequest, assemble_batch
from debate_tui.assembly.clients import model_client, routed_client
from debate_tui.batch.items import open_items
from debate_tui.batch.processes import ProcessBatch
from debate_tui.batch.provider_batch import ProviderBatchRun
from debate_tui.batch.results import ResultsFile
from debate_tui.batch.runner import BatchRun
from debate_tui.config import Config, Limits
from debate_tui.engine.control import RunControl
from debate_tui.inputs import InputError
from debate_tui.llm.litellm_router import RouterClient
from debate_tui.llm.router import ModelRouter
from tests.helpers.batch import prepared, write_items
from tests.helpers.cli import run_cli
from tests.helpers.sessions import make_session
from tests.helpers.ui import app_with, wait_until

LIMITS = ("--retries", "2", "--max-tokens", "90000")


@pytest.fixture
def assembled(monkeypatch) -> list[tuple[int, int | None, bool]]:
    """(attempts, token budget, interactive) of every runner the assembly builds, which still runs."""
    made: list[tuple[int, int | None, bool]] = []
    real = single.runner_for

    def recording(session, client, **options):
        made.append((options["retry"].attempts, options["budget"].max_tokens, options["interactive"]))
        return real(session, client, **options)

    monkeypatch.setattr(single, "runner_for", recording)
    return made


def test_run_and_the_tui_assemble_their_run_in_the_one_place(capsys, story_file, tmp_path, assembled):
    code, summary, err = run_cli(capsys, "run", "--text", str(story_file), "--demo", "--protocol", "single",
                                 *LIMITS, "--session", str(tmp_path / "s.json"))
    assert code == 0 and summary["status"] == "completed", err
    assert assembled == [(2, 90000, False)]


async def test_the_tui_assembles_its_run_in_the_one_place(assembled):
    from debate_tui.config import load_config

    limits = Limits(retries=2, max_tokens=90000)
    app = app_with(make_session("single"))
    app.launch.config = load_config().model_copy(update={"limits": limits})
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: assembled, what="the run assembled")
    assert assembled == [(2, 90000, True)]


def test_a_batch_takes_the_same_retry_policy_and_budget_from_the_same_limits(tmp_path):
    path = write_items(tmp_path / "in.jsonl", 2)
    batch = prepared(str(path), "--out", str(tmp_path / "out.jsonl"), "--demo", "--processes", "1", *LIMITS)
    assert type(batch) is BatchRun
    assert (batch.settings.retry.attempts, batch.settings.budget.max_tokens) == (2, 90000)
    assert isinstance(batch.meter.inner, ModelRouter) and batch.meter.inner.timeout_s == Limits().timeout


def test_the_budget_says_when_a_cost_cap_cannot_hold():
    said: list[str] = []
    single.budget_of(Limits(max_cost=0.5), ["openai/nobody-prices-this"], said.append)
    single.budget_of(Limits(), ["openai/nobody-prices-this"], said.append)
    assert len(said) == 1 and "--max-cost" in said[0]


def test_assemble_run_hands_the_limits_to_the_runner():
    runner = single.assemble_run(make_session("single"), model_client(Limits()), Limits(retries=3, retry_delay=0.5,
                                 max_cost=2.0), emit=lambda event: None, save=lambda session: None,
                                 control=RunControl())
    assert (runner.retry.attempts, runner.retry.base_delay_s, runner.budget.max_cost) == (3, 0.5, 2.0)
    assert not runner.interactive


def _batch(tmp_path, request: BatchRequest, processes: int | None = 1, session=None):
    items, _ = open_items(str(write_items(tmp_path / "in.jsonl", 2)))
    return assemble_batch(request, Config(), session or make_session("single"), items,
                          ResultsFile(tmp_path / "out.jsonl"), processes=processes,
                          rebuild=lambda concurrency, items, out: None)  # type: ignore[arg-type,return-value]


def test_the_backend_is_chosen_in_the_assembly(tmp_path):
    assert type(_batch(tmp_path, BatchRequest(seed=0))) is BatchRun
    assert type(_batch(tmp_path, BatchRequest(seed=0), processes=None)) is ProcessBatch
    session = make_session("single", model="openai/gpt-4o-mini")
    assert type(_batch(tmp_path, BatchRequest(seed=0, provider_batch=True), session=session)) is ProviderBatchRun
    with pytest.raises(InputError, match="--provider-batch needs a provider's model"):
        _batch(tmp_path, BatchRequest(seed=0, provider_batch=True))


def test_a_router_file_makes_the_client_and_must_know_the_model(tmp_path):
    router = tmp_path / "router.yaml"
    router.write_text("model_list:\n  - model_name: judge\n    litellm_params:\n      model: openai/fake-model\n"
                      "      api_base: http://127.0.0.1:9/v1\n")
    assert isinstance(routed_client(Config(), router, "judge").inner, RouterClient)  # type: ignore[attr-defined]
    with pytest.raises(InputError, match="is not a model_name of the router; it has: judge"):
        routed_client(Config(), router, "other")
    assert isinstance(routed_client(Config(), None, None), ModelRouter)
