"""Two debates side by side (issue 44): the scores of each at the top, their errors on their texts, the rounds
aligned, and the first turn where they part marked.

Everything shown comes from `report.compare.SessionComparison`; this screen only lays it out. Text from the
sessions (turns, quotes, ids) goes through `literal`, so it is never markup. Each side's turns are shown as the
other screens show them (`trimmed`: a huge turn cut, with the way to all of it), while the comparison itself runs
on the whole sessions. The screen scrolls as one page: at 80 columns the two columns are narrow but both there.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import zip_longest

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from debate_tui.domain import Session, Turn
from debate_tui.report.compare import SessionComparison, score_text
from debate_tui.ui.literal import literal, one_line
from debate_tui.ui.screens.base import BaseScreen
from debate_tui.ui.trimmed import trimmed
from debate_tui.ui.widgets.agent_pane import turn_result
from debate_tui.ui.widgets.footer import AppFooter
from debate_tui.ui.widgets.highlighted_text import HighlightedText, type_colours

PARTS_HERE = "── they part here ──"


def side_line(name: str, session: Session) -> str:
    return (f"{name} = {session.id} ({session.protocol}, {', '.join(session.models)}, {session.status}, "
            f"{len(session.turns)} turn{'' if len(session.turns) == 1 else 's'})")


def parting_line(comparison: SessionComparison) -> str:
    """Where the debates part, in words (the same facts `compare` prints)."""
    text = "the same text" if comparison.same_text else "different texts"
    if comparison.parts_at is not None:
        return f"{text}; {comparison.shared_turns} leading turns shared, they part at turn {comparison.parts_at + 1}"
    shorter = min(len(comparison.a.turns), len(comparison.b.turns))
    return f"{text}; they never part: the first {shorter} turns of each are the same"


def score_lines(comparison: SessionComparison) -> str:
    """The criteria rows (and a pair's verdicts) as an aligned table."""
    rows = [("criterion", "A", "B", "B - A")]
    rows += [(one_line(row.criterion, 24), score_text(row.a), score_text(row.b), score_text(row.delta, True))
             for row in comparison.criteria]
    if comparison.verdict is not None:
        rows.append(("verdict", comparison.verdict[0] or "none", comparison.verdict[1] or "none", ""))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join("  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in
                               enumerate(zip(row, widths, strict=True))).rstrip() for row in rows)


def error_lines(comparison: SessionComparison) -> list[str]:
    """Each error once: found by both (with both places), by A only, by B only."""
    lines = [f"both    {e.a.type}  A {e.a.where}, B {e.b.where}  {one_line(e.a.quote, 60)!r}"
             for e in comparison.both]
    lines += [f"only A  {e.type}  {e.where}  {one_line(e.quote, 60)!r}" for e in comparison.only_a]
    lines += [f"only B  {e.type}  {e.where}  {one_line(e.quote, 60)!r}" for e in comparison.only_b]
    return lines


def turn_view(number: int, turn: Turn) -> Static:
    """One turn: its number, agent, criterion and result on a line, then its text exactly as written."""
    heading = " · ".join([f"#{number} {turn.agent}", *([turn.criterion] if turn.criterion else []),
                          turn_result(turn)])  # the round is said once above the row
    body = turn.content + (f"\n[error: {turn.error}]" if turn.error else "")
    return Static(Content.assemble(literal(heading, "bold $accent"), "\n", literal(body)), classes="compare-turn")


