"""The response cache: which requests it keeps, what a hit costs, and that it survives a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from debate_tui.config import load_config
from debate_tui.domain import Usage
from debate_tui.llm.base import ChatRequest, Completion
from debate_tui.llm.cache import CachedCompletion, CachingClient, ResponseCache, cache_key, cacheable
from debate_tui.llm.router import ModelRouter
from tests.helpers import FAKE_KEY

MESSAGES = [{"role": "user", "content": "Rate this text. Score: N"}]


class CountingClient:
    """Answers with a numbered reply and counts calls."""

    def __init__(self, text: str = "Score: 4"):
        self.calls = 0
        self.text = text

    async def complete(self, request, on_delta=None) -> Completion:
        self.calls += 1
        return Completion(text=self.text, usage=Usage(calls=1, prompt_tokens=10, completion_tokens=3, cost_usd=0.01))


def request(**params) -> ChatRequest:
    return ChatRequest(model="openai/fake-model", messages=list(MESSAGES), params=params)


def test_only_temperature_zero_single_choice_requests_are_cacheable():
    assert cacheable(request(temperature=0))
    assert cacheable(request(temperature=0.0, n=1))
    assert not cacheable(request())  # the provider's default temperature samples
    assert not cacheable(request(temperature=0.7))
    assert not cacheable(request(temperature=0, n=3))


def test_key_ignores_secrets_and_timeouts_but_not_what_shapes_the_answer():
    base = cache_key(request(temperature=0))
    assert cache_key(request(temperature=0, api_key=FAKE_KEY, timeout=5, num_retries=2)) == base
    assert cache_key(request(temperature=0, max_tokens=50)) != base
    assert cache_key(ChatRequest("openai/other", list(MESSAGES), {"temperature": 0})) != base
    assert cache_key(ChatRequest("openai/fake-model", [{"role": "user", "content": "x"}], {"temperature": 0})) != base


def test_default_directory_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("DEBATE_TUI_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert load_config().cache_dir == tmp_path / "elsewhere"  # the front ends hand it to ResponseCache


async def test_a_hit_costs_nothing_and_remembers_the_original_usage(tmp_path):
    inner = CountingClient()
    client = CachingClient(inner, ResponseCache(tmp_path))
    first = await client.complete(request(temperature=0))
    second = await client.complete(request(temperature=0))
    assert inner.calls == 1
    assert first.usage.calls == 1 and not isinstance(first, CachedCompletion)
    assert isinstance(second, CachedCompletion) and second.text == "Score: 4"
    assert second.usage == Usage()
    assert second.original.prompt_tokens == 10 and second.original.cost_usd == pytest.approx(0.01)
    assert (client.stats.hits, client.stats.misses, client.stats.stores) == (1, 1, 1)


async def test_samples_are_never_served_from_the_cache(tmp_path):
    inner = CountingClient()
    client = CachingClient(inner, ResponseCache(tmp_path))
    for _ in range(3):
        await client.complete(request(temperature=1))
    assert inner.calls == 3 and client.stats.hits == 0 and len(client.cache) == 0


async def test_empty_replies_are_not_kept(tmp_path):
    inner = CountingClient(text="")
    client = CachingClient(inner, ResponseCache(tmp_path))
    await client.complete(request(temperature=0))
    await client.complete(request(temperature=0))
    assert inner.calls == 2


async def test_the_cache_survives_a_restart_and_a_hit_still_streams(tmp_path):
    await CachingClient(CountingClient(), ResponseCache(tmp_path)).complete(request(temperature=0))
    inner = CountingClient()
    deltas: list[str] = []
    reply = await CachingClient(inner, ResponseCache(tmp_path)).complete(request(temperature=0), deltas.append)
    assert inner.calls == 0 and deltas == [reply.text] == ["Score: 4"]


async def test_no_secret_or_prompt_is_written_to_disk(tmp_path):
    client = CachingClient(CountingClient(), ResponseCache(tmp_path))
    await client.complete(request(temperature=0, api_key=FAKE_KEY))
    client.cache.close()
    stored = b"".join(p.read_bytes() for p in Path(tmp_path).iterdir() if p.is_file())
    assert FAKE_KEY.encode() not in stored
    assert b"Rate this text" not in stored


async def test_real_path_rerun_makes_zero_server_calls(llm_server, tmp_path):
    llm_server.add_rule("Fine.\nScore: 5")
    params = {"api_base": llm_server.base_url, "temperature": 0}
    client = CachingClient(ModelRouter(), ResponseCache(tmp_path))
    first = await client.complete(ChatRequest("openai/fake-model", list(MESSAGES), params))
    calls = llm_server.calls
    again = await CachingClient(ModelRouter(), ResponseCache(tmp_path)).complete(
        ChatRequest("openai/fake-model", list(MESSAGES), params))
    assert calls == 1 and llm_server.calls == 1
    assert again.text == first.text == "Fine.\nScore: 5"
