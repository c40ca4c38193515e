"""The meta screen: `meta`'s table and its pictures in the terminal (`debate-tui meta RESULTS --tui`).

Tabs: the table (the same text `meta` prints), judge against human (or the
verdicts' confusion matrix), calibration, cost against agreement for the
protocols in the file, and risk against coverage (`--risk-coverage`). The
series come from `meta.plots.plot_data`, the same ones `meta --plot` writes
to a file; here plotext draws them, through its Textual widget (textual-plotext), so a plot is an ordinary widget that
resizes with the terminal. Names are made inert before plotext sees them.
"""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.widgets import Footer, Static, TabbedContent, TabPane
from textual_plotext import PlotextPlot

from debate_tui.meta.plots import VERDICT_NAMES, PlotData
from debate_tui.meta.stats import VERDICTS
from debate_tui.textsafe import inert
from debate_tui.ui.keymap import apply_keymap
from debate_tui.ui.literal import literal

TABS = ("table", "scatter", "calibration", "cost", "risk")


def confusion_text(confusion: dict[str, dict[str, int]]) -> str:
    """The verdicts' confusion matrix as fixed-width text: rows human, columns judge."""
    names = [VERDICT_NAMES[v] for v in VERDICTS]
    lines = ["human \\ judge " + "".join(f"{n:>8}" for n in names)]
    lines += [f"{VERDICT_NAMES[h]:<14}" + "".join(f"{confusion[h][p]:>8}" for p in VERDICTS) for h in VERDICTS]
    return "\n".join(lines)


def cost_note(data: PlotData) -> str:
    """Why the cost tab has nothing to draw, in `meta`'s own words."""
    if not data.cost_gaps:
        return "No protocol with an agreement figure: the rows name no protocol."
    return "No protocol with an agreement figure:\n" + "\n".join(f"  {gap}" for gap in data.cost_gaps)


class MetaApp(App[None]):
    TITLE = "debate-tui meta"
    CSS = """
    #heading { height: 1; text-wrap: nowrap; text-overflow: ellipsis; background: $primary-background;
               padding: 0 1; text-style: bold; }
    TabbedContent { height: 1fr; }
    TabPane { padding: 0; }
    PlotextPlot { height: 1fr; min-height: 8; }
    #table-text, #confusion { padding: 0 1; width: auto; text-wrap: nowrap; }
    .note { padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [
        *(Binding(str(i + 1), f"show('{tab}')", tab.capitalize(), id=f"meta.{tab}",
                  tooltip=f"Show the {tab} tab") for i, tab in enumerate(TABS)),
        Binding("q", "quit", "Quit", id="meta.quit", tooltip="Close the meta screen"),
    ]

    def __init__(self, title: str, table: str, data: PlotData):
        super().__init__()
        self.heading, self.table, self.data = title, table, data

    def compose(self) -> ComposeResult:
        yield Static(literal(self.heading), id="heading")
        with TabbedContent(initial="table"):
            with TabPane("1 Table", id="table"), ScrollableContainer():
                yield Static(literal(self.table), id="table-text")
            with TabPane("2 Judge vs human", id="scatter"):
                if self.data.scatter:
                    yield PlotextPlot(id="scatter-plot")
                if self.data.confusion is not None:
                    yield Static(literal(confusion_text(self.data.confusion)), id="confusion")
                if not self.data.scatter and self.data.confusion is None:
                    yield Static("No scored rows with a human label.", classes="note")
            with TabPane("3 Calibration", id="calibration"):
                if self.data.calibration:
                    yield PlotextPlot(id="calibration-plot")
                else:
                    yield Static("No scored rows with a human label.", classes="note")
            with TabPane("4 Cost", id="cost"):
                if self.data.cost:
                    yield PlotextPlot(id="cost-plot")
                else:
                    yield Static(literal(cost_note(self.data)), classes="note")
            with TabPane("5 Risk-coverage", id="risk"):
                if self.data.risk:
                    yield PlotextPlot(id="risk-plot")
                else:
                    yield Static("No risk-coverage curve: run meta with --risk-coverage on lines with a "
                                 "confidence and a label.", classes="note")
        yield Footer()

    def on_mount(self) -> None:
        apply_keymap(self)
        if self.data.scatter:
            plt = self.query_one("#scatter-plot", PlotextPlot).plt
            for name, points in self.data.scatter.items():
                plt.scatter([h for h, _ in points], [p for _, p in points], label=inert(name))
            plt.title("judge against human")
            plt.xlabel("human score")
            plt.ylabel("judge score")
        if self.data.calibration:
            plt = self.query_one("#calibration-plot", PlotextPlot).plt
            for name, levels in self.data.calibration.items():
                plt.plot([h for h, _, _ in levels], [m for _, m, _ in levels], label=inert(name), marker="dot")
            plt.title("calibration: mean judge score per human score")
            plt.xlabel("human score (rounded)")
        if self.data.cost:
            plt = self.query_one("#cost-plot", PlotextPlot).plt
            for name, cost, agreement in self.data.cost:
                plt.scatter([cost], [agreement], label=inert(name))
            plt.title(f"cost against agreement ({self.data.cost_label})")
            plt.xlabel("dollars per item")
        if self.data.risk:
            self._draw_risk(self.query_one("#risk-plot", PlotextPlot).plt)

    def _draw_risk(self, plt: Any) -> None:
        for name, points in self.data.risk.items():
            plt.plot([c for c, _ in points], [a for _, a in points], label=inert(name), marker="dot")
        if self.data.alpha is not None:
            plt.hline(1 - self.data.alpha)
        plt.title("risk against coverage" + (f" (line: 1 - alpha = {1 - self.data.alpha:g})"
                                             if self.data.alpha is not None else ""))
        plt.xlabel("share trusted")
        plt.ylabel("agreement among the trusted")

    def action_show(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
