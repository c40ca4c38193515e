"""Keys never leak; text from models and users is data, shown inert; paths never come from text.

The leak test runs the real commands with recognisable fake keys, one in
OPENAI_API_KEY and one in a variable a config file names (`api_key_env`),
against the fake server, including failing calls whose error body echoes the
Authorization header. Then it searches every file written and everything
printed, at the file-descriptor level, for the keys.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import pytest

from debate_tui.cli import main
from debate_tui.cli.headless import PlainPrinter
from debate_tui.config import load_config
from debate_tui.engine.events import TextDelta, TurnStarted
from debate_tui.redact import redact
from debate_tui.store import SessionFileError, read_session, write_session
from tests.helpers import FAKE_KEY
from tests.helpers.scripts import CRITIC

NAMED_VARIABLE = "DEBATE_SECURITY_CREDS"
NAMED_KEY = "zz-creds-7f3a9c2e1b5d4e6f8a09"
"""Neither its name nor its shape looks like a key: only the config's `api_key_env` says it is one."""
NAMED_MODEL = "openai/fake-named"
HOSTILE = ("Look: [bold red]x[/] and [@click=app.quit]y[/] and \x1b[31mred\x1b[0m\x07 "
           "\x1b]8;;http://evil.example\x07link\x1b]8;;\x07 \x9b2J\nScore: 3")


def leaks(text: str) -> list[str]:
    """The keys, or a distinctive part of one, found in `text`."""
    needles = [FAKE_KEY, NAMED_KEY, FAKE_KEY[8:24], NAMED_KEY[3:19]]
    return [needle for needle in needles if needle in text]


def test_no_key_reaches_a_file_or_the_screen(capfd, tmp_path, story_file, llm_server, monkeypatch, isolated_dirs):
    monkeypatch.setenv(NAMED_VARIABLE, NAMED_KEY)
    config = isolated_dirs / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[models."{NAMED_MODEL}"]\napi_base = "{llm_server.base_url}"\n'
                      f'api_key_env = "{NAMED_VARIABLE}"\n')
    monkeypatch.setenv("DEBATE_TUI_RETRIES", "2")
    monkeypatch.setenv("DEBATE_TUI_RETRY_DELAY", "0.01")
    llm_server.add_rule(fault="401")
    echoed = httpx.post(f"{llm_server.base_url}/chat/completions", headers={"Authorization": f"Bearer {NAMED_KEY}"},
                        json={"model": "m", "messages": []})
    llm_server.reset()
    assert NAMED_KEY in echoed.text  # the proxy-like 401 really does echo the key (the rule below makes it)
    out = tmp_path / "out"
    out.mkdir()
    codes = []

    def cli(*argv: str) -> None:
        codes.append(main(list(argv)))

    llm_server.add_rule("NO ISSUE", match=CRITIC)
    llm_server.add_rule("Fine.\nScore: 4", model="fake-model", times=1)
    llm_server.add_rule(fault="401", model="fake-named", times=1)
    llm_server.add_rule(fault="500", model="fake-named", times=2)
    llm_server.add_rule(fault="disconnect", times=1)
    llm_server.add_rule("Fine.\nScore: 4")
    base = ["--text", str(story_file), "--api-base", llm_server.base_url]
    cli("run", *base, "--model", "openai/fake-model", "--report", str(out / "ok.md"))
    cli("run", "--text", str(story_file), "--model", NAMED_MODEL, "--session", str(out / "auth.json"))
    cli("run", "--text", str(story_file), "--model", NAMED_MODEL, "--session", str(out / "server.json"))
    cli("resume", str(out / "auth.json"))
    for session in ("auth.json", "server.json"):
        cli("export", str(out / session), "--format", "md", "--out", str(out / f"{session}.md"))
        cli("export", str(out / session), "--format", "json", "--out", str(out / f"{session}.export.json"))
        cli("export", str(out / session), "--format", "md")
        cli("export", str(out / session), "--format", "json")
    cli("sessions")
    cli("sessions", "--sessions-dir", str(out))
    cli("config", "show")
    printed = capfd.readouterr()

    assert codes[:4] == [0, 3, 3, 0], codes
    failed = read_session(out / "server.json")
    assert "You sent Authorization: ***" in read_session(out / "auth.json").turns[0].error
    assert "server error after 2 attempts" in failed.error
    assert llm_server.requests and all(r.has_auth for r in llm_server.requests)  # the keys were sent
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) >= 10
    for path in written:
        assert not leaks(path.read_bytes().decode("utf-8", "replace")), path
    assert not leaks(printed.out) and not leaks(printed.err)
    assert redact(f"it was {NAMED_KEY}") == "it was ***"  # a named variable's value is a secret once used


