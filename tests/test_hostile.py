"""Hostile input (issue 19): model text, files and concurrent users that try to break the program.

Each test is one case an attacker or a careless user tried; docs/RELIABILITY.md counts them
("N/N hostile cases held"). Every one failed before its fix.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from debate_tui.cli import main
from debate_tui.store import read_session

TERMINAL_ATTACK = ("Nice. \x1b]0;pwned title\x07 \x1b]52;c;ZWNobyBoaQ==\x07 \x1b[2J\x7f\x9b31m "
                   "first\x85second \u202egnp.exe\u202c zero\u200bwidth\nScore: 3")
"""Sets the terminal's title, sets the clipboard (OSC 52), clears the screen, C1 CSI, a NEL line break,
a right-to-left override and a zero-width space."""
ACTIVE = ["\x1b", "\x07", "\x7f", "\x9b", "\x85", "\u202e", "\u202c", "\u200b"]


def run_single(capfd, llm_server, story_file, *extra: str, reply: str = "Fine.\nScore: 3") -> tuple[int, str, str]:
    llm_server.add_rule(reply)
    code = main(["run", "--protocol", "single", "--text", str(story_file), "--model", "openai/fake-model",
                 "--api-base", llm_server.base_url, *extra])
    out, err = capfd.readouterr()
    return code, out, err


def active_in(text: str) -> list[str]:
    return [repr(ch) for ch in ACTIVE if ch in text]


# ----- model text is data, in every output ---------------------------------------------------


def test_report_holds_no_terminal_controls_and_nel_is_no_line_break(capfd, llm_server, story_file, tmp_path):
    report = tmp_path / "report.md"
    code, _, _ = run_single(capfd, llm_server, story_file, "--report", str(report), reply=TERMINAL_ATTACK)
    assert code == 0
    text = report.read_text(encoding="utf-8")
    assert active_in(text) == []
    assert "\\x1b]52;c;" in text and "\\u202e" in text  # shown, not dropped
    assert any(line.startswith(">") and "first\\x85second" in line for line in text.split("\n"))


def test_exports_hold_no_terminal_controls(capfd, llm_server, story_file, tmp_path):
    session = tmp_path / "s.json"
    code, _, _ = run_single(capfd, llm_server, story_file, "--session", str(session), reply=TERMINAL_ATTACK)
    assert code == 0
    for fmt in ("md", "json"):
        out = tmp_path / f"export.{fmt}"
        assert main(["export", str(session), "--format", fmt, "--out", str(out)]) == 0
        text = out.read_text(encoding="utf-8")
        assert active_in(text) == [], fmt
        assert main(["export", str(session), "--format", fmt]) == 0
        printed, _ = capfd.readouterr()
        assert active_in(printed) == [], fmt
    exported = json.loads((tmp_path / "export.json").read_text(encoding="utf-8"))
    assert exported["turns"][0]["content"] == TERMINAL_ATTACK  # the JSON still means exactly what was said


def test_stderr_stream_shows_bidi_and_zero_width_characters(capfd, llm_server, story_file):
    code, _, err = run_single(capfd, llm_server, story_file, reply=TERMINAL_ATTACK)
    assert code == 0
    assert active_in(err) == []
    assert "\\u202egnp.exe\\u202c" in err and "zero\\u200bwidth" in err


def test_html_in_model_text_renders_literally(capfd, llm_server, story_file, tmp_path):
    report = tmp_path / "report.md"
    reply = "Good <!-- hides everything after <script>alert(1)</script> &amp; <b>bold</b>\nScore: 3"
    code, _, _ = run_single(capfd, llm_server, story_file, "--report", str(report), reply=reply)
    assert code == 0
    html = MarkdownIt("commonmark").render(report.read_text(encoding="utf-8"))
    assert "<!--" not in html and "<script>" not in html and "<b>" not in html
    assert "&lt;!-- hides everything after &lt;script&gt;alert(1)&lt;/script&gt; &amp;amp; &lt;b&gt;bold" in html
    assert "<h2>Transcript</h2>" in html and "Score: 3" in html  # nothing after the comment was swallowed


def test_known_key_echoed_in_a_reply_is_redacted_everywhere(capfd, llm_server, story_file, tmp_path):
    from tests.conftest import FAKE_KEY

    llm_server.chunk_size = 5  # the key arrives split over several stream chunks
    reply = f"My key is {FAKE_KEY}, and again:{FAKE_KEY}\nScore: 3"
    session, report = tmp_path / "s.json", tmp_path / "r.md"
    code, out, err = run_single(capfd, llm_server, story_file, "--session", str(session), "--report", str(report),
                                reply=reply)
    assert code == 0
    assert "My key is ***, and again:***" in err  # the stream shows the rest of the reply
    main(["export", str(session), "--format", "json", "--out", str(tmp_path / "e.json")])
    main(["export", str(session), "--format", "md"])
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "text": story_file.read_text()}) + "\n")
    cache = tmp_path / "cache-dir"
    assert main(["batch", str(items), "--out", str(tmp_path / "results.jsonl"), "--protocol", "single",
                 "--model", "openai/fake-model", "--api-base", llm_server.base_url, "--cache-dir", str(cache),
                 "--sessions-dir", str(tmp_path / "batch-sessions")]) == 0
    printed = "".join(capfd.readouterr()) + out + err
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "story.txt"]
    assert any(p.suffix == ".sqlite3" or p.name.endswith("-wal") for p in written)  # the response cache is searched
    leaked = [str(p) for p in written if FAKE_KEY[3:20].encode() in p.read_bytes()]
    assert leaked == [] and FAKE_KEY[3:20] not in printed
    assert read_session(session).turns[0].content.startswith("My key is ***, and again:***")


def test_stream_redactor_holds_back_only_what_could_start_a_key():
    from debate_tui.redact import StreamRedactor

    redactor = StreamRedactor(["abcdef123"])
    shown = [redactor.feed(piece) for piece in ("xx ab", "cde", "f12", "3 yy abc", "q")] + [redactor.flush()]
    assert shown == ["xx ", "", "", "*** yy ", "abcq", ""]


def test_negative_token_usage_is_clamped_and_logged_once(capfd, caplog, llm_server, story_file, tmp_path):
    llm_server.usage = {"prompt_tokens": -100_000, "completion_tokens": -5, "total_tokens": -100_005}
    code, out, _ = run_single(capfd, llm_server, story_file)
    code2, out2, _ = run_single(capfd, llm_server, story_file)
    summary = json.loads(out.splitlines()[-1])
    assert (code, code2) == (0, 0)
    assert summary["prompt_tokens"] == 0 and summary["completion_tokens"] == 0 and summary["cost_usd"] >= 0
    assert [r.message for r in caplog.records if "negative usage" in r.message] == [
        "the provider reported negative usage (prompt_tokens -100000, completion_tokens -5); counted as zero"]
