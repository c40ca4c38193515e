"""Bad input, headless: one line saying why, exit code 2, and nothing lost or half-written.

Text that is merely unusual (invalid UTF-8, Windows line endings, right-to-left
and combining characters, control characters and escape sequences) is not bad:
it is read, kept as given (line endings unified), and shown inert.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debate_tui.cli import main
from debate_tui.inputs import InputError, decode_text
from debate_tui.store import read_session
from tests.helpers import STORY

RTL_AND_COMBINING = (
    "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd. "  # Hebrew
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645. "  # Arabic
    "Cafe\u0301 na\u0308ive; \u202eevil\u202c; family \U0001f469\u200d\U0001f467. "  # combining, RLO, ZWJ
    "He went to the pool. He went to the pool."
)
CONTROL = "Plain start \x1b[31mred\x1b[0m, bell\x07, CSI\x9b2J, OSC \x1b]8;;http://x\x07link. He swam. He swam."


def run(capsys, tmp_path: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["run", "--demo", "--session", str(tmp_path / "out" / "s.json"), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_refused(code: int, out: str, err: str, tmp_path: Path, *reasons: str) -> None:
    """Exit 2, one line on stderr with every reason, no JSON line, no session or report written."""
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("debate-tui: error: "), err
    for reason in reasons:
        assert reason in lines[0], lines[0]
    assert not (tmp_path / "out").exists()


def file_with(tmp_path: Path, name: str, content: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


@pytest.mark.parametrize(("content", "reasons"), [
    (b"", ["--text is empty"]),
    (b"  \n\t \r\n   ", ["--text is empty"]),
    (b"\xef\xbb\xbf \n", ["--text is empty"]),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ["--text looks like a binary file", "NUL"]),
    (b"text\x00with a NUL", ["binary"]),
])
def test_unusable_text_files(capsys, tmp_path, content, reasons):
    path = file_with(tmp_path, "input.txt", content)
    assert_refused(*run(capsys, tmp_path, "--text", str(path)), tmp_path, *reasons)
    assert path.read_bytes() == content  # the input is never touched


def test_empty_standard_input(capsys, tmp_path, monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"   \n")))
    assert_refused(*run(capsys, tmp_path, "--text", "-"), tmp_path, "--text is empty")


@pytest.mark.parametrize(("flag", "reasons"), [
    ("--text", ["--text: no such file"]),
    ("--source", ["--source: no such file"]),
])
def test_missing_files(capsys, tmp_path, story_file, flag, reasons):
    argv = ["--text", str(story_file)] if flag != "--text" else []
    assert_refused(*run(capsys, tmp_path, *argv, flag, str(tmp_path / "nope.txt")), tmp_path, *reasons)


def test_a_directory_is_not_a_text(capsys, tmp_path):
    assert_refused(*run(capsys, tmp_path, "--text", str(tmp_path)), tmp_path, "is a directory")


def test_a_socket_is_not_a_text_and_is_named_so(capsys, tmp_path):
    """The text is opened by the one bounded opener (`readfile.open_checked`), which checks the type first."""
    import socket

    listening = socket.socket(socket.AF_UNIX)
    place = tmp_path / "sock"
    listening.bind(str(place))
    try:
        assert_refused(*run(capsys, tmp_path, "--text", str(place)), tmp_path,
                       f"--text: {place} is a socket, not a regular file; not read")
    finally:
        listening.close()


def test_a_pipe_is_read_as_a_text_up_to_the_limit(tmp_path, monkeypatch):
    """`--text <(cmd)` hands a FIFO: read (bounded), not refused like a FIFO named as a session file."""
    import contextlib
    import os
    import threading

    from debate_tui.inputs import read_text

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_text, args=(STORY,))
    writer.start()
    assert read_text(str(fifo), "--text") == STORY
    writer.join()
    monkeypatch.setenv("DEBATE_TUI_MAX_TEXT_CHARS", "10")

    def endless() -> None:
        with contextlib.suppress(BrokenPipeError):  # the reader stops at the limit and closes its end
            fifo.write_bytes(b"x" * 100_000)

    writer = threading.Thread(target=endless)
    writer.start()
    with pytest.raises(InputError, match=r"over the limit of 10 characters .*stopped reading after 44 bytes"):
        read_text(str(fifo), "--text")
    writer.join()


def test_text_over_the_size_limit(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("DEBATE_TUI_MAX_TEXT_CHARS", "100")
    path = file_with(tmp_path, "long.txt", "word " * 30)
    assert_refused(*run(capsys, tmp_path, "--text", str(path)), tmp_path,
                   "--text has 150 characters, over the limit of 100", "DEBATE_TUI_MAX_TEXT_CHARS")
    monkeypatch.setenv("DEBATE_TUI_MAX_TEXT_CHARS", "lots")
    assert_refused(*run(capsys, tmp_path, "--text", str(path)), tmp_path,
                   "DEBATE_TUI_MAX_TEXT_CHARS must be a whole number")


def test_second_text_and_source_are_checked_alike(capsys, tmp_path, story_file):
    empty = file_with(tmp_path, "empty.txt", b"\n\n")
    binary = file_with(tmp_path, "bin.dat", b"\x00\x01")
    assert_refused(*run(capsys, tmp_path, "--text", str(story_file), "--text-b", str(empty)), tmp_path,
                   "--text-b is empty")
    assert_refused(*run(capsys, tmp_path, "--text", str(story_file), "--source", str(binary)), tmp_path,
                   "--source looks like a binary file")


def test_invalid_utf8_is_replaced_with_a_warning_and_the_run_goes_on(capsys, tmp_path):
    raw = "Caf\xe9 au lait. It was good. It was good.".encode("latin-1")
    code, out, err = run(capsys, tmp_path, "--text", str(file_with(tmp_path, "latin1.txt", raw)))
    assert code == 0
    assert "warning: --text is not valid UTF-8 (first bad byte at offset 3)" in err
    assert read_session(tmp_path / "out" / "s.json").task.text == "Caf\ufffd au lait. It was good. It was good."


def test_a_genuine_replacement_character_does_not_hide_invalid_bytes():
    warnings: list[str] = []
    assert decode_text("ok \ufffd".encode() + b" \xff", "--text", warnings.append) == "ok \ufffd \ufffd"
    assert warnings and "not valid UTF-8" in warnings[0]
    warnings.clear()
    assert decode_text("ok \ufffd".encode(), "--text", warnings.append) == "ok \ufffd"
    assert warnings == []


def test_windows_line_endings_and_a_bom_are_normalised_so_offsets_hold(capsys, tmp_path):
    raw = b"\xef\xbb\xbf" + STORY.replace(". ", ".\r\n").encode()
    code, _, _ = run(capsys, tmp_path, "--text", str(file_with(tmp_path, "crlf.txt", raw)))
    assert code == 0
    text = read_session(tmp_path / "out" / "s.json").task.text
    assert "\r" not in text and "\ufeff" not in text and text == STORY.replace(". ", ".\n")
    assert decode_text(b"a\rb\r\nc\n", "--text") == "a\nb\nc\n"


def test_the_form_unifies_line_endings_by_the_files_rule():
    """One rule: text typed or pasted on the setup form ends its lines as a file read by `run` does (an old Mac's
    lone "\\r" included), so a located error's offsets mean the same in both."""
    from debate_tui.ui.session_builder import build_task

    task = build_task({"text": "He swam.\rHe swam.\r\nHe was happy.", "text_b": "One.\rTwo."})
    assert (task.text, task.text_b) == (decode_text(b"He swam.\rHe swam.\r\nHe was happy.", "--text"), "One.\nTwo.")
    assert task.text == "He swam.\nHe swam.\nHe was happy."


