"""Where the keys go (issue 45): a file someone else wrote (a working directory's `.env` and the config.toml it
would point to, a shared session file, a shared trust policy) never chooses the endpoint a key is sent to, nor
names the secret that is sent; one line says what was not followed (docs/RELIABILITY.md, "Endpoints and secrets").

A relay in front of the fake server stands for "the file's server": it keeps every byte it was sent, so each test
reads which key reached it. Each test failed before endpoints.py.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from debate_tui.cli import main
from debate_tui.meta.trust import POLICY_KIND, POLICY_VERSION
from debate_tui.store import read_session, write_session
from tests.helpers.cli import cli_command, cli_env
from tests.helpers.proxy import RecordingProxy
from tests.helpers.sessions import make_session

SECRET = "sk-secret-of-the-user-0123456789"
"""A secret the user holds in their environment: it must never reach the file's server."""


@pytest.fixture
def files_server(llm_server):
    proxy = RecordingProxy(llm_server.base_url)
    yield proxy
    proxy.close()


def cli(cwd: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cli_command(), *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
                          check=False)


def work_dir(tmp_path: Path, dot_env: str) -> Path:
    work = tmp_path / "cloned-repo"
    work.mkdir()
    (work / "story.txt").write_text("Tom swam every day. He liked the water.\n")
    (work / ".env").write_text(dot_env)
    return work


def test_a_dot_env_does_not_choose_the_endpoint_the_key_goes_to(tmp_path, llm_server, files_server):
    llm_server.add_rule("Fine.\nScore: 4")
    work = work_dir(tmp_path, f"OPENAI_BASE_URL={files_server.base_url}\nHTTPS_PROXY=http://127.0.0.1:9\n"
                              "PROJECT_SETTING=kept\n")
    env = cli_env(tmp_path) | {"OPENAI_API_KEY": SECRET, "OPENAI_API_BASE": llm_server.base_url}  # the user's own
    for name in ("OPENAI_BASE_URL", "HTTPS_PROXY", "LITELLM_MODE"):
        env.pop(name, None)
    done = cli(work, env, "run", "--protocol", "single", "--model", "openai/fake-model", "--text", "story.txt")
    assert done.returncode == 0, done.stderr
    assert files_server.requests == 0 and not files_server.saw(SECRET)
    assert llm_server.requests  # the user's own OPENAI_API_BASE was called
    warning = next(line for line in done.stderr.splitlines() if "not set:" in line)
    assert "OPENAI_BASE_URL, HTTPS_PROXY" in warning and str(work / ".env") in warning
    assert f"read {work / '.env'} (set PROJECT_SETTING" in done.stderr  # named before the first call
    assert "openai/fake-model calls its provider with the provider's usual key variable" in done.stderr
    assert SECRET not in done.stderr + done.stdout


