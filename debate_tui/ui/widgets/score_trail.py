"""A small per-agent chart of how its score moved over the rounds: bars on the criterion's scale, then numbers."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import Static

from debate_tui.ui.widgets.kept_lines import KeptLines

BARS = "▁▂▃▄▅▆▇█"
SHOWN = 12
"""Only the latest points are drawn: a pane is narrow and the report has them all."""


def bar(value: float, low: float, high: float) -> str:
    span = high - low
    position = 0.0 if span <= 0 else (min(max(value, low), high) - low) / span
    return BARS[round(position * (len(BARS) - 1))]


def trail(points: list[tuple[float, float, float]], results: list[str] | None = None) -> Content:
    """`points` are (value, low, high); returns e.g. '▇▅▅  5 → 4 → 4'. Without a score, what the agent's
    turns produced ('objects → NO ISSUE', 'verdict 2'), latest last; 'no score yet' before its first turn."""
    if not points:
        return Content.styled(" → ".join(results[-3:]) if results else "no score yet", "dim")
    recent = points[-SHOWN:]
    chart = "".join(bar(v, lo, hi) for v, lo, hi in recent)
    numbers = " → ".join(f"{v:g}" for v, _, _ in recent[-5:])
    return Content.assemble((chart, "bold"), "  ", (numbers, "dim"))


class ScoreTrail(Static, KeptLines):
    """One line, redrawn once per scored turn, never per token, and never laid out again."""

    DEFAULT_CSS = "ScoreTrail { height: 1; }"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(trail([]), **kwargs)
        self.points: list[tuple[float, float, float]] = []
        self.results: list[str] = []
        """What the turns without a score concluded: shown while there is no score to chart."""

    def add(self, value: float, low: float, high: float) -> None:
        self.points.append((value, low, high))
        self.update(trail(self.points), layout=False)

    def add_result(self, result: str) -> None:
        """A turn that gave no score ended: say what it gave, rather than "no score yet" beside it."""
        self.results.append(result)
        if not self.points:
            self.update(trail(self.points, self.results), layout=False)
