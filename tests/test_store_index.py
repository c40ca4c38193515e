"""The sessions listing's index: only new or changed files are read, and the files always win over it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from debate_tui import store as store_module
from debate_tui.config import load_config
from debate_tui.domain import Session
from debate_tui.store import SummaryIndex
from tests.helpers.sessions import save


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The session files the listing parsed."""
    seen: list[Path] = []
    real = store_module.read_session

    def counting(path: Path) -> Session:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(store_module, "read_session", counting)
    return seen


def test_a_second_listing_reads_no_file_and_gives_the_same_rows(tmp_path, reads):
    store = load_config().session_store(tmp_path / "s")
    for number in range(5):
        save(store, f"s{number}")
    first = store.list()
    assert len(reads) == 5
    reads.clear()
    assert store.list() == first
    assert reads == []


def test_a_changed_new_or_deleted_file_shows_at_once(tmp_path, reads):
    store = load_config().session_store(tmp_path / "s")
    save(store, "a", status="running")
    save(store, "b")
    store.list()
    reads.clear()
    save(store, "a", status="completed")
    save(store, "c")
    store.path_for("b").unlink()
    rows = {row.id: row for row in store.list()}
    assert set(rows) == {"a", "c"} and rows["a"].status == "completed"
    assert sorted(path.name for path in reads) == ["a.json", "c.json"]


def test_a_corrupt_file_is_listed_with_its_problem_and_read_again_only_once_it_changes(tmp_path, reads):
    store = load_config().session_store(tmp_path / "s")
    save(store, "good")
    bad = store.root / "bad.json"
    bad.write_text("{ not json")
    assert "corrupt" in next(row for row in store.list() if row.id == "bad").problem
    reads.clear()
    assert "corrupt" in next(row for row in store.list() if row.id == "bad").problem
    assert reads == []
    save(store, "bad")
    assert next(row for row in store.list() if row.id == "bad").problem is None


def test_a_damaged_or_unwritable_index_is_never_trusted_over_the_files(tmp_path, reads):
    store = load_config().session_store(tmp_path / "s")
    save(store, "a")
    store.list()
    index = SummaryIndex(store.root, store.index_dir)
    index.path.write_text('{"version": 1, "entries": {"a.json": {"stamp": 3, "row": null}}}')
    assert [row.id for row in store.list()] == ["a"]
    index.path.write_text("not json")
    assert [row.id for row in store.list()] == ["a"]
    index.path.unlink()
    index.path.mkdir()  # the index cannot be written: listing still works
    assert [row.id for row in store.list()] == ["a"]


def test_the_index_lives_in_the_cache_directory_not_beside_the_sessions(tmp_path, isolated_dirs):
    store = load_config().session_store(tmp_path / "s")
    save(store, "a")
    store.list()
    assert sorted(os.listdir(store.root)) == ["a.json"]
    index = SummaryIndex(store.root, store.index_dir)
    assert index.path.parent == isolated_dirs / "cache" / "session-index"
    assert set(json.loads(index.path.read_text())["entries"]) == {"a.json"}


def test_the_newest_few_are_listed_without_reading_the_others_or_forgetting_them(tmp_path, reads):
    store = load_config().session_store(tmp_path / "s")
    paths = [save(store, f"2026010{number}-120000-abcd") for number in range(1, 6)]
    newest = store.list(newest=2)
    assert [row.id for row in newest] == ["20260105-120000-abcd", "20260104-120000-abcd"]
    assert sorted(reads) == sorted(paths[-2:]), "only the newest two files were read"
    reads.clear()
    assert [row.id for row in store.list()] == [f"2026010{number}-120000-abcd" for number in range(5, 0, -1)]
    assert sorted(reads) == sorted(paths[:3]), "the index kept the two, and the other three were read once"
