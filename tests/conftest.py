"""Shared fixtures: isolated directories, the fake LLM server, the demo text as a file, and results files waiting for a
person. Plain helpers and constants are in tests/helpers (import them from there, never from here)."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from pathlib import Path

import pytest

from debate_tui.testing.fake_server import FakeLLMServer
from tests.helpers import FAKE_KEY, STORY
from tests.helpers.batch import pairs_batch, scored_batch, tie_breaks_batch


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
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's own folder as the working directory, for commands that write beside it (`pytestmark`)."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def story_file(tmp_path: Path) -> Path:
    path = tmp_path / "story.txt"
    path.write_text(STORY)
    return path


# ----- results files waiting for a person: the review queue's tests (batch) and its screen's (ui) ----------


@pytest.fixture
def pairs(capsys, llm_server, tmp_path) -> Path:
    """Results of a ScaleEval batch of three pairs that all wait for a person."""
    return pairs_batch(capsys, llm_server, tmp_path)


@pytest.fixture
def one_pair(capsys, llm_server, tmp_path) -> Path:
    return pairs_batch(capsys, llm_server, tmp_path, count=1)


@pytest.fixture
def tie_breaks(capsys, llm_server, tmp_path) -> Path:
    """Results of a DEBATE batch, two criteria, where the Critic never agrees and a person breaks ties."""
    return tie_breaks_batch(capsys, llm_server, tmp_path)


@pytest.fixture
def scored(capsys, llm_server, tmp_path) -> Path:
    """Results of a completed DEBATE batch: two items, two criteria, every score 4."""
    return scored_batch(capsys, llm_server, tmp_path)
