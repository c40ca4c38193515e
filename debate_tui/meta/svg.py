"""`meta`'s plots as inline SVG, drawn from the same `PlotData` as `--plot` and the meta screen.

Plain SVG text written here (no matplotlib, no style element, no link): it
sits inside the HTML page under that page's Content-Security-Policy, and
works without the `plot` extra. Names from the rows (criteria, protocols) are
escaped text.
"""

from __future__ import annotations

from collections.abc import Callable

from debate_tui.htmlpage import esc
from debate_tui.meta.plots import VERDICT_NAMES, PlotData
from debate_tui.meta.stats import VERDICTS

WIDTH, HEIGHT = 380, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 12, 28, 44
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def _scale(values: list[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    if low == high:
        low, high = low - 1, high + 1
    pad = (high - low) * 0.05
    return low - pad, high + pad


class Axes:
    """One panel: data coordinates to pixels, the frame, ticks at the ends and the middle, titles."""

    def __init__(self, xs: list[float], ys: list[float]) -> None:
        self.x0, self.x1 = _scale(xs)
        self.y0, self.y1 = _scale(ys)

    def x(self, value: float) -> float:
        return LEFT + (value - self.x0) / (self.x1 - self.x0) * (WIDTH - LEFT - RIGHT)

    def y(self, value: float) -> float:
        return HEIGHT - BOTTOM - (value - self.y0) / (self.y1 - self.y0) * (HEIGHT - TOP - BOTTOM)

    def frame(self, title: str, xlabel: str, ylabel: str) -> list[str]:
        parts = [f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" height="{HEIGHT - TOP - BOTTOM}" '
                 'fill="none" stroke="currentColor" stroke-opacity="0.5"/>',
                 _text(WIDTH / 2, 18, title, "middle", bold=True),
                 _text(WIDTH / 2, HEIGHT - 8, xlabel, "middle"),
                 f'<text x="12" y="{HEIGHT / 2}" transform="rotate(-90 12 {HEIGHT / 2})" text-anchor="middle" '
                 f'font-size="12" fill="currentColor">{esc(ylabel)}</text>']
        for fraction in (0.0, 0.5, 1.0):
            xv = self.x0 + (self.x1 - self.x0) * fraction
            yv = self.y0 + (self.y1 - self.y0) * fraction
            parts.append(_text(self.x(xv), HEIGHT - BOTTOM + 14, f"{xv:.3g}", "middle"))
            parts.append(_text(LEFT - 4, self.y(yv) + 4, f"{yv:.3g}", "end"))
        return parts


def _text(x: float, y: float, text: str, anchor: str = "start", bold: bool = False) -> str:
    weight = ' font-weight="bold"' if bold else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="12" fill="currentColor"{weight}>'
            f"{esc(text)}</text>")


def _svg(label: str, parts: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{esc(label)}" '
            'font-family="system-ui, sans-serif">' + "".join(parts) + "</svg>")


def _legend(names: list[str]) -> list[str]:
    return [f'<rect x="{LEFT + 6}" y="{TOP + 6 + 15 * i}" width="10" height="10" fill="{COLOURS[i % len(COLOURS)]}"/>'
            + _text(LEFT + 20, TOP + 15 + 15 * i, name) for i, name in enumerate(names)]


def scatter(data: PlotData) -> str:
    points = [p for series in data.scatter.values() for p in series]
    axes = Axes([h for h, _ in points], [p for _, p in points])
    parts = axes.frame("judge against human", "human score", "judge score")
    for index, series in enumerate(data.scatter.values()):
        colour = COLOURS[index % len(COLOURS)]
        parts += [f'<circle cx="{axes.x(h):.1f}" cy="{axes.y(p):.1f}" r="3" fill="{colour}" fill-opacity="0.6"/>'
                  for h, p in series]
    return _svg("judge against human", parts + _legend(list(data.scatter)))


def calibration(data: PlotData) -> str:
    levels = [level for series in data.calibration.values() for level in series]
    axes = Axes([h for h, _, _ in levels], [m for _, m, _ in levels])
    parts = axes.frame("calibration", "human score (rounded)", "mean judge score")
    for index, series in enumerate(data.calibration.values()):
        colour = COLOURS[index % len(COLOURS)]
        line = " ".join(f"{axes.x(h):.1f},{axes.y(m):.1f}" for h, m, _ in series)
        parts.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts += [f'<circle cx="{axes.x(h):.1f}" cy="{axes.y(m):.1f}" r="3.5" fill="{colour}"/>' for h, m, _ in series]
    return _svg("calibration", parts + _legend(list(data.calibration)))


def confusion(data: PlotData) -> str:
    assert data.confusion is not None
    grid = [[data.confusion[h][p] for p in VERDICTS] for h in VERDICTS]
    top = max(max(row) for row in grid) or 1
    size = (HEIGHT - TOP - BOTTOM) / len(VERDICTS)
    parts = [_text(WIDTH / 2, 18, "verdicts (rows: human, columns: judge)", "middle", bold=True)]
    for i, row in enumerate(grid):
        parts.append(_text(LEFT + 30, TOP + size * (i + 0.5) + 4, VERDICT_NAMES[VERDICTS[i]], "end"))
        for j, count in enumerate(row):
            x, y = LEFT + 40 + j * size, TOP + i * size
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{size:.1f}" height="{size:.1f}" fill="#1f77b4" '
                         f'fill-opacity="{0.1 + 0.8 * count / top:.2f}" stroke="currentColor" stroke-opacity="0.3"/>')
            parts.append(_text(x + size / 2, y + size / 2 + 4, str(count), "middle", bold=True))
    parts += [_text(LEFT + 40 + (j + 0.5) * size, HEIGHT - BOTTOM + 16, VERDICT_NAMES[v], "middle")
              for j, v in enumerate(VERDICTS)]
    return _svg("verdicts", parts)


