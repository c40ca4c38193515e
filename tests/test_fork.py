"""A fork is a copy cut at N plus a change, resumed: for every protocol, cut before the first turn, in the middle
of a round and after the last turn, the copied turns are replayed (no call for them) and the rest is asked."""

from __future__ import annotations

import asyncio
import json

import pytest

from debate_tui.domain import ForkOrigin, HumanAction, Session
from debate_tui.factory import runner_for
from debate_tui.forking import ForkChange, ForkError, check_not_running, completed_turns, cut_turns, fork_session
from debate_tui.llm.base import ChatRequest, Completion
from debate_tui.llm.demo import DemoClient
from debate_tui.report.html import render_html
from debate_tui.report.markdown import render
from debate_tui.store import SessionFileError, SessionStore, read_session
from debate_tui.ui.screens.sessions import Row
from tests.helpers.inert import ALLOWED_TAGS, Page
from tests.helpers.scripts import MARKED, PLAIN, QUESTION
from tests.helpers.sessions import make_session

ON_THE_DEMO = {
    "debate": {},
    "chateval": {},
    "single": {},
    "mateval": {"criteria": "REP,LINC,DCONT,ILC,FER", "seed": 1},
    "scaleeval": {"criteria": "helpfulness", "text": PLAIN, "text_b": MARKED, "source": QUESTION, "seed": 0},
}
DETERMINISTIC = ("debate", "chateval", "single", "mateval")
"""Protocols whose demo agents answer a prompt the same whatever was asked before (the demo's ScaleEval speakers
count how often they were asked the initial prompt, so a fork's speakers answer as a new run's would)."""
REMARK = "Mind the repeated sentence."


class Recording:
    """The demo model, keeping every request it was asked: what a fork asks, and with which prompt."""

    def __init__(self) -> None:
        self.demo = DemoClient()
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest, on_delta=None) -> Completion:
        self.requests.append(request)
        return await self.demo.complete(request, on_delta)


def played(session: Session, client=None) -> Session:
    return asyncio.run(runner_for(session, client or DemoClient()).run())


def original(protocol: str) -> Session:
    return played(make_session(protocol, **ON_THE_DEMO[protocol]))


def cuts(session: Session) -> list[int]:
    """Every cut: before the first turn, after each one (mid-round ones among them) and after the last."""
    return list(range(completed_turns(session) + 1))


def what_was_said(session: Session) -> list[tuple]:
    return [(t.agent, t.round, t.criterion, t.content) for t in session.turns]


@pytest.mark.parametrize("protocol", list(ON_THE_DEMO))
def test_each_protocol_resumes_a_fork_from_any_cut_asking_only_the_turns_after_it(protocol):
    first = original(protocol)
    assert first.status == "completed" and completed_turns(first) >= 1
    for at in cuts(first):
        client = Recording()
        fork = played(fork_session(first, at, ForkChange()), client)
        assert fork.status == "completed", (at, fork.error)
        assert fork.forked_from == ForkOrigin(session=first.id, turns=at)
        assert [t.model_dump() for t in fork.turns[:at]] == [t.model_dump() for t in first.turns[:at]]
        assert len(client.requests) == fork.usage.calls == len(fork.turns) - at  # none for the copied turns
        if protocol in DETERMINISTIC:  # nothing changed: the same debate to the same end
            assert what_was_said(fork) == what_was_said(first)
            assert fork.outcome.scores == first.outcome.scores and fork.outcome.verdict == first.outcome.verdict
    last = played(fork_session(first, completed_turns(first), ForkChange()), client := Recording())
    assert client.requests == [] and last.outcome.scores == first.outcome.scores


@pytest.mark.parametrize("protocol", list(ON_THE_DEMO))
def test_a_remark_reaches_every_prompt_after_the_cut_as_the_tuis_inject_does(protocol):
    first = original(protocol)
    at = completed_turns(first) // 2  # mid-debate; for the single judge's one turn, before it
    client = Recording()
    fork = played(fork_session(first, at, ForkChange(remark=REMARK), who="ann"), client)
    assert fork.status == "completed"
    assert [(a.kind, a.after_turn, a.text, a.who) for a in fork.actions] == [("inject", at, REMARK, "ann")]
    assert client.requests and all(REMARK in r.messages[-1]["content"] for r in client.requests)


def test_a_debate_forked_at_turn_2_with_a_remark_scores_on_its_own():
    first = original("debate")
    client = Recording()
    fork = played(fork_session(first, 2, ForkChange(remark=REMARK)), client)
    assert (completed_turns(first), first.usage.calls, first.outcome.scores) == (4, 4, {"coherence": 4.0})
    assert fork.turns[:2] == first.turns[:2] and len(client.requests) == fork.usage.calls == 2
    assert fork.outcome.scores == {"coherence": 4.0}


