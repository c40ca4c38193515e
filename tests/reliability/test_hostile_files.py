"""Hostile files and environments, round two (issue 32): every file read is bounded and checked, every file
written is asked for, values are checked where they enter, JSON Lines split at "\\n" only, the cache survives
damage and locks, output survives any encoding, a read-only home gets one line.

docs/RELIABILITY.md lists these cases by class; each test failed on main at 2573f68 (checked by running this
file against that tree) unless its docstring says otherwise.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from debate_tui.cli import main
from debate_tui.store import read_session, write_session
from tests.helpers.cli import cli_command, cli_env
from tests.helpers.sessions import make_session, record
from tests.helpers.ui import RecordingDemo, args, open_setup, screen_text, wait_until

DEPTH = 1000
DEEP_JSON = '{"a": ' * DEPTH + "1" + "}" * DEPTH
"""About 7 KB of JSON nested a thousand levels: json.loads raises RecursionError."""
DEEP_TOML = "a = " + "[" * DEPTH + "1" + "]" * DEPTH + "\n"
"""About 2 KB of TOML nested a thousand levels: tomllib raises RecursionError."""


def one_error_line(err: str) -> str:
    """The single `debate-tui: error:` line of a refusal (no traceback, nothing else)."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "error: " in lines[0], err
    return lines[0]


def demo_session(tmp_path: Path, name: str = "s.json", text: str = "A short text to judge. It has two sentences.",
                 *extra: str) -> Path:
    source = tmp_path / f"{name}.txt"
    source.write_text(text, encoding="utf-8")
    path = tmp_path / name
    assert main(["run", "--demo", "--protocol", "single", "--text", str(source), "--session", str(path),
                 "--criteria", "coherence", *extra]) == 0
    return path


# ----- deep nesting: one line naming the file, never a traceback ------------------------------------------


def test_a_deeply_nested_session_file_is_unreadable_in_one_line_and_the_list_goes_on(capfd, isolated_dirs):
    store_dir = isolated_dirs / "sessions"
    good = demo_session(isolated_dirs)
    store_dir.mkdir(parents=True, exist_ok=True)
    (store_dir / "2026-01-01-good.json").write_bytes(good.read_bytes())
    deep = store_dir / "2026-01-02-deep.json"
    deep.write_text(DEEP_JSON)
    capfd.readouterr()
    assert main(["sessions", "--no-examples"]) == 0
    out, err = capfd.readouterr()
    assert "Traceback" not in err
    assert f"2026-01-02-deep  UNREADABLE  {deep}: not a readable session file (nested too deeply)" in out
    assert read_session(good).id in out  # the readable one is still listed
    for command in (["export", "2026-01-02-deep"], ["resume", str(deep)]):
        assert main(command) == 2
        assert one_error_line(capfd.readouterr().err).endswith(f"{deep}: not a readable session file "
                                                               "(nested too deeply)")


def test_a_deeply_nested_config_criteria_or_batch_line_is_one_line(capfd, isolated_dirs, story_file):
    config = isolated_dirs / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(DEEP_TOML)
    assert main(["run", "--demo", "--text", str(story_file)]) == 2
    assert one_error_line(capfd.readouterr().err).endswith(f"{config}: not readable TOML (nested too deeply)")
    config.unlink()
    criteria = isolated_dirs / "deep.toml"
    criteria.write_text(DEEP_TOML)
    assert main(["run", "--demo", "--text", str(story_file), "--criteria", str(criteria)]) == 2
    assert one_error_line(capfd.readouterr().err).endswith(f"{criteria}: not readable TOML (nested too deeply)")
    items = isolated_dirs / "items.jsonl"
    items.write_text('{"id": "a", "text": "fine"}\n{"id": "b", "text": "x", "deep": ' + DEEP_JSON + "}\n")
    assert main(["batch", str(items), "--out", str(isolated_dirs / "r.jsonl"), "--demo"]) == 2
    assert one_error_line(capfd.readouterr().err).endswith(f"{items}:2: not readable JSON (nested too deeply)")


