"""`debate-tui models`: the configured models listed, and checked with one tiny call each."""

from __future__ import annotations

import socket

import pytest

from debate_tui.cli import main
from debate_tui.cli.models import probe
from debate_tui.config import load_config
from debate_tui.llm.base import LLMError
from tests.helpers import FAKE_KEY
from tests.helpers.cli import fake_model_config, write_config


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def models(capsys, *argv: str) -> tuple[int, str]:
    code = main(["models", *argv])
    return code, capsys.readouterr().out


def test_lists_each_model_with_its_users_api_base_and_key_variable(capsys, monkeypatch):
    write_config(fake_model_config("http://127.0.0.1:8000/v1")
                 + '[roles]\ncritic = "anthropic/claude-3-5-haiku-latest"\n')
    monkeypatch.setenv("FAKE_LLM_KEY", FAKE_KEY)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, out = models(capsys)
    assert code == 0 and FAKE_KEY not in out
    assert "openai/fake-model  (used by: default)" in out
    assert "  api_base  http://127.0.0.1:8000/v1" in out
    assert '  key       FAKE_LLM_KEY (set), api_key_env of models."openai/fake-model"' in out
    assert "anthropic/claude-3-5-haiku-latest  (used by: critic)" in out
    assert "  key       ANTHROPIC_API_KEY (not set), the provider's usual variable" in out
    assert "check" not in out


def test_without_a_configured_model_it_says_how_to_configure_one(capsys):
    code, out = models(capsys)
    assert code == 0
    assert "offline demo model" in out and 'default_model = "gpt-4o-mini"' in out and "export OPENAI_API_KEY" in out
    assert models(capsys, "--check")[0] == 3


def test_check_ok_against_the_fake_server(capsys, monkeypatch, llm_server):
    write_config(fake_model_config(llm_server.base_url))
    monkeypatch.setenv("FAKE_LLM_KEY", FAKE_KEY)
    code, out = models(capsys, "--check", "--timeout", "10")
    assert code == 0
    assert "  check     ok: answered in" in out and "1 of 1 models answered" in out
    [request] = llm_server.requests
    assert request.model == "fake-model" and request.body["max_tokens"] == 5 and request.has_auth


def test_check_reports_a_closed_port_as_unreachable(capsys, monkeypatch):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    write_config(fake_model_config(url))
    monkeypatch.setenv("FAKE_LLM_KEY", FAKE_KEY)
    code, out = models(capsys, "--check", "--timeout", "10")
    assert code == 3
    assert "  check     unreachable: " in out
    assert f"  fix       check the api_base URL {url}: is the server running?" in out
    assert "0 of 1 models answered" in out


def test_check_reports_a_missing_key_variable_as_an_auth_error(capsys, monkeypatch, llm_server):
    write_config(fake_model_config(llm_server.base_url, key_env="MY_SERVER_KEY"))
    monkeypatch.delenv("MY_SERVER_KEY", raising=False)
    code, out = models(capsys, "--check")
    assert code == 3 and llm_server.calls == 0
    assert "  check     auth error: environment variable MY_SERVER_KEY named in the config is not set" in out
    assert "  fix       set MY_SERVER_KEY (export MY_SERVER_KEY=...)" in out


def test_check_names_the_provider_variable_when_litellm_finds_no_key(capsys, monkeypatch, llm_server):
    write_config(f'default_model = "openai/fake-model"\n'
                 f'[models."openai/fake-model"]\napi_base = "{llm_server.base_url}"\n')
    monkeypatch.delenv("OPENAI_API_KEY")
    code, out = models(capsys, "--check", "--timeout", "10")
    assert code == 3 and "  check     auth error: " in out
    assert "  fix       set OPENAI_API_KEY (export OPENAI_API_KEY=...)" in out


class FailingRouter:
    """Stands in for the model router: every call fails with the given error."""

    def __init__(self, error: LLMError):
        self.error = error

    async def complete(self, request, on_delta=None):
        raise self.error


@pytest.mark.parametrize(("kind", "status", "fix"), [
    ("not_found", "model not found", "check the model name and its provider prefix; litellm model list at https://"),
    ("bad_request", "rejected", "check the model name"),
    ("auth", "auth error", "the key in OPENAI_API_KEY was refused"),
    ("rate_limit", "rate limited", "wait, or check the plan's limits"),
    ("connection", "unreachable", "check the network connection and the provider's status"),
    ("server", "server error", "try again later"),
    ("reply", "not a model's reply", "check the provider: is it an OpenAI-compatible endpoint"),
])
async def test_each_failure_comes_with_its_fix(kind, status, fix):
    check = await probe(FailingRouter(LLMError(kind, "it failed")), load_config(), "gpt-4o-mini", 5.0)
    assert check.status == status and check.detail == "it failed" and fix in check.fix


def test_check_of_a_web_page_instead_of_an_api_says_so(capsys, monkeypatch, llm_server):
    write_config(fake_model_config(llm_server.base_url))
    monkeypatch.setenv("FAKE_LLM_KEY", FAKE_KEY)
    llm_server.add_rule(fault="html")
    code, out = models(capsys, "--check", "--timeout", "10")
    assert code != 0 and "not a model's reply: the server did not answer in OpenAI's format" in out
    assert f"check the api_base URL {llm_server.base_url}: is it an OpenAI-compatible endpoint" in out
