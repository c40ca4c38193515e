"""Issue 46 on the report screen: it draws at once and answers keys while the report is built; the errors tab
wraps each error's explanation (not who quoted it) at 80 columns and numbers the text's lines; a person's
override reads "set by you"."""

from __future__ import annotations

import threading

from textual.widgets import DataTable, TabbedContent

import debate_tui.ui.screens.report as report_screen
from debate_tui.domain import HumanAction, Session
from debate_tui.engine.runner import apply_overrides
from debate_tui.locations import examples_dir
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from debate_tui.ui.screens.report import ReportScreen
from tests.helpers.ui import report_built, wait_until


def example(name: str) -> Session:
    return Session.model_validate_json((examples_dir() / f"{name}-example.json").read_text(encoding="utf-8"))


async def open_report(pilot, session: Session) -> ReportScreen:
    pilot.app.open_report(session)
    return await report_built(pilot)


async def test_the_report_screen_draws_and_answers_keys_before_the_report_is_built(monkeypatch):
    """`r` took 0.66-1.7 s (3-6 s under load) with no feedback: the report was built before its screen drew."""
    release = threading.Event()
    real = report_screen.render

    def slow_render(*args, **kwargs):  # a report that takes long to build: it waits until the test lets it
        release.wait(timeout=20)
        return real(*args, **kwargs)

    monkeypatch.setattr(report_screen, "render", slow_render)
    app = DebateTUI(Launch())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.open_report(example("mateval"))
        await wait_until(pilot, lambda: isinstance(app.screen, ReportScreen), what="the report screen", timeout=5)
        screen = app.screen
        await wait_until(pilot, lambda: any("Building the report (26 turns)" in str(w.render())
                                            for w in screen.query("#report-building")), what="the notice", timeout=5)
        await pilot.press("2")
        await wait_until(pilot, lambda: screen.query_one(TabbedContent).active == "errors", what="the key answered",
                         timeout=5)
        assert not screen.ready and not release.is_set()
        release.set()
        await report_built(pilot)
        assert not screen.query("#report-building")
        assert screen.query_one("#error-table", DataTable).row_count == 1
        assert "## Result" in screen.query_one("#report-markdown").source


async def test_the_errors_tab_wraps_each_explanation_and_says_who_raised_it_at_80_columns():
    """The "Explanation" column showed who quoted a passage ("Plain, round 1"), and was cut at the screen edge."""
    session = example("mateval")
    [error] = session.outcome.errors
    app = DebateTUI(Launch())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = await open_report(pilot, session)
        table = screen.query_one("#error-table", DataTable)
        explanation = table.get_row_at(0)[-1]
        assert str(explanation) == f"{error.explanation} — Evaluator 1, round 1"
        assert [str(c.label) for c in table.columns.values()][-1] == "Explanation"
        row = table.rows[next(iter(table.rows))]
        assert row.height > 1, "the explanation wraps over several lines"
        assert table.virtual_size.width <= 80, "nothing is cut at the screen edge"


async def test_the_text_view_numbers_its_lines_as_the_locations_count_them():
    session = example("chateval")
    session.task.text = "Tom wanted to learn to swim.\nHe went to the pool every morning.\n"
    session.turns[0].content = 'The sentence "He went to the pool every morning." is fine.'
    app = DebateTUI(Launch())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = await open_report(pilot, session)
        table = screen.query_one("#error-table", DataTable)
        assert str(table.get_row_at(0)[2]) == "2:1"
        assert str(table.get_row_at(0)[-1]) == "quoted in the debate (no deduction) — General Public, round 1"
        lines = [str(screen.query_one(f"#line-{n}").render()) for n in range(2)]
        assert lines == ["1 │ Tom wanted to learn to swim.", "2 │ He went to the pool every morning."]
        assert not screen.query("#line-2"), "the final newline makes no empty numbered line"


async def test_an_override_on_the_report_screen_reads_as_yours():
    app = DebateTUI(Launch())
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        session = example("chateval")
        action = HumanAction(kind="override", criterion="coherence", value=2.0, who=app.user, after_turn=6)
        session.actions.append(action)
        session.outcome = apply_overrides(session.outcome, [action])
        screen = await open_report(pilot, session)
        source = screen.query_one("#report-markdown").source
        assert "| coherence | 1-5 | 2, set by you; the agents said 4, 4, 4 |" in source
        assert "The result is a person's: coherence 2, set by you; the agents said 4, 4, 4." in source
