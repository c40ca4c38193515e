"""Shared fixtures: an isolated sessions directory, the fake LLM server, and the demo text."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from pathlib import Path

import pytest

from debate_tui.testing.fake_server import FakeLLMServer

REPO = Path(__file__).resolve().parents[1]
FAKE_KEY = "sk-test-not-a-real-key-0123456789"

STORY = (
    "Tom wanted to learn to swim. He went to the pool every morning. "
    "He went to the pool every morning. At first he was afraid of the water. "
    "After a month he could swim across the pool without stopping."
)


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test writes to the real user data or config directories."""
    monkeypatch.setenv("DEBATE_TUI_SESSIONS_DIR", str(tmp_path / "sessions"))
    monkeypatch.setenv("DEBATE_TUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("DEBATE_TUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DEBATE_TUI_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr("debate_tui.ui.locations._moved", False)  # each test's folders are new: move again
    monkeypatch.delenv("DEBATE_TUI_MODEL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    return tmp_path


@pytest.fixture(scope="session")
def _server() -> FakeLLMServer:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def llm_server(_server: FakeLLMServer) -> FakeLLMServer:
    """The fake OpenAI-compatible server, with rules and records cleared for each test."""
    _server.reset()
    yield _server
    _server.reset()


@pytest.fixture
def story_file(tmp_path: Path) -> Path:
    path = tmp_path / "story.txt"
    path.write_text(STORY)
    return path
