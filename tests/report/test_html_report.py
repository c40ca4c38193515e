"""The HTML report (issue 29): one self-contained page, every located error marked, nothing from a model acts.

Structure and escaping are checked with a real HTML parser (html.parser): what a browser would build from the
file, not what a regular expression hopes it holds. Every hostile text the Markdown report survives is run
through the HTML export, each case named.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from debate_tui.cli import main
from debate_tui.domain import ErrorSpan, HumanAction
from debate_tui.locations import examples_dir
from debate_tui.report.exports import export_text, report_text
from debate_tui.report.html import render_html
from debate_tui.store import read_session
from debate_tui.textsafe import inert
from tests.helpers.inert import TERMINAL_ATTACK, Page, assert_inert


def mateval_example():
    return read_session(examples_dir() / "mateval-example.json")


def test_mateval_report_marks_each_located_error_with_type_explanation_deduction_and_finder():
    session = mateval_example()
    page = assert_inert(render_html(session))
    error = session.outcome.errors[0]
    marks = [value for value in page.values("mark", "title") if value.startswith("#1 ")]
    assert marks == ["#1 Repetition (REP)\nThe sentence repeats one said just before and adds nothing.\n"
                     "Deduction: -1\nFound by: Evaluator 1, round 1"]
    assert page.values("mark", "tabindex") and set(page.values("mark", "tabindex")) == {"0"}  # focus shows it too
    # the repeated sentence is the error's, at the repeat: not a second mark as a quote at its first place (issue 46)
    assert page.values("mark", "class") == ["t0"]
    assert "Repetition (REP) (1)" in page.words and "quoted by an agent" not in page.words  # legend
    assert error.quote in page.words
    for section in ("result", "text", "errors", "decided", "usage", "transcript"):
        assert section in page.values("section", "id")
    assert page.tags.count("details") == len(session.turns)  # the transcript: one collapsible turn each
    assert "Found by" in page.words
    assert "@media (prefers-color-scheme: dark)" in page.style and "@media print" in page.style


def test_a_mark_never_drifts_when_the_text_holds_escapes_before_it():
    session = mateval_example()
    text = "A\x1b[2J <b>x</b> & \u202e. Tom swam. Tom swam.\n"
    start = text.rindex("Tom swam.")
    session.task.text = text
    session.turns = []
    session.outcome.errors = [ErrorSpan(type="REP", quote="Tom swam.", start=start, end=start + 9)]
    page = Page(render_html(session))
    marked = page.words.split("A\\x1b[2J <b>x</b> & \\u202e. Tom swam. ", 1)[1]
    assert marked.startswith("Tom swam.#1 Repetition (REP)")  # the mark holds exactly the quote, then its tip


def test_an_error_is_painted_over_a_quote_inside_it():
    session = mateval_example()
    text = session.task.text
    start = text.index("He went to the pool every morning.")
    session.outcome.errors = [ErrorSpan(type="REP", quote=text[start:start + 34], start=start, end=start + 34)]
    session.turns = session.turns[:1]
    session.turns[0].content = 'It says "to the pool every morning" twice.'  # a quote inside the error, later
    page = Page(render_html(session))
    titles = [title.split("\n")[0] for title in page.values("mark", "title")]
    assert set(titles) == {"#1 Repetition (REP)"}  # the quote was painted over the error's middle


HOSTILE = {
    "terminal escapes (title, OSC 52 clipboard, clear screen, C1 CSI, NEL, RLO, zero width)": TERMINAL_ATTACK,
    "bidi controls": "safe\u202egnp.exe\u202c and \u2066isolate\u2069",
    "an unclosed HTML comment": "Good <!-- everything after this would be hidden",
    "a script element": "<script>alert(1)</script>",
    "a javascript: link in Markdown": "[click me](javascript:alert(1))",
    "a javascript: link as HTML": '<a href="javascript:alert(1)">click</a>',
    "an attribute break-out": '" onmouseover="alert(1)" x="',
    "an element with an event handler": "<img src=x onerror=alert(1)>",
    "a style that hides the page": "<style>body{display:none}</style>",
    "a closing tag for the page": "</body></html><script>alert(2)</script>",
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_text_is_inert_in_every_place_of_the_html_report(case):
    """The text everywhere a model or a user writes: the judged text, a quote, an explanation, a reply, an agent
    and criterion name, a human remark, a note, a pending question."""
    hostile = HOSTILE[case]
    session = mateval_example()
    session.task.text = f"Tom swam. {hostile} Tom swam.\n"
    session.outcome.errors = [ErrorSpan(type=f"REP{hostile}", quote=f"{hostile} Tom swam.", start=10,
                                        end=10 + len(hostile) + 10, explanation=hostile)]
    session.outcome.notes.append(hostile)
    session.outcome.scores = {hostile: -1.0}
    session.turns[0].content = f'It says "{hostile}" twice. {hostile}'
    session.turns[0].agent = hostile
    session.actions.append(HumanAction(kind="inject", after_turn=1, who=hostile, text=hostile))
    page = assert_inert(render_html(session))
    shown = inert(hostile)
    assert page.words.count(shown) >= 8, case  # shown as written (escapes visible), in every place
    assert any(shown in title for title in page.values("mark", "title")), case


def test_run_writes_html_by_suffix_and_export_writes_html_on_request(capfd, llm_server, story_file, tmp_path):
    reply = "Good <!-- x <script>alert(1)</script> [y](javascript:alert(1)) \x1b]52;c;ZQ==\x07\nScore: 3"
    llm_server.add_rule(reply)
    report, session = tmp_path / "report.html", tmp_path / "s.json"
    assert main(["run", "--protocol", "single", "--text", str(story_file), "--model", "openai/fake-model",
                 "--api-base", llm_server.base_url, "--report", str(report), "--session", str(session)]) == 0
    capfd.readouterr()
    page = assert_inert(report.read_text(encoding="utf-8"))
    assert "<script>alert(1)</script> [y](javascript:alert(1)) \\x1b]52;c;ZQ==\\x07" in page.words
    out = tmp_path / "export.html"
    assert main(["export", str(session), "--format", "html", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == report.read_text(encoding="utf-8")
    assert main(["export", str(session)]) == 0  # Markdown stays the default
    assert capfd.readouterr().out.startswith("# Evaluation report")


def test_report_format_follows_the_suffix():
    session = mateval_example()
    assert report_text(session, Path("r.HTML")).startswith("<!DOCTYPE html>")
    assert report_text(session, Path("r.htm")) == export_text(session, "html")
    assert report_text(session, Path("r.md")) == export_text(session, "md")


@pytest.mark.parametrize("path", sorted(examples_dir().glob("*.json")), ids=lambda p: p.stem)
def test_every_example_session_renders_to_a_valid_page(path):
    session = read_session(path)
    page = assert_inert(render_html(session))
    assert page.tags.count("details") == len(session.turns)
    assert f"{session.usage.calls} call" in page.words
    if session.outcome is not None and session.outcome.vote is not None:
        assert "Vote before discussion:" in page.words
