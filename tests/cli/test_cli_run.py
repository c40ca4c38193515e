"""The headless CLI contract: JSON summary line, exit codes, reports, sessions, resume and export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debate_tui.cli import main
from debate_tui.config import load_config
from debate_tui.store import SessionFileError, read_session
from tests.helpers import FAKE_KEY
from tests.helpers.cli import fake_model_config, run_cli, write_config

SUMMARY_KEYS = {"session", "protocol", "status", "scores", "verdict", "calls",
                "prompt_tokens", "completion_tokens", "cost_usd"}


def test_demo_run_completes_offline_with_json_line_and_report(capsys, story_file, tmp_path):
    report = tmp_path / "report.md"
    code, summary, err = run_cli(capsys, "run", "--protocol", "debate", "--demo", "--text", str(story_file),
                                 "--report", str(report))
    assert code == 0
    assert set(summary) >= SUMMARY_KEYS
    assert summary["status"] == "completed" and summary["protocol"] == "debate"
    assert summary["scores"]["coherence"] == 4  # the demo scorer lowers 5 -> 4 for the repeated sentence
    assert summary["calls"] == 4 and summary["cost_usd"] == 0
    text = report.read_text()
    for section in ("# Evaluation report: DEBATE", "## Result", "## How the verdict was reached",
                    "NO ISSUE after 2 iterations", "## Usage", "## Transcript", "offline demo model"):
        assert section in text
    assert "--- Scorer (scorer), round 0, coherence ---" in err
    session = read_session(Path(summary["session_path"]))
    assert len(session.turns) == 4 and session.status == "completed"


def test_default_report_is_written_beside_the_session(capsys, story_file, isolated_dirs):
    code, summary, _ = run_cli(capsys, "run", "--demo", "--text", str(story_file))
    assert code == 0
    session_path = Path(summary["session_path"])
    assert session_path.parent == isolated_dirs / "sessions"
    assert session_path.with_suffix(".md").exists()


def test_without_a_model_the_demo_is_used_and_said(capsys, story_file):
    code, summary, err = run_cli(capsys, "run", "--text", str(story_file))
    assert code == 0 and "offline demo model" in err


def test_against_an_openai_compatible_server(capsys, story_file, llm_server):
    llm_server.add_rule("NO ISSUE", match="Criticise the score")
    llm_server.add_rule("Clear and ordered.\nScore: 4")
    code, summary, _ = run_cli(capsys, "run", "--text", str(story_file), "--model", "openai/fake-model",
                               "--api-base", llm_server.base_url, "--criteria", "coherence,relevance")
    assert code == 0
    assert summary["scores"] == {"coherence": 4, "relevance": 4}
    assert summary["calls"] == llm_server.calls == 4
    assert summary["prompt_tokens"] > 0 and summary["completion_tokens"] > 0


@pytest.mark.parametrize(("argv", "reason"), [
    (["--text", "/no/such/file"], "no such file"),
    (["--text", "EMPTY"], "is empty"),
    (["--text", "BINARY"], "binary"),
    (["--text", "STORY", "--criteria", "nonsense"], "valid: coherence"),
    (["--text", "STORY", "--critic-persona", "nobody"], "valid: strictly-negative"),
    (["--text", "STORY", "--rounds", "0"], "--rounds"),
])
def test_bad_input_exits_2_with_one_line_reason(capsys, tmp_path, story_file, argv, reason):
    (tmp_path / "empty.txt").write_text("  \n\t")
    (tmp_path / "bin.dat").write_bytes(b"\x89PNG\x00\x00\x01")
    files = {"EMPTY": str(tmp_path / "empty.txt"), "BINARY": str(tmp_path / "bin.dat"), "STORY": str(story_file)}
    code, summary, err = run_cli(capsys, "run", "--demo", *[files.get(a, a) for a in argv])
    assert code == 2 and summary is None
    assert reason in err and len(err.strip().splitlines()) == 1


def test_invalid_utf8_is_replaced_with_a_warning(capsys, tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("Caf\xe9 au lait. It was good. It was good.".encode("latin-1"))
    code, summary, err = run_cli(capsys, "run", "--demo", "--text", str(path))
    assert code == 0 and "not valid UTF-8" in err


def test_failed_run_exits_3_and_resume_finishes_it_keeping_earlier_turns(capsys, story_file, llm_server, monkeypatch):
    monkeypatch.setenv("DEBATE_TUI_RETRIES", "2")
    monkeypatch.setenv("DEBATE_TUI_RETRY_DELAY", "0.01")
    llm_server.add_rule("Ordered.\nScore: 5", times=1)
    llm_server.add_rule(fault="500")
    code, summary, _ = run_cli(capsys, "run", "--text", str(story_file), "--model", "openai/fake-model",
                               "--api-base", llm_server.base_url)
    assert code == 3 and summary["status"] == "failed"
    path = Path(summary["session_path"])
    before = read_session(path)
    kept = [t for t in before.turns if t.error is None]
    assert len(kept) == 1 and kept[0].score == 5
    assert sum(1 for t in before.turns if t.error) == 2  # two attempts, both recorded as failed

    llm_server.reset()
    llm_server.add_rule("NO ISSUE", match="Criticise the score")
    code, summary, _ = run_cli(capsys, "resume", str(path))
    assert code == 0 and summary["scores"] == {"coherence": 5}
    assert llm_server.calls == 1  # only the Critic: the Scorer's turn was replayed, not re-asked
    after = read_session(path)
    assert after.turns[: len(before.turns)] == before.turns


def test_export_refuses_to_overwrite_without_force(capsys, story_file, tmp_path):
    _, summary, _ = run_cli(capsys, "run", "--demo", "--text", str(story_file))
    out = tmp_path / "out.json"
    out.write_text("keep me")
    assert main(["export", summary["session"], "--format", "json", "--out", str(out)]) == 2
    assert out.read_text() == "keep me"
    assert main(["export", summary["session"], "--format", "json", "--out", str(out), "--force"]) == 0
    assert json.loads(out.read_text())["id"] == summary["session"]


def test_sessions_lists_readable_and_corrupt_files(capsys, story_file, isolated_dirs):
    _, summary, _ = run_cli(capsys, "run", "--demo", "--text", str(story_file))
    (isolated_dirs / "sessions" / "broken.json").write_text('{"schema_version": 1, "id": ')
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out
    assert summary["session"] in out and "coherence 4" in out
    assert "broken" in out and "corrupt or truncated" in out


def test_session_ids_cannot_escape_the_sessions_dir(capsys):
    for bad in ("..", "..evil", "a/../b", ".hidden", "x\x00y"):
        with pytest.raises(SessionFileError):
            load_config().session_store().path_for(bad)
    assert main(["resume", "..evil"]) == 2
    assert "invalid session id" in capsys.readouterr().err


def test_parallel_turns_are_printed_whole_not_interleaved():
    import io

    from debate_tui.cli.headless import PlainPrinter
    from debate_tui.domain import Turn
    from debate_tui.engine.events import TextDelta, TurnCompleted, TurnStarted

    out = io.StringIO()
    printer = PlainPrinter(out)
    for slot, agent in ((0, "A"), (1, "B")):
        printer(TurnStarted(slot, agent, "referee", 1, "coherence"))
    for part in ("a1 ", "a2 "):
        printer(TextDelta(0, "A", part))
        printer(TextDelta(1, "B", part.replace("a", "b")))
    printer(TurnCompleted(Turn(slot=1, agent="B", role="referee", round=1, content="b1 b2 ")))
    printer(TurnCompleted(Turn(slot=0, agent="A", role="referee", round=1, content="a1 a2 ")))
    text = out.getvalue()
    assert "  | a1 a2 " in text and "--- B (referee), round 1, coherence ---\n  | b1 b2 \n" in text


@pytest.mark.parametrize(("flags", "code", "status", "roles"), [
    (["--tie-breaker", "human"], 5, "needs_human", ["scorer", "critic", "scorer"]),
    (["--tie-breaker"], 0, "completed", ["scorer", "critic", "scorer", "tie_breaker"]),  # the bare flag, as before
    (["--tie-breaker", "agent"], 0, "completed", ["scorer", "critic", "scorer", "tie_breaker"]),
    (["--tie-breaker", "none"], 0, "completed", ["scorer", "critic", "scorer"]),
])
def test_the_tie_breaker_flag_reaches_every_value(capsys, story_file, flags, code, status, roles):
    """Issue 33 #2: `--tie-breaker human` exited 2 ('unrecognized arguments: human'); only config.toml reached it."""
    # one round: the demo Critic objects first, so Scorer and Critic never agree and the tie-breaker decides
    exit_code, summary, err = run_cli(capsys, "run", "--demo", "--rounds", "1", *flags, "--text", str(story_file))
    assert exit_code == code, err
    session = read_session(Path(summary["session_path"]))
    assert session.status == status and [t.role for t in session.turns] == roles


