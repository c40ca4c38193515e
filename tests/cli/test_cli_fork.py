"""`debate-tui fork SESSION --at N`: the `run` JSON line plus `forked_from`, its exit codes, and one line for a fork
that cannot be made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debate_tui.cli import main
from debate_tui.domain import ForkOrigin
from debate_tui.safefile import SessionLock
from debate_tui.store import read_session
from tests.helpers.cli import run_cli
from tests.helpers.scripts import CRITIC

REMARK = "Mind the repeated sentence."


def run_original(capsys, story_file, *flags: str) -> dict:
    code, summary, _ = run_cli(capsys, "run", "--text", str(story_file), *(flags or ("--demo",)))
    assert code == 0 and summary is not None
    return summary


def test_a_demo_debate_forked_at_turn_2_with_a_remark(capsys, story_file, isolated_dirs):
    first = run_original(capsys, story_file)
    code, fork, err = run_cli(capsys, "fork", first["session"], "--at", "2", "--inject", REMARK)
    assert code == 0
    assert fork["forked_from"] == {"session": first["session"], "turns": 2}
    assert set(fork) >= set(first)  # the run line, plus forked_from
    assert (first["calls"], fork["calls"]) == (4, 2)  # turns 1-2 copied, no call for them
    assert fork["scores"] == {"coherence": 4.0} and fork["status"] == "completed"
    assert err.count("(replayed from the session)") == 2
    saved = read_session(Path(fork["session_path"]))
    assert saved.forked_from == ForkOrigin(session=first["session"], turns=2)
    assert [(a.kind, a.after_turn, a.text, a.who) for a in saved.actions] == [("inject", 2, REMARK, "cli")]
    assert saved.turns[:2] == read_session(Path(first["session_path"])).turns[:2]
    assert f"**Forked from:** session {first['session']}, at turn 2" in Path(fork["report"]).read_text()


def test_sessions_lists_a_fork(capsys, story_file):
    first = run_original(capsys, story_file)
    _, fork, _ = run_cli(capsys, "fork", first["session"], "--at", "1")
    code, listing, _ = run_cli(capsys, "sessions", "--json", "--no-examples")
    assert code == 0
    origins = {row["id"]: row["forked_from"] for row in listing["sessions"]}
    assert origins == {first["session"]: None, fork["session"]: {"session": first["session"], "turns": 1}}
    assert main(["sessions", "--no-examples"]) == 0
    head, *rows = capsys.readouterr().out.splitlines()
    assert head.split() == ["ID", "DATE", "PROTOCOL", "STATUS", "MODEL", "CRITERIA", "RESULT", "TEXT"]
    assert [row.endswith(f"fork of {first['session']} at turn 1") for row in rows] == [True, False]


def test_on_the_fake_server_the_remark_reaches_the_turns_after_the_cut_and_only_they_are_asked(capsys, story_file,
                                                                                              llm_server):
    llm_server.add_rule("The score ignores the repeated sentence; it is too high.", match=CRITIC, times=1)
    llm_server.add_rule("NO ISSUE", match=CRITIC)
    llm_server.add_rule("Clear and ordered.\nScore: 4")
    first = run_original(capsys, story_file, "--model", "openai/fake-debater", "--api-base", llm_server.base_url)
    assert (first["calls"], first["scores"]) == (4, {"coherence": 4.0})

    llm_server.reset()
    llm_server.add_rule("NO ISSUE", match=CRITIC)
    llm_server.add_rule("The moderator is right: a sentence is repeated.\nScore: 2", match="repeated sentence")
    llm_server.add_rule("Clear and ordered.\nScore: 4")
    code, fork, _ = run_cli(capsys, "fork", first["session"], "--at", "2", "--inject", REMARK)
    assert code == 0 and fork["forked_from"] == {"session": first["session"], "turns": 2}
    assert (fork["calls"], llm_server.calls, fork["scores"]) == (2, 2, {"coherence": 2.0})
    assert all(REMARK in request.messages[-1]["content"] for request in llm_server.requests)
    assert [r.model for r in llm_server.requests] == ["fake-debater", "fake-debater"]


def test_another_model_from_the_cut_on_and_a_failure_exits_as_run_does(capsys, story_file, llm_server, monkeypatch):
    first = run_original(capsys, story_file)
    llm_server.add_rule("NO ISSUE", match=CRITIC)
    code, fork, _ = run_cli(capsys, "fork", first["session"], "--at", "3", "--agent-model", "critic=openai/fake-critic",
                            "--api-base", llm_server.base_url)
    assert code == 0 and fork["calls"] == llm_server.calls == 1
    assert [r.model for r in llm_server.requests] == ["fake-critic"]
    monkeypatch.setenv("DEBATE_TUI_RETRY_DELAY", "0.01")
    llm_server.reset()
    llm_server.add_rule(fault="500")
    code, failed, _ = run_cli(capsys, "fork", first["session"], "--at", "0", "--model", "openai/fake-model",
                              "--api-base", llm_server.base_url, "--retries", "2")
    assert code == 3 and failed["status"] == "failed" and failed["forked_from"]["turns"] == 0


def test_a_fork_of_a_fork(capsys, story_file):
    first = run_original(capsys, story_file)
    _, fork, _ = run_cli(capsys, "fork", first["session"], "--at", "2", "--inject", REMARK)
    code, again, _ = run_cli(capsys, "fork", fork["session_path"], "--at", "3")
    assert code == 0 and again["forked_from"] == {"session": fork["session"], "turns": 3}
    assert again["calls"] == 1
    assert [a.text for a in read_session(Path(again["session_path"])).actions] == [REMARK]


@pytest.mark.parametrize("at", ["-1", "5"])
def test_a_cut_outside_the_turns_is_one_line_and_exit_2(capsys, story_file, at):
    first = run_original(capsys, story_file)
    code, out, err = run_cli(capsys, "fork", first["session"], "--at", at)
    assert code == 2 and out is None
    assert err == f"debate-tui: error: --at {at}: session {first['session']} has 4 completed turns; fork at 0..4\n"


def test_an_original_still_running_is_refused(capsys, story_file):
    first = run_original(capsys, story_file)
    path = Path(first["session_path"])
    with SessionLock(path, first["session"]):
        code, out, err = run_cli(capsys, "fork", first["session"], "--at", "1")
    assert code == 2 and out is None and "is running (its lock is held)" in err and len(err.splitlines()) == 1
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "status": "running"}))
    code, out, err = run_cli(capsys, "fork", first["session"], "--at", "1")
    assert code == 2 and out is None and "is saved as running" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("flags, message", [
    (("--agent-model", "judge=x"), "--agent-model: no agent or role named 'judge'"),
    (("--agent-model", "critic"), "--agent-model: expected NAME=MODEL"),
    (("--model", "openai/x", "--api-base", "http://user:key@127.0.0.1:9/v1"), "--api-base (API base): the URL holds"),
])
def test_a_change_that_cannot_be_made_is_one_line_and_exit_2(capsys, story_file, flags, message):
    first = run_original(capsys, story_file)
    code, out, err = run_cli(capsys, "fork", first["session"], "--at", "1", *flags)
    assert code == 2 and out is None and message in err and len(err.splitlines()) == 1


def test_a_missing_original_and_an_existing_output_are_refused(capsys, story_file, tmp_path):
    code, _, err = run_cli(capsys, "fork", "20990101-000000-abcdef", "--at", "0")
    assert code == 2 and "no such session file" in err
    first = run_original(capsys, story_file)
    taken = tmp_path / "taken.json"
    taken.write_text("{}")
    code, _, err = run_cli(capsys, "fork", first["session"], "--at", "1", "--session", str(taken))
    assert code == 2 and "--session" in err and taken.read_text() == "{}"
    code, fork, _ = run_cli(capsys, "fork", first["session"], "--at", "1", "--session", str(taken), "--force",
                            "--report", str(tmp_path / "fork.html"))
    assert code == 0 and read_session(taken).forked_from is not None
    assert "<dt>Forked from</dt>" in (tmp_path / "fork.html").read_text()
