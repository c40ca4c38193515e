"""Scaling out: a litellm Router over several deployments, and a proxy (an OpenAI-compatible URL)."""

from __future__ import annotations

import json
import time

import pytest

from debate_tui.llm.litellm_router import RouterConfigError, load_config
from debate_tui.testing.fake_server import FakeLLMServer
from tests.helpers import FAKE_KEY
from tests.helpers.batch import read_rows, run_batch, write_items
from tests.helpers.scripts import agreeing_debate


def router_yaml(tmp_path, *servers: FakeLLMServer, **settings) -> str:
    deployments = "".join(
        f"  - model_name: judge\n    litellm_params:\n      model: openai/fake-model\n"
        f"      api_base: {server.base_url}\n      api_key: os.environ/OPENAI_API_KEY\n      rpm: 6000\n"
        for server in servers)
    extra = "".join(f"  {key}: {json.dumps(value)}\n" for key, value in settings.items())
    path = tmp_path / "router.yaml"
    path.write_text(f"model_list:\n{deployments}router_settings:\n  routing_strategy: simple-shuffle\n{extra}"
                    "litellm_settings:\n  drop_params: true\n")
    return str(path)


def test_the_router_spreads_a_batch_over_its_deployments(capsys, llm_server, tmp_path):
    with FakeLLMServer() as second:
        for server in (llm_server, second):
            agreeing_debate(server)
        items, out = write_items(tmp_path / "in.jsonl", 20), tmp_path / "out.jsonl"
        router = router_yaml(tmp_path, llm_server, second)
        code, summary, err = run_batch(capsys, str(items), "--out", str(out), "--router", router,
                                     "--model", "judge", "--protocol", "debate", "--criteria", "coherence")
        assert code == 0 and summary["done"] == 20 and summary["calls"] == 40, err
        assert llm_server.calls + second.calls == 40 and llm_server.calls > 0 and second.calls > 0
        assert all(r.model == "fake-model" and r.has_auth for r in llm_server.requests + second.requests)
        assert all(r["predicted"] == 4 for r in read_rows(out))
    text = out.read_text() + "".join(p.read_text() for p in (tmp_path / "sessions").glob("*.json"))
    assert FAKE_KEY not in text


def test_a_failing_deployment_falls_back_to_another_group(capsys, llm_server, tmp_path):
    with FakeLLMServer() as backup:
        llm_server.add_rule(fault=500)
        agreeing_debate(backup)
        path = tmp_path / "router.json"
        path.write_text(json.dumps({
            "model_list": [
                {"model_name": "judge",
                 "litellm_params": {"model": "openai/fake-model", "api_base": llm_server.base_url,
                                    "api_key": "os.environ/OPENAI_API_KEY"}},
                {"model_name": "backup", "litellm_params": {"model": "openai/fake-judge", "api_base": backup.base_url,
                                                            "api_key": "os.environ/OPENAI_API_KEY"}},
            ],
            "router_settings": {"fallbacks": [{"judge": ["backup"]}], "num_retries": 0},
        }))
        items = write_items(tmp_path / "in.jsonl", 3)
        code, summary, _ = run_batch(capsys, str(items), "--out", str(tmp_path / "o.jsonl"),
                                     "--router", str(path), "--model", "judge", "--criteria", "coherence")
        assert code == 0 and summary["done"] == 3
        assert backup.calls == 6 and all(r.model == "fake-judge" for r in backup.requests)


def test_a_proxy_is_just_an_openai_compatible_url(capsys, llm_server, tmp_path):
    """`litellm --config ...` serves /v1/chat/completions; the fake server stands in for it."""
    agreeing_debate(llm_server)
    code, summary, _ = run_batch(capsys, str(write_items(tmp_path / "in.jsonl", 4)), "--out", str(tmp_path / "o.jsonl"),
                                 "--model", "litellm_proxy/judge", "--api-base", llm_server.base_url,
                                 "--criteria", "coherence")
    assert code == 0 and summary["done"] == 4 and llm_server.calls == 8
    assert {r.model for r in llm_server.requests} == {"judge"}


@pytest.mark.parametrize(("text", "suffix", "message"), [
    ("model_list: []\n", ".yaml", "needs a non-empty 'model_list'"),
    ("{not json", ".json", "not valid json"),
    ('model_list = [{model_name = "x", litellm_params = {model = "openai/x"}}]\nrouter_settings = 3\n', ".toml",
     "'router_settings' must be a table"),
])
def test_bad_router_files_are_named(tmp_path, text, suffix, message):
    path = tmp_path / f"router{suffix}"
    path.write_text(text)
    with pytest.raises(RouterConfigError, match=message):
        load_config(path)