class CompareScreen(BaseScreen[None]):
    """Display only: built from a comparison, nothing on it changes a session."""

    help_name = "compare"
    AUTO_FOCUS = "#compare-scroll"
    DEFAULT_CSS = """
    #compare-scroll { height: 1fr; }
    .compare-head { padding: 0 1; }
    .compare-title { padding: 0 1; text-style: bold; background: $panel; }
    .compare-side { width: 1fr; height: auto; }
    .compare-row { height: auto; }
    .compare-round { padding: 0 1; color: $text-muted; }
    .compare-parts { padding: 0 1; color: $warning; text-style: bold; }
    .compare-turn { padding: 0 1; margin-bottom: 1; }
    .compare-none { padding: 0 1; color: $text-muted; }
    .compare-text { height: auto; max-height: 12; border: round $panel; padding: 0 1; width: 1fr; }
    """
    BINDINGS = [
        Binding("escape", "back", "Back", id="compare.back",
                tooltip="Return to the previous screen (the sessions list, or the changed items)"),
        Binding("p", "to_part", "Part", id="compare.part",
                tooltip="Scroll to the first turn where the debates part (home: back to the scores)"),
    ]

    def __init__(self, comparison: SessionComparison) -> None:
        super().__init__()
        self.comparison = comparison
        self.shown_a, self.shown_b = trimmed(comparison.a), trimmed(comparison.b)
        self.numbers_a = {id(t): n for n, t in enumerate(comparison.a.turns, 1)}
        self.numbers_b = {id(t): n for n, t in enumerate(comparison.b.turns, 1)}

    def compose(self) -> ComposeResult:
        c = self.comparison
        with VerticalScroll(id="compare-scroll"):
            yield Static(literal("\n".join([side_line("A", c.a), side_line("B", c.b), parting_line(c)])),
                         classes="compare-head", id="compare-sides")
            yield Static(literal("Scores", "bold"), classes="compare-title")
            yield Static(literal(score_lines(c)), classes="compare-head", id="compare-scores")
            yield from self._errors()
            yield Static(literal("The debates, round by round", "bold"), classes="compare-title")
            with Horizontal(classes="compare-row"):
                yield Static(literal(f"A  {one_line(c.a.id, 40)}", "bold"), classes="compare-side compare-head")
                yield Static(literal(f"B  {one_line(c.b.id, 40)}", "bold"), classes="compare-side compare-head")
            yield from self._rounds()
        yield AppFooter()

    def _errors(self) -> Iterator[Widget]:
        c = self.comparison
        lines = error_lines(c)
        if not lines:
            return
        yield Static(literal(f"Errors: {len(c.both)} in both, {len(c.only_a)} only in A, {len(c.only_b)} only in B",
                             "bold"), classes="compare-title")
        yield Static(literal("\n".join(lines)), classes="compare-head", id="compare-errors")
        errors_a = list(c.a.outcome.errors) if c.a.outcome else []
        errors_b = list(c.b.outcome.errors) if c.b.outcome else []
        colours = type_colours(errors_a + errors_b)
        with Horizontal(classes="compare-row"):
            for name, session, errors in (("A", c.a, errors_a), ("B", c.b, errors_b)):
                text = HighlightedText(session.task.text, [(i, e) for i, e in enumerate(errors) if e.which == "a"],
                                       colours, classes="compare-text", id=f"compare-text-{name.lower()}")
                text.border_title = f"{name}'s text, its errors painted"
                yield text

    def _rounds(self) -> Iterator[Widget]:
        shown_a = dict(zip(map(id, self.comparison.a.turns), self.shown_a.turns, strict=True))
        shown_b = dict(zip(map(id, self.comparison.b.turns), self.shown_b.turns, strict=True))
        for segment in self.comparison.segments():
            if segment.parts_here:
                yield Static(literal(f"{PARTS_HERE} turn {self.comparison.shared_turns + 1} is the first that differs"),
                             classes="compare-parts", id="compare-parts")
            yield Static(literal(f"round {segment.round}"), classes="compare-round")
            for turn_a, turn_b in zip_longest(segment.a, segment.b):  # the k-th turn of the round beside its twin
                yield Horizontal(self._side(turn_a, self.numbers_a, shown_a),
                                 self._side(turn_b, self.numbers_b, shown_b), classes="compare-row")

    @staticmethod
    def _side(turn: Turn | None, numbers: dict[int, int], shown: dict[int, Turn]) -> Widget:
        if turn is None:
            return Static("(no turn here)", classes="compare-side compare-none")
        view = turn_view(numbers[id(turn)], shown[id(turn)])
        view.add_class("compare-side")
        return view

    def action_to_part(self) -> None:
        if marks := self.query("#compare-parts"):
            self.query_one("#compare-scroll", VerticalScroll).scroll_to_widget(marks.first(), top=True, animate=False)
        else:
            self.notify("The debates never part: one's turns are all the other's.")

    def action_back(self) -> None:
        self.dismiss()  # whoever opened it decides what is under it (the `compare --tui` app closes)