def test_right_to_left_and_combining_characters_round_trip_unchanged(capsys, tmp_path):
    code, _, err = run(capsys, tmp_path, "--text", str(file_with(tmp_path, "rtl.txt", RTL_AND_COMBINING)))
    assert code == 0 and "warning" not in err
    session_path = tmp_path / "out" / "s.json"
    assert read_session(session_path).task.text == RTL_AND_COMBINING  # no normalisation (NFC), no stripping
    assert main(["export", str(session_path), "--format", "json", "--out", str(tmp_path / "e.json")]) == 0
    assert json.loads((tmp_path / "e.json").read_text(encoding="utf-8"))["task"]["text"] == RTL_AND_COMBINING


def test_control_characters_and_escapes_are_stored_as_given_and_shown_inert(capsys, tmp_path):
    code, out, err = run(capsys, tmp_path, "--text", str(file_with(tmp_path, "ansi.txt", CONTROL)))
    assert code == 0
    assert read_session(tmp_path / "out" / "s.json").task.text == CONTROL
    assert not any(ch in out + err for ch in "\x1b\x07\x9b")
    assert main(["export", str(tmp_path / "out" / "s.json"), "--format", "json"]) == 0
    exported = capsys.readouterr().out
    assert not any(ch in exported for ch in "\x1b\x07\x9b")
    assert json.loads(exported)["task"]["text"] == CONTROL  # inert on the terminal, the same data


