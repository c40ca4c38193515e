"""Hostile input (issue 19): model text, files and concurrent users that try to break the program.

Each test is one case an attacker or a careless user tried; docs/RELIABILITY.md counts them
("N/N hostile cases held"). Every one failed before its fix.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from debate_tui.cli import main
from debate_tui.config import load_config
from debate_tui.store import read_session
from tests.helpers.cli import cli_command, cli_env
from tests.helpers.inert import ACTIVE, TERMINAL_ATTACK
from tests.helpers.sessions import make_session, record, save
from tests.helpers.ui import RecordingDemo, wait_until


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
    from tests.helpers import FAKE_KEY

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


# ----- files are never clobbered ---------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--report", "--session"])
def test_run_refuses_to_overwrite_a_named_file_unless_forced(capfd, llm_server, story_file, tmp_path, flag):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    code, out, err = run_single(capfd, llm_server, story_file, flag, str(target))
    assert code == 2 and out == "" and llm_server.calls == 0
    assert err.count("\n") == 1 and err.startswith(f"debate-tui: error: {flag} {target} exists; pass --force")
    assert target.read_text() == "keep me"
    code, out, err = run_single(capfd, llm_server, story_file, flag, str(target), "--force")
    assert code == 0 and target.read_text() != "keep me"


def test_export_never_replaces_a_directory_fifo_or_device(capfd, llm_server, story_file, tmp_path):
    session = tmp_path / "s.json"
    assert run_single(capfd, llm_server, story_file, "--session", str(session))[0] == 0
    fifo, directory, device = tmp_path / "fifo", tmp_path / "dir", tmp_path / "null-link"
    os.mkfifo(fifo)
    directory.mkdir()
    device.symlink_to(os.devnull)
    for target in (fifo, directory, device):
        code = main(["export", str(session), "--out", str(target), "--force"])
        _, err = capfd.readouterr()
        assert code == 2 and err.count("\n") == 1 and "not a regular file" in err, target
    assert fifo.is_fifo() and directory.is_dir() and device.is_symlink() and Path(os.devnull).is_char_device()
    assert list(directory.iterdir()) == [] and [p.name for p in tmp_path.glob(".*.tmp")] == []


# ----- failures are one line, never a traceback ------------------------------------------------


def test_unwritable_sessions_directory_is_one_line_before_any_call(capfd, llm_server, story_file, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code, out, err = run_single(capfd, llm_server, story_file, "--sessions-dir", str(blocker / "sessions"))
    assert code == 2 and llm_server.calls == 0
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("debate-tui: error: cannot write in ") and str(blocker / "sessions") in err


def test_full_disk_is_one_line_exit_2_and_leaves_no_temporary_file(llm_server, story_file, tmp_path):
    import resource
    import signal
    import subprocess

    def small_disk() -> None:  # files may grow to 3 kB: the session's first saves fit, a later one does not
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))

    llm_server.add_rule("NO ISSUE", match="devil")
    llm_server.add_rule("A long enough answer. " * 20 + "\nScore: 3")
    out = tmp_path / "out"
    done = subprocess.run([*cli_command(), "run", "--text", str(story_file), "--model", "openai/fake-model",
                           "--api-base", llm_server.base_url, "--session", str(out / "s.json")],
                          env=cli_env(tmp_path), capture_output=True, text=True, timeout=120, preexec_fn=small_disk)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    error = [line for line in done.stderr.splitlines() if line.startswith("debate-tui: error:")]
    assert error == [f"debate-tui: error: cannot write the session file {out / 's.json'}: File too large"]
    assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []
    assert read_session(out / "s.json").status in ("running", "failed")  # the last version that fitted, whole


def test_closed_stderr_stops_the_stream_not_the_judgment(llm_server, story_file, tmp_path):
    import subprocess

    llm_server.chunk_delay = 0.01
    llm_server.add_rule("NO ISSUE", match="devil")
    llm_server.add_rule("Fine, a reply of some length to stream.\nScore: 4")
    process = subprocess.Popen([*cli_command(), "run", "--text", str(story_file), "--model", "openai/fake-model",
                                "--api-base", llm_server.base_url, "--report", str(tmp_path / "r.md")],
                               env=cli_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    process.stderr.close()  # whoever read the stream went away before the first line
    out, _ = process.communicate(timeout=120)
    summary = json.loads(out.splitlines()[-1])
    assert process.returncode == 0 and summary["status"] == "completed" and summary["error"] is None
    assert read_session(Path(summary["session_path"])).status == "completed"
    assert (tmp_path / "r.md").exists()


def test_sessions_piped_into_head_ends_quietly(tmp_path):
    import subprocess

    from debate_tui.store import SessionStore

    store = SessionStore(tmp_path / "sessions")
    for number in range(2000):  # more than a pipe holds: the listing is still writing when `head` leaves
        save(store, f"2026-01-01-{number:04d}")
    done = subprocess.run(f"{cli_command()[0]} -c '{cli_command()[2]}' sessions | head -1", shell=True,
                          env=cli_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert done.stdout.count("\n") == 1 and done.stderr == ""


# ----- accounting and concurrency --------------------------------------------------------------


def test_a_second_writer_is_refused_while_a_session_runs_and_the_lock_dies_with_its_process(
        capfd, llm_server, story_file, tmp_path):
    import signal
    import subprocess
    import time

    llm_server.add_rule("NO ISSUE", match="devil")
    llm_server.add_rule("Fine.\nScore: 4", latency=0.5)
    path = tmp_path / "s.json"
    first = subprocess.Popen([*cli_command(), "run", "--text", str(story_file), "--model", "openai/fake-model",
                              "--api-base", llm_server.base_url, "--session", str(path)],
                             env=cli_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while llm_server.calls < 2 and time.monotonic() < deadline:  # running, and a call is in flight
            time.sleep(0.05)
        session_id = read_session(path).id
        calls = llm_server.calls
        code = main(["resume", str(path)])
        _, err = capfd.readouterr()
        assert code == 2 and err.count("\n") == 1
        said = f"debate-tui: error: session {session_id} is being run by another process (pid {first.pid})"
        assert err.startswith(said)
        assert llm_server.calls == calls or llm_server.calls == calls + 1  # only the first writer's next call
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        first.kill()
    assert main(["resume", str(path)]) == 0  # the crash released the lock
    assert read_session(path).status == "completed"


async def test_the_tui_honours_the_session_lock(tmp_path):
    from debate_tui.safefile import SessionLock
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.launch import Launch
    from debate_tui.ui.screens.debate import DebateScreen

    store = load_config().session_store()
    session = make_session()
    path = await record(session, store, stop_after=1)
    held = SessionLock(path, session.id).acquire()  # as a `debate-tui resume` in another terminal would
    app = DebateTUI(Launch(), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        app.resume(read_session(path), path)
        await pilot.pause()
        assert not isinstance(app.screen, DebateScreen) and app.client.requests == []
        assert any(f"session {session.id} is being run by another process" in str(n.message)
                   for n in app._notifications)
        held.release()
        app.resume(read_session(path), path)
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen) and app.screen.finished, what="the run")
        assert read_session(path).status == "completed"
        SessionLock(path, session.id).acquire().release()  # the TUI let go when its run ended


# ----- inputs are bounded ----------------------------------------------------------------------


def measured(argv: list[str], tmp_path: Path, stdin=None) -> tuple[int, str, float, float]:
    """Exit code, stderr, seconds to the refusal and peak memory (MB) of one `debate-tui` process."""
    import subprocess
    import sys

    probe = ("import resource, subprocess, sys, time; start = time.monotonic(); "
             "done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
             "print(done.returncode, time.monotonic() - start, "
             "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024); print(done.stderr, end='')")
    done = subprocess.run([sys.executable, "-c", probe, *cli_command(), *argv], env=cli_env(tmp_path), stdin=stdin,
                          capture_output=True, text=True, timeout=300)
    head, _, err = done.stdout.partition("\n")
    code, seconds, peak_mb = head.split()
    return int(code), err, float(seconds), float(peak_mb)


@pytest.mark.parametrize("source", ["/dev/zero", "stdin from /dev/zero", "a 200 MB file"])
def test_endless_or_huge_input_is_refused_quickly_with_bounded_memory(tmp_path, source):
    argv = ["run", "--demo", "--text"]
    stdin = None
    if source == "a 200 MB file":
        huge = tmp_path / "huge.txt"
        with huge.open("wb") as handle:
            handle.write(b"All work and no play. " * (200_000_000 // 22))
        argv.append(str(huge))
    elif source.startswith("stdin"):
        argv.append("-")
        stdin = open("/dev/zero", "rb")  # noqa: SIM115 - closed in the finally below
    else:
        argv.append("/dev/zero")
    try:
        code, err, seconds, peak_mb = measured(argv, tmp_path, stdin)
    finally:
        if stdin:
            stdin.close()
    assert seconds < 20 and peak_mb < 200, (seconds, peak_mb)
    assert code == 2 and err.count("\n") == 1, err
    assert "over the limit of 200,000 characters (DEBATE_TUI_MAX_TEXT_CHARS)" in err
    print(f"{source}: refused in {seconds:.2f} s, peak {peak_mb:.0f} MB")  # the figures in docs/RELIABILITY.md


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-be-bom", "utf-32"])
def test_texts_with_a_byte_order_mark_are_read(capfd, tmp_path, encoding):
    text = "Ünïcode story, ☃ and 𝄞.\r\nSecond line."
    raw = codecs_bom_be(text) if encoding == "utf-16-be-bom" else text.encode(encoding)
    path = tmp_path / "story.txt"
    path.write_bytes(raw)
    report = tmp_path / "r.md"
    assert main(["run", "--demo", "--protocol", "single", "--text", str(path), "--report", str(report)]) == 0
    session = json.loads(capfd.readouterr().out.splitlines()[-1])["session_path"]
    assert read_session(Path(session)).task.text == "Ünïcode story, ☃ and 𝄞.\nSecond line."


def codecs_bom_be(text: str) -> bytes:
    import codecs

    return codecs.BOM_UTF16_BE + text.encode("utf-16-be")


def test_utf16_without_a_byte_order_mark_is_refused_naming_the_encoding(capfd, tmp_path):
    path = tmp_path / "story.txt"
    path.write_bytes("A story without a mark.".encode("utf-16-le"))
    assert main(["run", "--demo", "--text", str(path)]) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "looks like UTF-16LE text without a byte-order mark" in err


def test_credentials_in_the_api_base_are_refused_and_redacted(capfd, story_file, isolated_dirs, llm_server):
    from debate_tui.redact import redact

    creds = "https://alice:s3cr3t-passw0rd@llm.example.com/v1"
    code = main(["run", "--text", str(story_file), "--model", "openai/fake-model", "--api-base", creds])
    out, err = capfd.readouterr()
    assert code == 2 and err.count("\n") == 1 and "credentials" in err and "s3cr3t" not in err + out
    assert not list((isolated_dirs / "sessions").glob("*.json"))
    config = isolated_dirs / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[models."openai/fake-model"]\napi_base = "{creds}"\n')
    code = main(["run", "--text", str(story_file), "--model", "openai/fake-model"])
    out, err = capfd.readouterr()
    assert code == 2 and "credentials" in err and "s3cr3t" not in err + out
    assert redact(f"cannot reach {creds}") == "cannot reach https://***@llm.example.com/v1"


def test_batch_cache_goes_to_the_cache_dir_given(capfd, llm_server, story_file, tmp_path, isolated_dirs):
    import sqlite3

    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": str(n), "text": f"Story {n}. " + story_file.read_text()}) + "\n"
                             for n in range(3)))
    chosen = tmp_path / "my-cache"
    llm_server.add_rule("Fine.\nScore: 4")
    assert main(["batch", str(items), "--out", str(tmp_path / "results.jsonl"), "--protocol", "single",
                 "--model", "openai/fake-model", "--api-base", llm_server.base_url, "--cache-dir", str(chosen)]) == 0
    capfd.readouterr()
    with sqlite3.connect(chosen / "responses.sqlite3") as db:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 3
    default = isolated_dirs / "cache" / "responses.sqlite3"
    assert not default.exists() or sqlite3.connect(default).execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0


@pytest.mark.parametrize(("status", "says"), [
    (403, "authentication failed, not retried: check the key in OPENAI_API_KEY"),
    (503, None),
])
def test_provider_errors_are_mapped_by_http_status(capfd, llm_server, story_file, status, says):
    """litellm calls a 403 or a 503 whose message says "invalid_request_error" a bad request (or a 403 a server
    error): the key's hint was missing, and a server error was not retried."""
    message = "invalid_request_error: not allowed here" if status == 403 else "invalid_request_error: upstream down"
    llm_server.add_rule(error=(status, message), times=1 if status == 503 else None)
    llm_server.add_rule("NO ISSUE", match="devil")
    llm_server.add_rule("Fine.\nScore: 4")
    code = main(["run", "--text", str(story_file), "--model", "openai/fake-model", "--api-base", llm_server.base_url,
                 "--retries", "3"])
    summary = json.loads(capfd.readouterr().out.splitlines()[-1])
    if status == 403:  # never retried, and the hint is about the key
        assert code == 3 and says in summary["error"] and llm_server.calls == 1
    else:  # a server error: retried, and the run completes
        assert code == 0 and summary["status"] == "completed" and llm_server.calls >= 3