async def test_a_deeply_nested_config_stops_the_tui_with_one_line(isolated_dirs):
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.opening import read_opening

    path = isolated_dirs / "config" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(DEEP_TOML)
    app = DebateTUI(read_opening(args()))
    async with app.run_test() as pilot:
        await pilot.pause()
    assert app.return_code == 2 and app.config_error == f"{path}: not readable TOML (nested too deeply)"


async def test_the_tui_sessions_screen_lists_an_unreadable_file_and_finishes_loading(isolated_dirs):
    from debate_tui.config import load_config
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.launch import Launch
    from debate_tui.ui.screens.sessions import SessionsScreen

    store = load_config().session_store()
    store.root.mkdir(parents=True)
    (store.root / "2026-01-02-deep.json").write_text(DEEP_JSON)
    app = DebateTUI(Launch(), client=RecordingDemo())
    async with app.run_test(size=(160, 36)) as pilot:  # as a person opens it: the setup form, then F2
        await open_setup(pilot)
        await pilot.press("f2")
        listed = lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.rows) >= 1  # noqa: E731
        await wait_until(pilot, listed, what="the unreadable row")
        await pilot.pause(0.2)
        text = screen_text(app)
        assert "unreadable" in text and "2026-01-02-deep.json: not a readable session fi" in text, text
        assert "example" in text  # the list went on past it


# ----- unbounded reads: devices, FIFOs, huge files ---------------------------------------------------------


def limited(argv: list[str], tmp_path: Path, address_space_mb: int = 1500) -> tuple[int, str, float, float]:
    """Exit code, stderr, seconds and peak memory (MB) of `debate-tui ARGV` with its address space capped
    (`ulimit -v`): a read without a bound ends in MemoryError there instead of taking the machine's memory.
    Measured by a probe process of its own, so no earlier child of the test run counts in the peak."""
    import subprocess
    import sys

    limit = address_space_mb * 1024 * 1024
    probe = ("import resource, subprocess, sys, time\n"
             f"cap = lambda: resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
             "start = time.monotonic()\n"
             "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, preexec_fn=cap)\n"
             "print(done.returncode, time.monotonic() - start, "
             "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024); print(done.stderr, end='')")
    done = subprocess.run([sys.executable, "-c", probe, *cli_command(), *argv], env=cli_env(tmp_path),
                          capture_output=True, text=True, timeout=300)
    head, _, err = done.stdout.partition("\n")
    code, seconds, peak_mb = head.split()
    return int(code), err, float(seconds), float(peak_mb)


@pytest.mark.parametrize("command", ["resume", "resume-by-id", "export", "meta", "criteria"])
def test_dev_zero_is_refused_before_reading_under_a_memory_limit(tmp_path, command):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "zero.toml").symlink_to("/dev/zero")
    story = tmp_path / "story.txt"
    story.write_text("A short story to judge. It ends here.")
    argv = {"resume": ["resume", "/dev/zero"], "resume-by-id": ["resume", "zero"],
            "export": ["export", str(sessions / "zero.json")], "meta": ["meta", "/dev/zero"],
            "criteria": ["run", "--demo", "--text", str(story), "--criteria", str(tmp_path / "zero.toml")]}[command]
    code, err, seconds, peak_mb = limited(argv, tmp_path)
    print(f"{command} on /dev/zero: exit {code} in {seconds:.2f} s, peak {peak_mb:.0f} MB")
    assert code == 2 and "is a device, not a regular file; not read" in one_error_line(err), err
    assert peak_mb < 300 and seconds < 30


