"""The Markdown report of every example session reads right: headings keep their blank lines and
counts agree in number ("1 call", "after 1 iteration"); the same for a run waiting for a person."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from debate_tui.report.markdown import render
from debate_tui.store import read_session
from tests.helpers import REPO

EXAMPLES = sorted((REPO / "debate_tui" / "data" / "sessions").glob("*.json"))
ONE_PLURAL = re.compile(r"(?<![\d.,])\b1 (?:calls|iterations|rounds|errors|words|turns|referees|evaluators|"
                        r"discussion rounds|prompt tokens|completion tokens)\b")


def check_layout(report: str) -> None:
    lines = report.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#"):
            assert i == 0 or lines[i - 1] == "", f"no blank line before {line!r}"
            assert i + 1 < len(lines) and lines[i + 1] == "", f"no blank line after {line!r}"
    assert not ONE_PLURAL.search(report), ONE_PLURAL.search(report)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_reports_read_right(path: Path) -> None:
    check_layout(render(read_session(path)))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_a_report_without_a_result_reads_right(path: Path) -> None:
    session = read_session(path)
    session.outcome, session.status, session.pending_question = None, "needs_human", "Which text is better?"
    report = render(session)
    check_layout(report)
    assert "No result yet: the run waits for a person's decision." in report
    assert "**Undecided:** Which text is better?" in report


@pytest.mark.parametrize(("status", "said"), [
    ("failed", "No result: the run failed."),
    ("cancelled", "No result: the run was stopped before its end (resumable: debate-tui resume, or u on the "
                  "sessions list)."),
])
def test_a_run_without_a_result_says_how_it_ended_in_words_and_how_to_go_on(status, said):
    """Issue 46: "the run is failed"; a session closed with ctrl+q read "the run is cancelled", no hint of `u`."""
    from debate_tui.report.facts import no_result

    session = read_session(REPO / "debate_tui/data/sessions/debate-example.json")
    session.outcome, session.status, session.error = None, status, None
    assert no_result(session) == said
    assert said in render(session)


def test_the_status_line_counts_one_call_in_the_singular():
    from debate_tui.ui.widgets.status_line import StatusLine

    line = StatusLine()
    line.calls = 1
    assert "1 call │" in str(line.render()) and "1 calls" not in str(line.render())