def test_progress_lines_scale_huge_numbers():
    from debate_tui.batch.progress import Progress, Tally
    from debate_tui.domain import Usage

    spent = Usage(calls=9, prompt_tokens=3_999_000_000_000, completion_tokens=1_000_000_000)
    tally = Tally(total=10, done=3, spent=spent)
    line = Progress(tally, stream=io.StringIO(), tty=False, clock=lambda: 5.0).line()
    assert "4.0T tokens" in line and "k tokens" not in line and "3.00 items/s" in line
    tally.spent = Usage(prompt_tokens=1_250_000)
    assert "1.2M tokens" in Progress(tally, stream=io.StringIO(), tty=False).line()


@pytest.mark.parametrize("source", ["/dev/zero", "-"])
def test_an_endless_batch_input_is_refused_with_bounded_memory(tmp_path, monkeypatch, source):
    monkeypatch.setenv("DEBATE_TUI_MAX_BATCH_BYTES", "20000000")  # the default is 100 MB
    stdin = open("/dev/zero", "rb") if source == "-" else None  # noqa: SIM115 - closed in the finally below
    try:
        code, err, seconds, peak_mb = measured(["batch", source, "--out", str(tmp_path / "r.jsonl"), "--demo"],
                                               tmp_path, stdin)
    finally:
        if stdin:
            stdin.close()
    assert seconds < 20 and peak_mb < 200, (seconds, peak_mb)
    assert code == 2 and "over the limit of 20,000,000 bytes (DEBATE_TUI_MAX_BATCH_BYTES)" in err, err
    print(f"batch {source}: refused in {seconds:.2f} s, peak {peak_mb:.0f} MB")


def test_error_lines_from_config_and_batch_input_show_controls_escaped(capfd, story_file, isolated_dirs, tmp_path):
    config = isolated_dirs / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('"bad\\u009b2J\\u202ekey" = 1\n', encoding="utf-8")
    assert main(["run", "--demo", "--text", str(story_file)]) == 2
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "a", "text": "fine"}\n{"id": "a", "text": "again \\u009b2J \\u202e"}\n', encoding="utf-8")
    config.unlink()
    assert main(["batch", str(items), "--out", str(tmp_path / "r.jsonl"), "--demo"]) == 2
    err = capfd.readouterr().err
    assert err.count("debate-tui: error:") == 2 and active_in(err) == [], err