def test_a_fifo_named_as_a_session_is_refused_not_waited_on(capfd, tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert main(["export", str(fifo)]) == 2  # opening a FIFO for reading would block until a writer came
    assert one_error_line(capfd.readouterr().err).endswith(f"{fifo}: is a FIFO, not a regular file; not read")


def test_a_file_over_its_kinds_limit_is_refused_unread(capfd, tmp_path, monkeypatch):
    path = demo_session(tmp_path)
    monkeypatch.setenv("DEBATE_TUI_MAX_SESSION_BYTES", "1000")
    capfd.readouterr()
    assert main(["export", str(path)]) == 2
    line = one_error_line(capfd.readouterr().err)
    assert "over the limit of 1,000 bytes (DEBATE_TUI_MAX_SESSION_BYTES) for a session file; not read" in line


# ----- files written without asking ------------------------------------------------------------------------


def test_batch_never_writes_over_its_input_or_an_unrelated_file(capfd, isolated_dirs):
    items = isolated_dirs / "items.jsonl"
    items.write_text('{"id": "a", "text": "A text to judge."}\n')
    before = items.read_bytes()
    assert main(["batch", str(items), "--out", str(items), "--demo"]) == 2
    assert "--out" in one_error_line(capfd.readouterr().err) and items.read_bytes() == before
    notes = isolated_dirs / "notes.txt"
    notes.write_text("my notes\n")
    assert main(["batch", str(items), "--out", str(notes), "--demo"]) == 2
    assert "is not a results file" in one_error_line(capfd.readouterr().err)
    assert notes.read_text() == "my notes\n"
    one_line = isolated_dirs / "one.txt"
    one_line.write_text("a single line without a newline")  # was taken for a cut-off results line and emptied
    assert main(["batch", str(items), "--out", str(one_line), "--demo"]) == 2
    assert one_line.read_text() == "a single line without a newline"
    results = isolated_dirs / "r.jsonl"
    assert main(["batch", str(items), "--out", str(results), "--demo"]) == 0
    assert main(["batch", str(items), "--out", str(results), "--demo"]) == 0  # a results file is resumed
    assert json.loads(capfd.readouterr().out.splitlines()[-1])["skipped"] == 1


def test_run_never_writes_the_report_over_the_session_or_an_existing_file(capfd, tmp_path):
    story = tmp_path / "story.txt"
    story.write_text("A short story to judge. It ends here.")
    base = ["run", "--demo", "--protocol", "single", "--criteria", "coherence", "--text", str(story)]
    assert main([*base, "--session", str(tmp_path / "out.md")]) == 2  # the default report is the same file
    assert "same file" in one_error_line(capfd.readouterr().err) and not (tmp_path / "out.md").exists()
    same = tmp_path / "x.json"
    assert main([*base, "--session", str(same), "--report", str(same), "--force"]) == 2
    assert "same file" in one_error_line(capfd.readouterr().err) and not same.exists()
    analysis = tmp_path / "analysis.md"
    analysis.write_text("my analysis\n")
    assert main([*base, "--session", str(tmp_path / "analysis.json")]) == 2
    assert "pass --force" in one_error_line(capfd.readouterr().err) and analysis.read_text() == "my analysis\n"
    assert not (tmp_path / "analysis.json").exists()
    assert main([*base, "--session", str(story), "--force"]) == 2  # an input is never an output
    assert "--text" in one_error_line(capfd.readouterr().err)
    assert story.read_text() == "A short story to judge. It ends here."
    assert main([*base, "--session", str(tmp_path / "analysis.json"), "--force"]) == 0
    assert analysis.read_text().startswith("# Evaluation report")


def test_resume_asks_before_replacing_a_report_and_never_replaces_a_fifo(capfd, tmp_path):
    story = tmp_path / "story.txt"
    story.write_text("A short story to judge. It ends here.")
    path = tmp_path / "s.json"
    assert main(["run", "--demo", "--protocol", "single", "--criteria", "coherence", "--text", str(story),
                 "--session", str(path)]) == 0
    session = read_session(path)
    session.status = "failed"
    write_session(path, session)
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    capfd.readouterr()
    assert main(["resume", str(path), "--report", str(fifo), "--force"]) == 2
    assert "is a FIFO" in one_error_line(capfd.readouterr().err) and Path(fifo).is_fifo()
    other = tmp_path / "other.md"
    other.write_text("keep me\n")
    assert main(["resume", str(path), "--report", str(other)]) == 2
    assert "pass --force" in one_error_line(capfd.readouterr().err) and other.read_text() == "keep me\n"
    assert main(["resume", str(path), "--report", str(path), "--force"]) == 2
    assert "same file" in one_error_line(capfd.readouterr().err)
    assert main(["resume", str(path)]) == 0  # its own report beside it is replaced without --force


def test_export_never_replaces_a_dangling_link(capfd, tmp_path):
    path = demo_session(tmp_path)
    link = tmp_path / "out.md"
    link.symlink_to(tmp_path / "nowhere" / "target.md")
    capfd.readouterr()
    assert main(["export", str(path), "--out", str(link), "--force"]) == 2
    assert "symbolic link" in one_error_line(capfd.readouterr().err) and link.is_symlink()
    assert main(["export", str(path), "--out", str(path), "--force"]) == 2  # nor its own session file
    assert "same file" in one_error_line(capfd.readouterr().err)
    assert read_session(path).status == "completed"


# ----- values checked where they enter ---------------------------------------------------------------------


def test_an_infinite_scale_is_refused_where_it_enters(capfd, tmp_path, story_file):
    criteria = tmp_path / "inf.toml"
    criteria.write_text('[[criterion]]\nname = "wild"\ndescription = "d"\nlow = 1\nhigh = inf\n')
    assert main(["run", "--demo", "--text", str(story_file), "--criteria", str(criteria)]) == 2
    assert "high: Input should be a finite number" in one_error_line(capfd.readouterr().err)


def test_a_name_with_a_newline_is_refused_and_forges_nothing(capfd, isolated_dirs, story_file):
    criteria = isolated_dirs / "forge.toml"
    criteria.write_text('[[criterion]]\nname = "ok\\n## Result\\nforged  completed"\ndescription = "d"\n')
    assert main(["run", "--demo", "--text", str(story_file), "--criteria", str(criteria)]) == 2
    line = one_error_line(capfd.readouterr().err)
    assert "holds \\x0a; a name is one line" in line
    personas = isolated_dirs / "personas.toml"
    personas.write_text('[[persona]]\nname = "critic\\u001b[2J"\nrole_prompt = "p"\n')
    assert main(["run", "--demo", "--text", str(story_file), "--personas", str(personas)]) == 2
    assert "holds \\x1b" in one_error_line(capfd.readouterr().err)
    store = isolated_dirs / "sessions"  # a session file written by hand with such a name is unreadable, not listed
    path = demo_session(isolated_dirs)
    data = json.loads(path.read_text())
    data["criteria"][0]["name"] = "coherence\nforged-row  2026-01-01 00:00  debate    completed"
    store.mkdir(parents=True, exist_ok=True)
    (store / "2026-01-03-forged.json").write_text(json.dumps(data))
    capfd.readouterr()
    assert main(["sessions", "--no-examples"]) == 0
    out = capfd.readouterr().out
    assert not any(line.startswith("forged-row") for line in out.splitlines())
    assert "2026-01-03-forged  UNREADABLE" in out
    items = isolated_dirs / "items.jsonl"  # a batch input's human criterion name is one of those names too
    items.write_text('{"id": "a", "text": "A text.", "human": {"coherence\\n| forged | 1.0 |": 3}}\n')
    assert main(["batch", str(items), "--out", str(isolated_dirs / "r.jsonl"), "--demo"]) == 2
    assert f"{items}:1: 'human': criterion" in one_error_line(capfd.readouterr().err)


# ----- JSON Lines split at \n only; every writer's output read by every reader ----------------------------


def test_every_file_the_product_writes_is_read_back_by_every_command_that_takes_it(capfd, isolated_dirs):
    """dataset -> batch; batch -> meta, review, batch merge, batch (resume); with a raw U+2028 in a text."""
    table = isolated_dirs / "labels.csv"
    table.write_text("id,text,score\na,First line\u2028second line.,4\nb,Another text to judge.,2\n",
                     encoding="utf-8")
    items = isolated_dirs / "items.jsonl"
    capfd.readouterr()
    assert main(["dataset", str(table), "--text", "text", "--id", "id", "--human", "coherence=score"]) == 0
    items.write_text(capfd.readouterr().out, encoding="utf-8")
    assert "\u2028" in items.read_text(encoding="utf-8")  # written raw: valid JSON, and no line break
    results = isolated_dirs / "r.jsonl"
    assert main(["batch", str(items), "--out", str(results), "--demo", "--criteria", "coherence"]) == 0
    capfd.readouterr()
    assert main(["meta", str(results), "--json", "--bootstrap", "0", "--level", "turn"]) == 0
    assert json.loads(capfd.readouterr().out)["criteria"]["coherence"]["n"] == 2
    assert main(["review", str(results), "--list"]) == 0
    merged = isolated_dirs / "all.jsonl"
    assert main(["batch", "merge", str(results), "--out", str(merged)]) == 0
    assert json.loads(capfd.readouterr().out.splitlines()[-1])["rows"] == 2
    assert main(["batch", str(items), "--out", str(merged), "--demo", "--criteria", "coherence"]) == 0
    assert json.loads(capfd.readouterr().out.splitlines()[-1])["skipped"] == 2
    assert main(["meta", str(results), "--labels", str(items), "--json", "--bootstrap", "0", "--level", "turn"]) == 0


def test_jsonl_lines_split_at_newline_only():
    from debate_tui.readfile import jsonl_lines, jsonl_records

    text = '{"t": "a\u2028b\u2029c\x85d"}\r\n\n{"t": 2}'
    assert [number for number, _ in jsonl_lines(text)] == [1, 3]
    assert [value["t"] for _, value in jsonl_records(text, "x")] == ["a\u2028b\u2029c\x85d", 2]


# ----- the response cache ----------------------------------------------------------------------------------


def test_a_corrupt_cache_is_set_aside_and_a_new_one_started(capfd, isolated_dirs):
    cache = isolated_dirs / "cache"
    cache.mkdir()
    (cache / "responses.sqlite3").write_bytes(b"this is not a database, just bytes" * 200)
    items = isolated_dirs / "items.jsonl"
    items.write_text('{"id": "a", "text": "A text to judge."}\n')
    assert main(["batch", str(items), "--out", str(isolated_dirs / "r.jsonl"), "--demo"]) == 0
    err = capfd.readouterr().err
    notes = [line for line in err.splitlines() if "responses.sqlite3" in line]
    assert len(notes) == 1 and "set aside as responses.sqlite3.corrupt-" in notes[0], err
    aside = [p for p in cache.iterdir() if ".corrupt-" in p.name]
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not a database")
    assert sqlite3.connect(cache / "responses.sqlite3").execute("SELECT COUNT(*) FROM responses").fetchone()[0] > 0


@pytest.mark.serial  # asserts wall time
@pytest.mark.parametrize("when", ["opening", "storing"])
def test_a_locked_cache_is_waited_for_within_its_bound_then_one_line(capfd, isolated_dirs, monkeypatch, when):
    import time

    from debate_tui.llm import cache as cache_module

    monkeypatch.setattr(cache_module, "LOCK_WAIT_S", 0.5)
    cache = isolated_dirs / "cache"
    cache.mkdir()
    holder = sqlite3.connect(cache / "responses.sqlite3", isolation_level=None)
    if when == "storing":  # a cache in WAL mode can be read while another process writes: only stores wait
        cache_module.ResponseCache(cache).close()
    holder.execute("BEGIN EXCLUSIVE")
    if when == "opening":
        holder.execute("CREATE TABLE other (a)")
    items = isolated_dirs / "items.jsonl"
    items.write_text('{"id": "a", "text": "A text to judge."}\n')
    start = time.monotonic()
    try:
        code = main(["batch", str(items), "--out", str(isolated_dirs / "r.jsonl"), "--demo"])
    finally:
        holder.rollback()
        holder.close()
    assert code == 2 and time.monotonic() - start < 10
    line = one_error_line("\n".join(x for x in capfd.readouterr().err.splitlines() if not x.startswith("batch:")))
    assert "is locked by another process (waited 0.5 s)" in line and "--no-cache" in line


# ----- the environment -------------------------------------------------------------------------------------


def test_output_in_a_legacy_encoding_escapes_what_it_cannot_hold(tmp_path):
    import subprocess

    text = tmp_path / "zh.txt"
    text.write_text("小明今天去了学校。他很高兴。老师表扬了他。", encoding="utf-8")
    env = cli_env(tmp_path) | {"PYTHONIOENCODING": "latin-1"}
    run = subprocess.run([*cli_command(), "run", "--demo", "--protocol", "single", "--criteria", "coherence",
                          "--text", str(text)], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    for argv in (["sessions", "--no-examples"], ["export", json.loads(run.stdout)["session"]]):
        done = subprocess.run([*cli_command(), *argv], env=env, capture_output=True, timeout=120)
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
        assert b"\\u5c0f\\u660e" in done.stdout


def private_mount(script: str) -> list[str] | None:
    """A shell running `script` in a private mount namespace (root, or a user namespace), or None here."""
    import shutil
    import subprocess

    if shutil.which("unshare") is None:
        return None
    for flags in (["-m"], ["-r", "-m"]):
        if subprocess.run(["unshare", *flags, "true"], capture_output=True).returncode == 0:
            return ["unshare", *flags, "/bin/sh", "-c", script]
    return None


def test_a_read_only_home_is_one_line_naming_what_and_where_else(tmp_path):
    import subprocess

    home = tmp_path / "home"
    for folder in ("sessions", "config", "cache"):
        (home / folder).mkdir(parents=True)
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "a", "text": "A text to judge."}\n')
    env = cli_env(tmp_path) | {"DEBATE_TUI_SESSIONS_DIR": str(home / "sessions"),
                               "DEBATE_TUI_CONFIG_DIR": str(home / "config"),
                               "DEBATE_TUI_CACHE_DIR": str(home / "cache")}
    cli = " ".join(f"'{part}'" for part in cli_command())
    script = (f"mount --bind '{home}' '{home}' && mount -o remount,bind,ro '{home}' && "
              f"{cli} config init; echo \"exit $?\"; {cli} batch '{items}' --out '{tmp_path}/r.jsonl' --demo; "
              f"echo \"exit $?\"; {cli} batch '{items}' --out '{tmp_path}/r.jsonl' --demo --no-cache; echo \"exit $?\"")
    command = private_mount(script)
    if command is None:
        pytest.skip("no private mount namespace here")
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("debate-tui: error:")]
    assert [line for line in done.stdout.splitlines() if line.startswith("exit")] == ["exit 2"] * 3, done.stdout
    assert len(errors) == 3, done.stderr
    assert str(home / "config" / "config.toml") in errors[0] and "DEBATE_TUI_CONFIG_DIR" in errors[0]
    assert str(home / "cache") in errors[1] and "--no-cache" in errors[1] and "--cache-dir" in errors[1]
    assert str(home / "sessions") in errors[2] and "--sessions-dir" in errors[2]