@pytest.mark.parametrize(("argv", "reasons"), [
    (["--criteria", "coherense"], ["unknown criterion 'coherense'", "valid: coherence, consistency"]),
    (["--criteria", "coherence,,fluency,nonsense"], ["unknown criterion 'nonsense'", "valid: "]),
    (["--critic-persona", "nobody"], ["unknown persona 'nobody'", "valid: strictly-negative"]),
    (["--protocol", "chateval", "--personas", "critic,ghost"], ["unknown persona 'ghost'", "general-public"]),
    (["--rounds", "0"], ["--rounds"]),
])
def test_unknown_names_list_the_valid_ones(capsys, tmp_path, story_file, argv, reasons):
    assert_refused(*run(capsys, tmp_path, "--text", str(story_file), *argv), tmp_path, *reasons)


@pytest.mark.parametrize(("toml", "reasons"), [
    ('[[criterion]]\nname = "clarity"\ndescription = "Is it clear?"\nlow = 1\nhigh 5\n',
     ["line 5", "Expected '=' after a key"]),
    ('[[criterion]]\nname = "clarity\ndescription = "x"\n', ["line 2", "Illegal character"]),
    ('[[criterion]]\nname = "clarity"\n', ["[[criterion]] number 1", "description: Field required"]),
    ('[[criterion]]\nname = "a"\ndescription = "x"\n\n'
     '[[criterion]]\nname = "b"\ndescription = "y"\nlow = 5\nhigh = 1\n',
     ["[[criterion]] number 2", "low (5.0) must be below high (1.0)"]),
    ('[criteria]\nname = "a"\n', ["no [[criterion]] table found"]),
])
def test_malformed_criteria_toml_names_file_line_and_problem(capsys, tmp_path, story_file, toml, reasons):
    criteria = file_with(tmp_path, "mine.toml", toml)
    assert_refused(*run(capsys, tmp_path, "--text", str(story_file), "--criteria", str(criteria)), tmp_path,
                   str(criteria), *reasons)


def test_criteria_toml_not_utf8_or_missing(capsys, tmp_path, story_file):
    latin = file_with(tmp_path, "latin.toml", '[[criterion]]\nname = "caf\xe9"\n'.encode("latin-1"))
    assert_refused(*run(capsys, tmp_path, "--text", str(story_file), "--criteria", str(latin)), tmp_path,
                   str(latin), "not UTF-8")
    missing = tmp_path / "missing.toml"
    assert_refused(*run(capsys, tmp_path, "--text", str(story_file), "--criteria", str(missing)), tmp_path,
                   str(missing), "cannot read")


def test_malformed_persona_toml_names_file_line_and_problem(capsys, tmp_path, story_file):
    personas = file_with(tmp_path, "people.toml", '[[persona]]\nname = "grump"\nrole_prompt = never quoted\n')
    assert_refused(*run(capsys, tmp_path, "--text", str(story_file), "--protocol", "chateval", "--personas",
                        str(personas)), tmp_path, str(personas), "line 3", "Invalid value")
    incomplete = file_with(tmp_path, "incomplete.toml", '[[persona]]\nname = "grump"\n')
    assert_refused(*run(capsys, tmp_path, "--text", str(story_file), "--protocol", "chateval", "--personas",
                        str(incomplete)), tmp_path, str(incomplete), "[[persona]] number 1", "role_prompt")


def test_a_text_the_protocol_cannot_judge(capsys, tmp_path, story_file):
    assert_refused(*run(capsys, tmp_path, "--text", str(story_file), "--text-b", str(story_file),
                        "--protocol", "mateval"), tmp_path, "MATEval judges one text")


def test_input_error_is_one_line_even_for_a_multiline_cause():
    with pytest.raises(InputError) as caught:
        decode_text(b"\x00", "--text")
    assert "\n" not in str(caught.value)