def test_the_tie_breaker_flag_takes_each_value_the_protocol_has():
    from typing import get_args

    from debate_tui.cli import build_parser
    from debate_tui.protocols.debate import Options

    for value in get_args(Options.model_fields["tie_breaker"].annotation):
        assert build_parser("run").parse_args(["run", "--tie-breaker", value, "--text", "t"]).tie_breaker == value
    with pytest.raises(SystemExit):
        build_parser("run").parse_args(["run", "--tie-breaker", "sometimes", "--text", "t"])


def test_the_bare_tie_breaker_flag_right_before_the_input_means_agent(capsys, tmp_path, isolated_dirs):
    """`batch --tie-breaker in.jsonl` read the file name as the flag's value ("invalid choice"), exit 2."""
    from tests.helpers.batch import read_rows, run_batch, write_items

    items = write_items(tmp_path / "in.jsonl", 2)
    code, summary, err = run_batch(capsys, "--tie-breaker", str(items), "--demo", "--protocol", "debate",
                                   "--rounds", "1", "--out", str(tmp_path / "out.jsonl"))
    assert code == 0, err
    assert summary is not None and summary["done"] == 2
    sessions = [read_session(next(isolated_dirs.rglob(f"{row['session']}.json")))
                for row in read_rows(tmp_path / "out.jsonl")]
    assert all(s.turns[-1].role == "tie_breaker" for s in sessions)