# ----- a full disk: one line, the last complete version kept, a batch resumable (issue 30) -----------------

FULL_DISK_DRIVER = r'''
import json, os, subprocess, sys
cli, root, out = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
small, full, half = f"{root}/small", f"{root}/full", f"{root}/half"
for where, size in ((small, "12k"), (full, "4k"), (half, "12k")):
    os.makedirs(where, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", where], check=True)
for where in (full, half):  # one page of filler: full is full, half has a page for its lock and one more
    with open(f"{where}/filler", "wb") as handle:
        handle.write(b"x" * 4096)
story, items, session = f"{root}/story.txt", f"{root}/items.jsonl", f"{root}/ok.json"
runs = {}
def run(name, *argv, env=None):
    done = subprocess.run([*cli, *argv], capture_output=True, text=True, env={**os.environ, **(env or {})})
    runs[name] = [done.returncode, done.stderr, done.stdout]
demo = ["run", "--demo", "--text", story]
run("session", *demo, "--session", f"{small}/s.json")
run("lock", *demo, "--sessions-dir", f"{full}/sessions")
run("report", *demo, "--session", session, "--report", f"{full}/r.md")
run("export", "export", session, "--out", f"{full}/e.md")
run("config", "config", "init", env={"DEBATE_TUI_CONFIG_DIR": f"{full}/config"})
run("cache", "batch", items, "--out", f"{root}/c.jsonl", "--demo", "--cache-dir", f"{full}/cache")
run("item-sessions", "batch", items, "--out", f"{root}/i.jsonl", "--demo", "--no-cache",
    "--sessions-dir", f"{full}/sessions")
run("results", "batch", items, "--out", f"{half}/r.jsonl", "--demo", "--no-cache")
runs["results-after-stop"] = open(f"{half}/r.jsonl", encoding="utf-8").read()
os.remove(f"{half}/filler")  # room again: the same command resumes
run("results-resumed", "batch", items, "--out", f"{half}/r.jsonl", "--demo", "--no-cache")
runs["leftovers"] = sorted(name for where in (small, full, half) for name in os.listdir(where) if ".tmp" in name)
runs["small-session"] = open(f"{small}/s.json", encoding="utf-8").read()
with open(out, "w", encoding="utf-8") as handle:
    json.dump(runs, handle)
'''


