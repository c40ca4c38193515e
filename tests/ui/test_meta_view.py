"""The meta screen (`meta RESULTS --tui`): the table and the three pictures as tabs, drawn with plotext."""

from __future__ import annotations

from textual.widgets import Static, TabbedContent
from textual_plotext import PlotextPlot

from debate_tui.meta.evaluate import format_table, meta_evaluate
from debate_tui.meta.plots import plot_data
from debate_tui.ui.meta_view import MetaApp, confusion_text
from tests.helpers.cli import scored_rows


def app_for(rows: list[dict], title: str = "meta: results.jsonl") -> MetaApp:
    result = meta_evaluate(rows, "turn", bootstrap=0)
    return MetaApp(title, format_table(result, rows), plot_data(rows, result))


async def test_tabs_show_the_table_and_the_plots_at_80x24() -> None:
    app = app_for(scored_rows(), "meta: [bold]odd[/bold].jsonl")
    async with app.run_test(size=(80, 24)) as pilot:
        tabs = app.query_one(TabbedContent)
        assert tabs.active == "table"
        assert "coherence" in str(app.query_one("#table-text", Static).render())
        assert "[bold]odd[/bold]" in str(app.query_one("#heading", Static).render())  # names are not markup
        for key, tab in (("2", "scatter"), ("3", "calibration"), ("4", "cost")):
            await pilot.press(key)
            assert tabs.active == tab
            plot = app.query_one(f"#{tab}-plot", PlotextPlot)
            await pilot.pause()
            assert plot.size.width > 40 and plot.size.height >= 8
        await pilot.press("1")
        assert tabs.active == "table"


async def test_verdicts_show_a_confusion_matrix_and_missing_data_says_so() -> None:
    rows = [{"id": f"v{k}", "predicted_verdict": p, "human_verdict": h}
            for k, (p, h) in enumerate([("1", "1"), ("2", "1"), ("0", "0"), ("2", "2")])]
    app = app_for(rows)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("2")
        text = str(app.query_one("#confusion", Static).render())
        assert text == confusion_text(plot_data(rows, meta_evaluate(rows, "turn", bootstrap=0)).confusion or {})
        assert text.splitlines()[1].split() == ["text", "1", "1", "0"]  # human 1: judge said 1 once, 2 once
        assert not app.query(PlotextPlot)
        await pilot.press("4")
        assert "No protocol with an agreement figure" in str(app.query_one("#cost .note", Static).render())


async def test_an_empty_cost_tab_gives_metas_reason() -> None:
    """Constant judge scores: the cost tab says so, in meta's words, instead of guessing at the cause."""
    rows = [{"id": f"i{k}", "criterion": "coherence", "predicted": 4, "human": 1 + k % 5, "protocol": "single",
             "model": "m", "cost_usd": 0.001, "status": "completed"} for k in range(10)]
    app = app_for(rows)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        note = str(app.query_one("#cost .note", Static).render())
        assert "single / m coherence: the predicted scores are all equal (4)" in note
        assert "name no protocol" not in note