def test_router_flags_are_checked_before_any_call(capsys, llm_server, tmp_path):
    items = write_items(tmp_path / "in.jsonl", 2)
    config = router_yaml(tmp_path, llm_server)
    out = str(tmp_path / "o.jsonl")
    code, _, err = run_batch(capsys, str(items), "--out", out, "--router", config, "--model", "other")
    assert code == 2 and "not a model_name of the router; it has: judge" in err
    code, _, err = run_batch(capsys, str(items), "--out", out, "--router", config, "--model", "judge",
                             "--api-base", llm_server.base_url)
    assert code == 2 and "exclude each other" in err
    assert llm_server.calls == 0


def deployments_toml(isolated_dirs, *entries: str) -> None:
    config = isolated_dirs / "config"
    config.mkdir(exist_ok=True)
    (config / "config.toml").write_text("".join(f"[[deployments.judge]]\n{entry}\n" for entry in entries))


def deployment(server: FakeLLMServer, **limits: int) -> str:
    extra = "".join(f"{key} = {value}\n" for key, value in limits.items())
    return f'model = "openai/fake-model"\napi_base = "{server.base_url}"\napi_key_env = "OPENAI_API_KEY"\n{extra}'


def test_config_deployments_spread_the_load_over_three_servers(capsys, llm_server, tmp_path, isolated_dirs):
    with FakeLLMServer() as second, FakeLLMServer() as third:
        servers = (llm_server, second, third)
        for server in servers:
            server.add_rule("Reasoning.\nScore: 4")
        deployments_toml(isolated_dirs, *(deployment(s) for s in servers))
        items = write_items(tmp_path / "in.jsonl", 30)
        code, summary, err = run_batch(capsys, str(items), "--out", str(tmp_path / "o.jsonl"), "--model", "judge",
                                       "--protocol", "single", "--criteria", "coherence", "--concurrency", "6")
        assert code == 0, err
        assert summary["done"] == 30 and sum(s.calls for s in servers) == 30
        assert all(s.calls >= 3 for s in servers)  # shuffled over all three, not stuck on one
        assert all(r.has_auth and r.model == "fake-model" for s in servers for r in s.requests)


def test_config_deployments_keep_each_rpm(capsys, llm_server, tmp_path, isolated_dirs):
    with FakeLLMServer() as roomy:
        for server in (llm_server, roomy):
            server.add_rule("Reasoning.\nScore: 4")
        deployments_toml(isolated_dirs, deployment(llm_server, rpm=3), deployment(roomy, rpm=1000))
        items = write_items(tmp_path / "in.jsonl", 20)
        first_minute = int(time.time() // 60)
        code, summary, err = run_batch(capsys, str(items), "--out", str(tmp_path / "o.jsonl"), "--model", "judge",
                                       "--protocol", "single", "--criteria", "coherence", "--concurrency", "4")
        minutes = int(time.time() // 60) - first_minute + 1  # rpm counts per clock minute: a slow run spans two
        assert code == 0, err
        assert summary["done"] == 20 and llm_server.calls <= 3 * minutes and roomy.calls >= 20 - 3 * minutes


def test_a_failing_config_deployment_is_cooled_down(capsys, llm_server, tmp_path, isolated_dirs):
    with FakeLLMServer() as healthy:
        llm_server.add_rule(fault=500)
        healthy.add_rule("Reasoning.\nScore: 4")
        deployments_toml(isolated_dirs, deployment(llm_server), deployment(healthy))
        items = write_items(tmp_path / "in.jsonl", 20)
        code, summary, err = run_batch(capsys, str(items), "--out", str(tmp_path / "o.jsonl"), "--model", "judge",
                                       "--protocol", "single", "--criteria", "coherence", "--concurrency", "2")
        assert code == 0, err
        assert summary["done"] == 20 and healthy.calls == 20
        assert llm_server.calls <= 4  # tried, failed, then left alone while the other takes the rest


LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 10)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)) + \
    "model_list:\n  - model_name: judge\n    litellm_params: {model: openai/fake-model, extra: *i}\n"


def test_a_router_yaml_with_aliases_is_refused_before_it_expands(capsys, llm_server, tmp_path):
    """Nine nested aliases (the billion laughs, 565 bytes): 1.86 GB and 50 s in litellm's copy of the model list."""
    router = tmp_path / "router.yaml"
    router.write_text(LAUGHS)
    code, _, err = run_batch(capsys, str(write_items(tmp_path / "in.jsonl", 2)), "--out", str(tmp_path / "o.jsonl"),
                             "--router", str(router), "--model", "judge")
    assert code == 2 and err.count("\n") == 1 and llm_server.calls == 0
    assert f"{router}: YAML aliases are not accepted (*a on line 2): write each deployment out" in err


def test_litellm_refusing_a_router_names_the_exception_not_only_its_message():
    """A MemoryError's message is empty: the refusal read 'litellm refused the configuration ()'."""
    from debate_tui.llm.demo import DemoClient
    from debate_tui.llm.litellm_router import RouterClient

    with pytest.raises(RouterConfigError, match=r"^r\.yaml: litellm refused the configuration \(KeyError: "):
        RouterClient.from_settings({"model_list": [{"model_name": "judge"}]}, fallback=DemoClient(), origin="r.yaml")
