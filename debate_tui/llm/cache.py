"""A response cache on disk, so that an identical rerun costs nothing.

Rule: only deterministic requests are cached, i.e. those with `temperature`
explicitly 0 (and no `n` above 1). A request at another temperature, or with
none (the provider's default is usually 1), is a *sample*: serving it from a
cache would make independent samples identical, e.g. two speakers asked the
same question, so it always goes to the model. Batch runs default to
temperature 0 for that reason. A request for `logprobs` is not cached either:
the cache keeps text and usage only, and a hit without the log-probabilities
would silently lose the single judge's probability-weighted score.

The key is a SHA-256 of the canonical JSON of (model, messages, parameters),
leaving out what does not change the answer (timeouts, retry counts,
metadata) and whatever could hold a secret (api_key, headers). The value is
only the reply text and its original usage; no key or prompt is stored in
clear. A hit costs zero calls, zero tokens and zero dollars (it is what *this*
run spent) and is counted in `hits`.

Storage is one SQLite file (stdlib, WAL mode): small writes are fast, several
processes may share it, and a crash cannot leave half an entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from debate_tui.domain import Usage
from debate_tui.endpoints import NO_KEY
from debate_tui.inputs import InputError
from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback, LLMClient

DB_NAME = "responses.sqlite3"
IGNORED_PARAMS = frozenset({
    "api_key", "extra_headers", "headers", "timeout", "request_timeout", "num_retries", "max_retries",
    "metadata", "stream", "stream_options", "user", "mock_response", "api_key_env", NO_KEY,
})
"""Parameters that never change a reply, or may carry a credential: kept out of the key."""


def cacheable(request: ChatRequest) -> bool:
    """Deterministic requests only: temperature explicitly 0 and a single choice; none that wants log-probabilities."""
    params = request.params
    temperature = params.get("temperature")
    return (temperature is not None and float(temperature) == 0.0 and int(params.get("n", 1) or 1) == 1
            and not params.get("logprobs"))


def cache_key(request: ChatRequest) -> str:
    """SHA-256 over model, messages and the parameters that shape the answer."""
    params = {k: v for k, v in request.params.items() if k not in IGNORED_PARAMS}
    canonical = json.dumps(
        {"model": request.model, "messages": request.messages, "params": params},
        sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass
class CachedCompletion(Completion):
    """A completion served from the cache: its usage is zero; `original` is what the first call cost."""

    original: Usage = field(default_factory=Usage)


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    stores: int = 0


LOCK_WAIT_S = 10.0
"""How long opening or using the cache waits for another process that holds its lock, before saying so."""
REMEDY = "pass --no-cache, or --cache-dir DIR (DEBATE_TUI_CACHE_DIR) for another cache"


class CacheError(InputError):
    """The cache cannot be used (locked past LOCK_WAIT_S, unwritable); the message is one line with the remedy."""


class ResponseCache:
    """The SQLite table behind CachingClient: get and put by key.

    A file that is not a database (corrupt, or something else under its name) is set aside, renamed to
    `responses.sqlite3.corrupt-<time>` (said in `notes`), and a new one started: a cache only saves calls.
    A cache another process keeps locked is waited for `LOCK_WAIT_S`, then refused in one line (CacheError).
    A store that fails once the run is under way (a full disk) turns the cache off and says why in `problem`:
    the calls go on, uncached, and the command ends non-zero with that line.
    """

    def __init__(self, directory: Path, lock_wait_s: float | None = None):
        """`directory`: the configuration's `cache_dir`, read at the edge; `lock_wait_s`: LOCK_WAIT_S unless given."""
        self.directory = directory
        self.path = self.directory / DB_NAME
        self.lock_wait_s = LOCK_WAIT_S if lock_wait_s is None else lock_wait_s
        self.notes: list[str] = []
        self.problem: str | None = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"cannot write the response cache in {directory}: {exc.strerror or exc}; "
                             f"{REMEDY}") from None
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as exc:
            if not _corrupt(exc):
                raise self._refused(exc) from None
            aside = self.path.with_name(f"{DB_NAME}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
            self.notes.append(f"the response cache {self.path} was not a database ({exc}); set aside as "
                              f"{aside.name}, a new one started")
            try:
                self._db = self._open()
            except sqlite3.DatabaseError as again:
                raise self._refused(again) from None

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self.lock_wait_s, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS responses "
                "(key TEXT PRIMARY KEY, model TEXT, text TEXT, usage TEXT, created_at REAL)"
            )
            db.execute("SELECT key, model, text, usage, created_at FROM responses LIMIT 0")
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _refused(self, exc: sqlite3.Error) -> CacheError:
        if "locked" in str(exc) or "busy" in str(exc):
            return CacheError(f"the response cache {self.path} is locked by another process (waited "
                              f"{self.lock_wait_s:g} s); wait for it to finish, or {REMEDY}")
        return CacheError(f"cannot use the response cache {self.path}: {exc}: {REMEDY}")

    def get(self, key: str) -> tuple[str, Usage] | None:
        if self.problem is not None:
            return None
        try:
            row = self._db.execute("SELECT text, usage FROM responses WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            self._give_up(exc)
            return None
        if row is None:
            return None
        return row[0], Usage.model_validate_json(row[1])

    def put(self, key: str, model: str, text: str, usage: Usage) -> None:
        if self.problem is not None:
            return
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, text, usage, created_at) VALUES (?, ?, ?, ?, ?)",
                (key, model, text, usage.model_dump_json(), time.time()),
            )
        except sqlite3.Error as exc:
            self._give_up(exc)

    def _give_up(self, exc: sqlite3.Error) -> None:
        """A cache that failed mid-run is off from here on; `problem` says why and what to do."""
        full = "full" in str(exc)
        self.problem = str(self._refused(exc)) if not full else (
            f"cannot write the response cache {self.path}: {exc}: free some space there, or {REMEDY}")

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self._db.close()


class CachingClient:
    """Wraps any LLMClient: deterministic requests are answered from disk when seen before."""

    def __init__(self, inner: LLMClient, cache: ResponseCache):
        self.inner = inner
        self.cache = cache
        self.stats = CacheStats()

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        if not cacheable(request):
            return await self.inner.complete(request, on_delta)
        key = cache_key(request)
        found = self.cache.get(key)
        if found is not None:
            self.stats.hits += 1
            text, original = found
            if on_delta is not None and text:
                on_delta(text)
            return CachedCompletion(text=text, usage=Usage(), original=original)
        self.stats.misses += 1
        completion = await self.inner.complete(request, on_delta)
        if completion.text and completion.finish_reason == "stop":  # an empty or unfinished reply is no answer
            self.cache.put(key, request.model, completion.text, completion.usage)
            self.stats.stores += 1
        return completion


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite says the file is damaged or not a database at all (as opposed to locked or unwritable)."""
    return any(words in str(exc) for words in ("not a database", "malformed", "file is encrypted"))


def with_cache(inner: LLMClient, directory: Path, enabled: bool = True) -> LLMClient:
    """`inner` behind a cache, or unchanged when caching is off."""
    return CachingClient(inner, ResponseCache(directory)) if enabled else inner