def test_another_model_answers_from_the_cut_on_by_role_by_name_or_for_all():
    first = original("debate")
    first.agents[1].params = {"max_tokens": 99, "api_base": "http://127.0.0.1:8", "api_key_env": "OLD_KEY"}
    settings = {"openai/other": {"api_key_env": "OTHER_KEY", "context_window": 4096}}
    fork = fork_session(first, 1, ForkChange(agent_models={"critic": "openai/other"}, api_base="http://127.0.0.1:9",
                                             model_settings=settings))
    assert [(a.name, a.model) for a in fork.agents] == [("Scorer", "demo/offline"), ("Critic", "openai/other")]
    critic = fork.agents[1]  # its reply cap stays; the old server and key variable go, the new model's come
    assert critic.params == {"max_tokens": 99, "api_base": "http://127.0.0.1:9", "api_key_env": "OTHER_KEY"}
    assert critic.context_window == 4096
    everyone = fork_session(first, 1, ForkChange(model="openai/all", agent_models={"Scorer": "openai/one"}))
    assert {a.name: a.model for a in everyone.agents} == {"Scorer": "openai/one", "Critic": "openai/all"}
    assert [a.model for a in first.agents] == ["demo/offline", "demo/offline"]  # the original is untouched
    with pytest.raises(ForkError, match="no agent or role named 'judge'"):
        fork_session(first, 1, ForkChange(agent_models={"judge": "x"}))
    with pytest.raises(ForkError, match="holds"):
        fork_session(first, 1, ForkChange(model="a\nb"))


def test_the_cut_must_lie_within_the_completed_turns_and_the_original_must_not_run():
    first = original("debate")
    for at in (-1, 5):
        with pytest.raises(ForkError, match=r"has 4 completed turns; fork at 0\.\.4"):
            fork_session(first, at, ForkChange())
    first.status = "running"
    with pytest.raises(ForkError, match="saved as running"):
        check_not_running(first, locked=False)
    with pytest.raises(ForkError, match="lock is held"):
        check_not_running(first, locked=True)


def test_failed_tries_before_the_cut_are_copied_and_not_counted():
    first = original("debate")
    failed = first.turns[1].model_copy(update={"error": "timeout", "content": "half"})
    turns = [first.turns[0], failed, *first.turns[1:]]
    assert [t.error for t in cut_turns(turns, 2)] == [None, "timeout", None]
    assert cut_turns(turns, 0) == []


def test_what_a_person_did_after_the_cut_is_not_copied():
    first = original("debate")
    first.actions = [HumanAction(kind="inject", after_turn=1, text="early"),
                     HumanAction(kind="inject", after_turn=2, text="at the cut"),
                     HumanAction(kind="override", after_turn=4, criterion="coherence", value=1)]
    fork = fork_session(first, 2, ForkChange(remark="instead"))
    assert [(a.after_turn, a.text) for a in fork.actions] == [(1, "early"), (2, "instead")]


def test_a_fork_of_a_fork_keeps_its_own_origin_through_save_and_load_and_its_reports_say_it(tmp_path):
    store = SessionStore(tmp_path)
    first = original("debate")
    fork = played(fork_session(first, 2, ForkChange(remark=REMARK)))
    again = played(fork_session(fork, 3, ForkChange()))
    assert again.status == "completed" and again.turns[:3] == fork.turns[:3]
    assert [a.text for a in again.actions] == [REMARK]  # the remark made before turn 3 is history now
    store.save(again)
    loaded = store.load(again.id)
    assert loaded.forked_from == ForkOrigin(session=fork.id, turns=3)
    assert f"**Forked from:** session {fork.id}, at turn 3 (its first 3 completed turns copied" in render(loaded)
    assert f"<dt>Forked from</dt><dd>session {fork.id}, at turn 3" in render_html(loaded)
    assert "Forked from" not in render(first)
    assert store.load(store.save(first).stem).forked_from is None


def test_the_sessions_list_knows_a_fork_from_its_file_and_from_its_index(tmp_path):
    store = SessionStore(tmp_path / "sessions", index_dir=tmp_path / "index")
    first = original("debate")
    fork = fork_session(first, 2, ForkChange())
    store.save(first), store.save(fork)
    for _ in range(2):  # read from the files, then from the index
        rows = {row.id: row for row in store.list()}
        assert rows[fork.id].forked_from == (first.id, 2) and rows[first.id].forked_from is None
        assert Row(rows[fork.id], example=False).kind == "fork" and Row(rows[first.id], example=False).kind == "live"
    assert (tmp_path / "index").is_dir()


def test_an_origin_written_by_someone_else_is_refused_or_shown_inert(tmp_path):
    fork = fork_session(original("debate"), 1, ForkChange())
    data = fork.model_dump(mode="json")
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps({**data, "forked_from": {"session": "x\n# Forged section", "turns": 1}}))
    with pytest.raises(SessionFileError, match="not a valid session file"):
        read_session(forged)
    forged.write_text(json.dumps({**data, "forked_from": {"session": "x", "turns": -1}}))
    with pytest.raises(SessionFileError):
        read_session(forged)
    forged.write_text(json.dumps({**data, "forked_from": {"session": '<script>alert(1)</script>', "turns": 1}}))
    shown = read_session(forged)
    page = Page(render_html(shown))
    assert set(page.tags) <= ALLOWED_TAGS and "<script>alert(1)</script>" in page.words
    assert "\\<script>alert(1)\\</script>" in render(shown)  # Markdown: escaped, no tag can start
