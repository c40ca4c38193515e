"""The first real call of a process: litellm is imported off the loop, and the run says what it waits for.

On the screen's loop, the prompt's measurement imported litellm (or waited there for the warm-up thread's
import lock): the clock stuck at 00:00 and keys unanswered for 9-15 s (issue 46)."""

from __future__ import annotations

import threading

from debate_tui.engine.events import TurnStarted, Waiting
from debate_tui.llm import tokens
from debate_tui.llm.litellm_client import load_litellm
from tests.helpers.sessions import make_session, run_with_events


async def test_litellm_is_loaded_in_a_thread_before_the_first_measurement_and_a_notice_says_so(
        llm_server, monkeypatch) -> None:
    real, loaded, threads = load_litellm(), [], []

    def not_yet_imported():
        threads.append(threading.get_ident())
        loaded.append(True)
        return real

    monkeypatch.setattr(tokens, "litellm_loaded", lambda: bool(loaded))
    monkeypatch.setattr(tokens, "load_litellm", lambda: real if loaded else not_yet_imported())
    tokens.context_window.cache_clear()  # a window measured by an earlier test would need no import
    llm_server.add_rule("Reasoning about the text.\nScore: 4")
    loop_thread = threading.get_ident()
    session, events = await run_with_events(make_session("single", llm_server))
    assert session.status == "completed"
    assert threads and loop_thread not in threads, "the import ran on the loop's thread"
    notices = [i for i, e in enumerate(events) if isinstance(e, Waiting) and "model library" in e.what]
    started = [i for i, e in enumerate(events) if isinstance(e, TurnStarted)]
    assert len(notices) == 1 and notices[0] < started[0], "said once, before the first turn starts"


async def test_the_demo_model_loads_nothing_and_says_nothing(monkeypatch) -> None:
    monkeypatch.setattr(tokens, "litellm_loaded", lambda: False)
    session, events = await run_with_events(make_session("single"), client=None)
    assert session.status == "completed"
    assert not any(isinstance(e, Waiting) for e in events)