def test_model_text_is_printed_inert_and_stored_as_given(capfd, story_file, llm_server, tmp_path):
    llm_server.add_rule("NO ISSUE", match=CRITIC)
    llm_server.add_rule(HOSTILE)
    path = tmp_path / "s.json"
    assert main(["run", "--text", str(story_file), "--model", "openai/fake-model", "--api-base",
                 llm_server.base_url, "--session", str(path)]) == 0
    assert main(["export", str(path), "--format", "md"]) == 0
    assert main(["export", str(path), "--format", "json"]) == 0
    printed = capfd.readouterr()
    for stream in (printed.out, printed.err):
        assert not any(ch in stream for ch in "\x1b\x07\x9b")
    assert "[bold red]x[/] and [@click=app.quit]y[/]" in printed.err  # streamed, as written
    assert "\\x1b[31mred\\x1b[0m\\x07" in printed.err and "\\x9b2J" in printed.err
    assert "[bold red]x[/]" in printed.out and "\\x1b[31m" in printed.out  # the Markdown export
    assert read_session(path).turns[0].content == HOSTILE  # stored exactly as the model sent it
    exported = json.loads(printed.out[printed.out.index('{\n "schema_version"'):])
    assert exported["turns"][0]["content"] == HOSTILE  # the JSON export is inert and means the same


def test_names_from_user_files_are_printed_inert(capsys):
    printer = PlainPrinter(sys.stderr)
    printer(TurnStarted(0, "Referee \x1b[2J[b]x[/b]", "referee", 1, "coh\x07"))
    printer(TextDelta(0, "Referee", "\x1b]0;owned\x07"))
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\\x1b[2J[b]x[/b]" in err


def test_bad_input_messages_and_listings_are_inert(capsys, tmp_path, isolated_dirs, story_file):
    assert main(["run", "--demo", "--text", str(story_file), "--criteria", "evil\x1b[2J"]) == 2
    assert "\x1b" not in capsys.readouterr().err
    sessions = isolated_dirs / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "x\x1b[2J.json").write_text("{")
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[2J" in out and "UNREADABLE" in out


def test_session_ids_in_paths_are_validated(capsys, tmp_path, story_file, isolated_dirs):
    store = load_config().session_store()
    for bad in ("../x", "a/b", "a\\b", "..", ".x", "x\x00", "", "con/../../etc"):
        with pytest.raises(SessionFileError, match="invalid session id"):
            store.path_for(bad)
    assert main(["run", "--demo", "--text", str(story_file)]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    crafted = read_session(Path(summary["session_path"]))
    crafted.id = "../../escaped"
    elsewhere = tmp_path / "crafted.json"
    write_session(elsewhere, crafted)
    crafted.status, crafted.outcome, crafted.turns = "failed", None, crafted.turns[:1]
    write_session(elsewhere, crafted)
    assert main(["resume", str(elsewhere)]) == 0  # the id inside a file never becomes a path
    assert main(["export", str(elsewhere), "--format", "json", "--out", str(tmp_path / "e.json")]) == 0
    assert read_session(elsewhere).status == "completed" and elsewhere.with_suffix(".md").exists()
    assert not list(tmp_path.parent.rglob("escaped*"))
    capsys.readouterr()
    assert main(["export", "..escaped"]) == 2  # an id (no separator, no .json) is checked before any use
    assert "invalid session id" in capsys.readouterr().err


def test_export_never_overwrites_without_force(capsys, tmp_path, story_file):
    assert main(["run", "--demo", "--text", str(story_file)]) == 0
    session = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["session"]
    for fmt in ("md", "json"):
        target = tmp_path / f"keep.{fmt}"
        target.write_text("precious")
        assert main(["export", session, "--format", fmt, "--out", str(target)]) == 2
        assert target.read_text() == "precious"
        assert "exists; pass --force" in capsys.readouterr().err
        assert main(["export", session, "--format", fmt, "--out", str(target), "--force"]) == 0
        assert target.read_text() != "precious"