def cost(data: PlotData) -> str:
    axes = Axes([c for _, c, _ in data.cost], [a for _, _, a in data.cost])
    parts = axes.frame("cost against agreement", "dollars per item", data.cost_label)
    for index, (name, dollars, agreement) in enumerate(data.cost):
        x, y = axes.x(dollars), axes.y(agreement)
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{COLOURS[index % len(COLOURS)]}"/>')
        right_half = x > WIDTH / 2  # the label on the side with room
        parts.append(_text(x - 6 if right_half else x + 6, y - 4 - 12 * index, name,  # stacked: runs may share a point
                           "end" if right_half else "start"))
    return _svg("cost against agreement", parts)


def panels(data: PlotData) -> list[str]:
    """Every panel that has data, as one <svg> element each."""
    drawn: list[tuple[object, Callable[[PlotData], str]]] = [
        (data.scatter, scatter), (data.calibration, calibration), (data.confusion, confusion), (data.cost, cost)]
    return [draw(data) for has, draw in drawn if has]


def versus(points: list[tuple[float, float]], label_a: str, label_b: str) -> str:
    """One judge's score against the other's per item, with the diagonal where they are equal."""
    axes = Axes([a for a, _ in points], [b for _, b in points])
    parts = axes.frame("A against B per item", f"A: {label_a}", f"B: {label_b}")
    low, high = max(axes.x0, axes.y0), min(axes.x1, axes.y1)
    if low < high:
        parts.append(f'<line x1="{axes.x(low):.1f}" y1="{axes.y(low):.1f}" x2="{axes.x(high):.1f}" '
                     f'y2="{axes.y(high):.1f}" stroke="currentColor" stroke-opacity="0.4" stroke-dasharray="4 3"/>')
    parts += [f'<circle cx="{axes.x(a):.1f}" cy="{axes.y(b):.1f}" r="3" fill="{COLOURS[0]}" fill-opacity="0.5"/>'
              for a, b in points]
    return _svg("A against B per item", parts)
