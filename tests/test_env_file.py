"""The working directory's `.env` (issue 29): read once by every command, before litellm is imported, so
`config show` and a run agree on a key; litellm's own search (from its install folder) is off."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.helpers.cli import cli_command, cli_env

KEY = "sk-from-dotenv-0123456789abcdef"


def cli(tmp_path: Path, cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = cli_env(tmp_path)
    for name in ("DOTENV_TEST_KEY", "LITELLM_MODE", "OPENAI_API_KEY"):
        env.pop(name, None)
    return subprocess.run([*cli_command(), *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
                          check=False)


def setup(tmp_path: Path, base_url: str, with_env: bool) -> Path:
    config = tmp_path / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'default_model = "openai/fake-model"\n[models."openai/fake-model"]\n'
                      f'api_base = "{base_url}"\napi_key_env = "DOTENV_TEST_KEY"\n')
    work = tmp_path / "work"
    work.mkdir()
    (work / "story.txt").write_text("Tom swam every day. He liked the water.\n")
    if with_env:
        (work / ".env").write_text(f'# the project\'s keys\nDOTENV_TEST_KEY="{KEY}"\n')
    return work


def test_config_show_and_a_run_agree_on_a_key_from_dot_env(tmp_path, llm_server):
    llm_server.add_rule("Fine.\nScore: 4")
    work = setup(tmp_path, llm_server.base_url, with_env=True)
    shown = cli(tmp_path, work, "config", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    [model] = json.loads(shown.stdout)["models"]
    assert model["key"]["variables"] == ["DOTENV_TEST_KEY"] and model["key"]["set"]
    assert json.loads(shown.stdout)["env_file"] == str(work / ".env")
    run = cli(tmp_path, work, "run", "--protocol", "single", "--text", "story.txt")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["status"] == "completed"
    assert llm_server.requests and all(r.has_auth for r in llm_server.requests)
    assert KEY not in run.stdout + run.stderr + shown.stdout


def test_without_dot_env_both_say_the_key_is_missing(tmp_path, llm_server):
    llm_server.add_rule("Fine.\nScore: 4")
    work = setup(tmp_path, llm_server.base_url, with_env=False)
    (tmp_path / ".env").write_text(f"DOTENV_TEST_KEY={KEY}\n")  # a parent's .env is not the working directory's
    shown = cli(tmp_path, work, "config", "show")
    assert "DOTENV_TEST_KEY (NOT SET)" in shown.stdout and "# .env: none in the working directory" in shown.stdout
    run = cli(tmp_path, work, "run", "--protocol", "single", "--text", "story.txt")
    assert run.returncode != 0 and "DOTENV_TEST_KEY" in run.stderr


def test_the_environment_wins_over_the_file_and_litellm_s_search_is_off(tmp_path, monkeypatch):
    from debate_tui import envfile

    (tmp_path / ".env").write_text("DOTENV_A=from-file\nDOTENV_B=from-file\n")
    monkeypatch.setenv("DOTENV_A", "from-environment")
    monkeypatch.delenv("DOTENV_B", raising=False)
    monkeypatch.delenv("LITELLM_MODE", raising=False)
    monkeypatch.setattr(envfile, "_loaded", False)
    monkeypatch.setattr(envfile, "loaded_from", None)
    assert envfile.load_env_file(tmp_path) is None
    assert os.environ["DOTENV_A"] == "from-environment" and os.environ["DOTENV_B"] == "from-file"
    assert os.environ["LITELLM_MODE"] == "PRODUCTION"  # litellm's import skips its own load_dotenv()
    (tmp_path / ".env").write_text("DOTENV_B=changed\n")
    assert envfile.load_env_file(tmp_path) is None and os.environ["DOTENV_B"] == "from-file"  # once
    monkeypatch.delenv("DOTENV_B")