def test_a_resume_after_config_toml_changed_keeps_the_settings_the_session_was_made_with(capsys, story_file, llm_server,
                                                                                        monkeypatch):
    monkeypatch.setenv("DEBATE_TUI_RETRIES", "2")
    monkeypatch.setenv("DEBATE_TUI_RETRY_DELAY", "0.01")
    monkeypatch.setenv("FAKE_LLM_KEY", FAKE_KEY)
    write_config(fake_model_config(llm_server.base_url) + "[generation]\ntemperature = 0.2\n")
    llm_server.add_rule("Ordered.\nScore: 5", times=1)
    llm_server.add_rule(fault="500")
    code, summary, _ = run_cli(capsys, "run", "--text", str(story_file))
    assert code == 3
    path = Path(summary["session_path"])
    made = read_session(path)
    write_config(fake_model_config("http://127.0.0.1:9/v1", key_env="OTHER_KEY") + "[generation]\ntemperature = 0.9\n")

    llm_server.reset()
    llm_server.add_rule("NO ISSUE", match="Criticise the score")
    code, summary, err = run_cli(capsys, "resume", str(path))
    assert code == 0 and summary["scores"] == {"coherence": 5}
    [asked] = llm_server.requests  # the Critic, at the server and temperature the session was made with
    assert asked.body["temperature"] == 0.2 and asked.has_auth
    assert (f"the configuration changed since session {made.id} was made (generation_defaults, model_settings); "
            "it resumes with the settings it was made with") in err
    after = read_session(path)
    assert after.spec is not None and after.spec.data() == made.spec.data()
    assert [a.params for a in after.agents] == [a.params for a in made.agents]