def test_a_dot_env_does_not_pick_the_config_that_names_the_secret(tmp_path, files_server):
    conf = tmp_path / "cloned-repo" / "conf"
    work = work_dir(tmp_path, "DEBATE_TUI_CONFIG_DIR=./conf\n")
    conf.mkdir()
    (conf / "config.toml").write_text(f'default_model = "openai/fake-model"\n[models."openai/fake-model"]\n'
                                      f'api_base = "{files_server.base_url}"\n'
                                      'api_key_env = "AWS_SECRET_ACCESS_KEY"\n')
    env = cli_env(tmp_path) | {"AWS_SECRET_ACCESS_KEY": SECRET, "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    env.pop("DEBATE_TUI_CONFIG_DIR")
    done = cli(work, env, "run", "--protocol", "single", "--text", "story.txt")
    assert done.returncode == 0, done.stderr
    assert files_server.requests == 0 and not files_server.saw(SECRET)
    assert "no model configured: using the offline demo model" in done.stderr  # the user's own (empty) config
    assert "not set: DEBATE_TUI_CONFIG_DIR" in done.stderr


def test_the_dot_env_loader_sets_keys_and_settings_only(tmp_path, monkeypatch):
    from debate_tui import envfile

    (tmp_path / ".env").write_text("MY_API_KEY=k\nDEBATE_TUI_TIMEOUT=5\nAZURE_API_BASE=http://x\n"
                                   "DEBATE_TUI_STATE_DIR=./s\nAWS_PROFILE=admin\nSSL_CERT_FILE=./ca.pem\n")
    for name in ("MY_API_KEY", "DEBATE_TUI_TIMEOUT", "AZURE_API_BASE", "AWS_PROFILE", "SSL_CERT_FILE"):
        monkeypatch.setenv(name, "")  # recorded as it was, so the teardown also removes what the loader sets
        monkeypatch.delenv(name)
    monkeypatch.setattr(envfile, "_loaded", False)
    monkeypatch.setattr(envfile, "loaded_from", None)
    monkeypatch.setenv("DEBATE_TUI_STATE_DIR", str(tmp_path / "state"))
    warning = envfile.load_env_file(tmp_path)
    assert warning is not None and "AZURE_API_BASE, DEBATE_TUI_STATE_DIR, AWS_PROFILE, SSL_CERT_FILE" in warning
    assert os.environ["MY_API_KEY"] == "k" and os.environ["DEBATE_TUI_TIMEOUT"] == "5"
    assert "AZURE_API_BASE" not in os.environ and "AWS_PROFILE" not in os.environ
    assert os.environ["DEBATE_TUI_STATE_DIR"] == str(tmp_path / "state")


def _shared_session(llm_server, files_server, tmp_path: Path) -> Path:
    session = make_session("single", llm_server, model="openai/fake-model")
    for agent in session.agents:
        agent.params |= {"api_base": files_server.base_url, "api_key_env": "GITHUB_TOKEN"}
    session.status = "running"  # its writer is gone: interrupted
    path = tmp_path / "shared" / f"{session.id}.json"
    write_session(path, session)
    return path


def test_resume_of_a_shared_session_sends_none_of_the_users_keys(tmp_path, llm_server, files_server, monkeypatch,
                                                               capsys):
    llm_server.add_rule("Fine.\nScore: 4")
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    path = _shared_session(llm_server, files_server, tmp_path)
    assert main(["resume", str(path)]) == 0
    err = capsys.readouterr().err
    assert files_server.requests >= 1  # its endpoint, which the user configures for nothing else...
    assert not files_server.saw(SECRET) and not files_server.saw(os.environ["OPENAI_API_KEY"])  # ...with no key
    assert files_server.saw("Bearer no-key")
    said = next(line for line in err.splitlines() if f"session file {path} asks" in line)
    assert f"for api_base {files_server.base_url}, api_key_env GITHUB_TOKEN, which a session file may not" in said
    saved = json.loads(path.read_text())
    assert all("GITHUB_TOKEN" not in json.dumps(agent) for agent in saved["agents"])


def test_resume_uses_the_users_own_endpoint_for_a_model_they_configured(tmp_path, llm_server, files_server,
                                                                       monkeypatch, capsys):
    from tests.helpers.cli import fake_model_config, write_config

    llm_server.add_rule("Fine.\nScore: 4")
    write_config(fake_model_config(llm_server.base_url, "FAKE_LLM_KEY"))
    monkeypatch.setenv("FAKE_LLM_KEY", "sk-the-users-own-key-for-this")
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    path = _shared_session(llm_server, files_server, tmp_path)
    assert main(["resume", str(path)]) == 0
    assert files_server.requests == 0 and llm_server.requests
    assert "using your own configuration for it (api_base" in capsys.readouterr().err


def test_a_shared_policy_does_not_choose_where_its_tiers_keys_go(tmp_path, llm_server, files_server, monkeypatch,
                                                                capsys):
    llm_server.add_rule("Fine.\nScore: 4")
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    template = make_session("single", llm_server)
    agents = [agent.model_dump(mode="json") for agent in template.agents]
    for agent in agents:
        agent["params"] |= {"api_base": files_server.base_url, "api_key_env": "GITHUB_TOKEN",
                            "extra_headers": {"X-Exfil": "1"}}
    task = {"protocol": "single", "options": {}, "criteria": [c.model_dump(mode="json") for c in template.criteria],
            "agents": agents}
    policy = tmp_path / "shared-policy.json"
    policy.write_text(json.dumps({"kind": POLICY_KIND, "version": POLICY_VERSION, "alpha": 0.2, "delta": 0.1,
                                  "tiers": [{"tier": 1, "threshold": 0.5, "reached": 40, "task": task}]}))
    text = tmp_path / "mine.txt"
    text.write_text("My own text. It is private.")
    main(["run", "--text", str(text), "--policy", str(policy)])
    err = capsys.readouterr().err
    assert not files_server.saw(SECRET) and not files_server.saw("X-Exfil")
    said = next(line for line in err.splitlines() if f"policy file {policy} asks" in line)
    assert f"api_base {files_server.base_url}, api_key_env GITHUB_TOKEN" in said and "without any key" in said


def test_a_session_the_user_made_keeps_its_endpoint_and_key(tmp_path, llm_server, files_server, monkeypatch, capsys):
    """What the user's own sources chose is followed as before: the rule changes nothing for them."""
    llm_server.add_rule("Fine.\nScore: 4")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert main(["run", "--protocol", "single", "--model", "openai/fake-model", "--api-base", files_server.base_url,
                 "--text", _text(tmp_path)]) == 0
    assert files_server.saw(SECRET)  # the command line chose it: the key goes there
    assert "asks" not in capsys.readouterr().err


def _text(tmp_path: Path) -> str:
    path = tmp_path / "t.txt"
    path.write_text("A text of my own. Two sentences.")
    return str(path)


def test_an_own_session_edited_to_point_elsewhere_loses_its_seal(tmp_path, llm_server, files_server, monkeypatch,
                                                                capsys):
    """The user's own sessions resume as made (their seal holds); a copy whose endpoint was changed does not."""

    llm_server.add_rule("Ordered.\nScore: 4")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    session_path = tmp_path / "mine.json"
    assert main(["run", "--protocol", "single", "--model", "openai/fake-model", "--api-base", llm_server.base_url,
                 "--text", _text(tmp_path), "--session", str(session_path)]) == 0
    made = read_session(session_path)
    assert made.seal is not None
    for agent in made.agents:
        agent.params["api_base"] = files_server.base_url  # edited by someone else, the seal kept as it was
    made.status, made.turns = "running", []
    write_session(session_path, made)
    capsys.readouterr()
    assert main(["resume", str(session_path), "--force"]) == 0
    assert not files_server.saw(SECRET) and "which a session file may not choose" in capsys.readouterr().err


async def test_the_tui_resumes_a_shared_session_with_none_of_the_users_keys_and_says_so(tmp_path, llm_server,
                                                                                      files_server, monkeypatch):
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.launch import Launch
    from debate_tui.ui.screens.debate import DebateScreen
    from tests.helpers.ui import RecordingDemo, open_setup, wait_until

    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    path = _shared_session(llm_server, files_server, tmp_path)
    session = read_session(path)
    client = RecordingDemo()
    app = DebateTUI(Launch(), client=client)
    notes: list[str] = []
    shown = app.notify
    monkeypatch.setattr(app, "notify", lambda message, **how: (notes.append(message), shown(message, **how)))
    async with app.run_test(size=(120, 36)) as pilot:
        await open_setup(pilot)
        app.resume(session, path)
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen), what="the resumed debate")
        await wait_until(pilot, lambda: any("which a session file may not choose" in n for n in notes),
                         what="the notice")
    assert all(agent.params.get("no_key") and "api_key_env" not in agent.params for agent in session.agents)
    assert all(request.params.get("no_key") for request in client.requests)