def test_a_full_disk_is_one_line_at_every_write_and_loses_nothing(tmp_path, story_file):
    """On small tmpfs file systems in a private mount namespace (ENOSPC for real, not simulated)."""
    import subprocess
    import sys

    from debate_tui.domain import Session

    (tmp_path / "story.txt").write_text(story_file.read_text())
    items = [{"id": f"item-{n}", "text": f"Text number {n} to judge. It has two sentences."} for n in range(18)]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(item) + "\n" for item in items))
    driver = tmp_path / "driver.py"
    driver.write_text(FULL_DISK_DRIVER)
    out = tmp_path / "runs.json"
    command = private_mount(f"exec '{sys.executable}' '{driver}' '{json.dumps(cli_command())}' '{tmp_path}' '{out}'")
    if command is None:
        pytest.skip("no private mount namespace here (the same paths are covered by simulated OSErrors elsewhere)")
    done = subprocess.run(command, env=cli_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    runs = json.loads(out.read_text())
    said = {}
    for name in ("session", "lock", "report", "export", "config", "cache", "item-sessions", "results"):
        code, err, _ = runs[name]
        assert code == 2, (name, err)
        said[name] = one_error_line("\n".join(line for line in err.splitlines()
                                              if line.startswith("debate-tui: error:")) + "\n" + (
            err if "Traceback" in err else ""))
        assert "No space left on device" in said[name] or "disk is full" in said[name], (name, said[name])
    assert f"{tmp_path}/small/s.json" in said["session"] and "the last complete version is kept" in said["session"]
    assert f"{tmp_path}/full/sessions" in said["lock"] and "--sessions-dir" in said["lock"]
    assert f"{tmp_path}/full/r.md" in said["report"] and "--report" in said["report"]
    assert f"{tmp_path}/full/e.md" in said["export"] and "--out" in said["export"]
    assert f"{tmp_path}/full/config" in said["config"] and "DEBATE_TUI_CONFIG_DIR" in said["config"]
    assert f"{tmp_path}/full/cache" in said["cache"] and "--no-cache" in said["cache"]
    assert f"{tmp_path}/full/sessions" in said["item-sessions"]
    assert f"{tmp_path}/half/r.jsonl" in said["results"]
    assert runs["leftovers"] == []
    assert Session.model_validate_json(runs["small-session"]).turns  # the last version that fitted, whole
    kept = [json.loads(line) for line in runs["results-after-stop"].split("\n")[:-1]]  # a cut-off last line aside
    assert 0 < len(kept) < len(items)
    code, err, stdout = runs["results-resumed"]
    assert code == 0, err
    summary = json.loads(stdout.splitlines()[-1])
    assert summary["skipped"] == len(kept) and summary["done"] == len(items) - len(kept)


async def test_the_tui_goes_on_when_its_state_cannot_be_saved(isolated_dirs, monkeypatch):
    """A simulated full disk under ui-state.json: one warning, said once, and the app keeps running."""
    import errno

    from debate_tui.ui import state as state_module
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.launch import Launch

    def full(path: Path, text: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(state_module, "write_atomic", full)
    app = DebateTUI(Launch(), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        app.theme = "textual-light"
        await wait_until(pilot, lambda: app._notifications, what="the warning")
        app.theme = "textual-dark"
        await pilot.pause(0.3)
        said = [str(n.message) for n in app._notifications]
        assert len(said) == 1 and "ui-state.json: No space left on device: free some space there" in said[0], said
        assert app.is_running


# ----- huge sessions in the TUI ------------------------------------------------------------------------------


def huge_session(tmp_path: Path, chars: int) -> Path:
    path = demo_session(tmp_path)
    session = read_session(path)
    session.turns[0].content = "The judge wrote at length.\n" * (chars // 27)
    write_session(path, session)
    return path


def test_the_report_screen_shows_a_huge_turn_trimmed_with_the_way_to_all_of_it(tmp_path, capfd):
    from debate_tui.ui.screens.report import ReportScreen
    from debate_tui.ui.trimmed import SHOWN_CHARS

    path = huge_session(tmp_path, 3 * SHOWN_CHARS)
    session = read_session(path)
    screen = ReportScreen(session)
    assert len(screen.markdown) < SHOWN_CHARS + 20_000
    hidden = len(session.turns[0].content) - SHOWN_CHARS
    assert f"{hidden:,} more characters of this turn not shown here" in screen.markdown
    assert f"debate-tui export {session.id}" in screen.markdown
    assert read_session(path).turns[0].content == session.turns[0].content  # the session is not changed
    capfd.readouterr()
    assert main(["export", str(path), "--format", "json"]) == 0  # the export has every character
    assert json.loads(capfd.readouterr().out)["turns"][0]["content"] == session.turns[0].content


async def test_a_replay_stops_within_a_chunk_of_a_long_turn():
    from debate_tui.domain import Session, Task, Turn
    from debate_tui.engine.control import RunControl
    from debate_tui.engine.events import Finished, TextDelta
    from debate_tui.ui.replay import Replayer

    session = Session(protocol="single", task=Task(text="A text."), criteria=[], agents=[])
    session.turns.append(Turn(slot=0, agent="Judge", role="judge", round=1, content="x" * 1_000_000))
    control = RunControl()
    seen: list[object] = []

    def emit(event: object) -> None:
        seen.append(event)
        if sum(isinstance(e, TextDelta) for e in seen) == 3:
            control.stop("stopped by the user")

    await Replayer(session, emit=emit, control=control, chunk_delay_s=0).run()
    assert sum(isinstance(e, TextDelta) for e in seen) == 3  # it went on to the end of the turn before
    assert isinstance(seen[-1], Finished) and seen[-1].status == "cancelled"


def test_batch_merge_never_writes_over_a_shard_or_an_unrelated_file(capfd, isolated_dirs):
    items = isolated_dirs / "items.jsonl"
    items.write_text('{"id": "a", "text": "A text to judge."}\n')
    results = isolated_dirs / "r.jsonl"
    assert main(["batch", str(items), "--out", str(results), "--demo"]) == 0
    before = results.read_bytes()
    notes = isolated_dirs / "notes.txt"
    notes.write_text("my notes\n")
    capfd.readouterr()
    for out in (results, notes):
        assert main(["batch", "merge", str(results), "--out", str(out)]) == 2
        assert "--out" in one_error_line(capfd.readouterr().err)
    assert results.read_bytes() == before and notes.read_text() == "my notes\n"
    merged = isolated_dirs / "all.jsonl"
    assert main(["batch", "merge", str(results), "--out", str(merged)]) == 0
    assert main(["batch", "merge", str(results), "--out", str(merged)]) == 0  # a previous merge is replaced


async def test_a_tui_run_on_a_full_disk_stops_in_one_line_and_keeps_the_last_version(isolated_dirs, monkeypatch):
    """A simulated ENOSPC under the TUI's session saves: the run stops saying which file and why, the file on
    disk stays the last version written whole (the TUI's worker used to end in an "internal error")."""
    import errno

    from debate_tui.config import load_config
    from debate_tui.ui import saving
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.launch import Launch
    from debate_tui.ui.screens.debate import DebateScreen

    store = load_config().session_store()
    session = make_session()
    path = await record(session, store, stop_after=1)
    before = path.read_bytes()

    def full(target: Path, text: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(saving, "write_atomic", full)
    app = DebateTUI(Launch(), client=RecordingDemo())
    async with app.run_test(size=(120, 36)) as pilot:
        app.resume(read_session(path), path)
        await wait_until(pilot, lambda: isinstance(app.screen, DebateScreen) and app.screen.finished, what="the run")
        said = [str(n.message) for n in app._notifications if "No space left on device" in str(n.message)]
        assert len(said) == 1 and f"cannot write the session file {path}" in said[0], said
        assert "internal error" not in " ".join(str(n.message) for n in app._notifications)
    assert path.read_bytes() == before
