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
from debate_tui.ui.widgets.side_by_side import Cell, Label, Pair, Row, SideBySide

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


def turn_cell(number: int, turn: Turn) -> Cell:
    """One turn: its number, agent, criterion, result and how it ended ("truncated at 200 tokens") on a
    line, then its text exactly as written."""
    heading = " · ".join([f"#{number} {turn.agent}", *([turn.criterion] if turn.criterion else []),
                          turn_result(turn), *([turn.ending] if turn.ending else [])])  # the round: above the row
    return Cell(heading, turn.content + (f"\n[error: {turn.error}]" if turn.error else ""))


def debate_rows(comparison: SessionComparison, shown_a: Session, shown_b: Session) -> list[Row]:
    """Both debates as rows: a label per round, each turn beside its twin (the k-th of the round on each
    side), and the parting label above the first turn that differs. `shown_*` hold the turns as displayed
    (`trimmed`), in the same order as the compared sessions' turns."""
    numbered: dict[int, tuple[int, Turn]] = {}
    for session, shown in ((comparison.a, shown_a), (comparison.b, shown_b)):
        numbered |= {id(turn): (number, view) for number, (turn, view) in
                     enumerate(zip(session.turns, shown.turns, strict=True), 1)}

    def cell(turn: Turn | None) -> Cell | None:
        return None if turn is None else turn_cell(*numbered[id(turn)])

    rows: list[Row] = [Pair(Cell(f"A  {one_line(comparison.a.id, 40)}"), Cell(f"B  {one_line(comparison.b.id, 40)}"))]
    for segment in comparison.segments():
        if segment.parts_here:
            rows.append(Label(f"{PARTS_HERE} turn {comparison.shared_turns + 1} is the first that differs", "parts"))
        rows.append(Label(f"round {segment.round}"))
        rows += [Pair(cell(a), cell(b)) for a, b in zip_longest(segment.a, segment.b)]
    return rows


class CompareScreen(BaseScreen[None]):
    """Display only: built from a comparison, nothing on it changes a session."""

    help_name = "compare"
    AUTO_FOCUS = "#compare-scroll"
    DEFAULT_CSS = """
    #compare-scroll { height: 1fr; scrollbar-gutter: stable; }  /* one width: the debates are drawn once, not twice */
    .compare-head { padding: 0 1; }
    .compare-title { padding: 0 1; text-style: bold; background: $panel; }
    .compare-row { height: auto; }
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
        self.rows = debate_rows(comparison, trimmed(comparison.a), trimmed(comparison.b))

    def compose(self) -> ComposeResult:
        c = self.comparison
        with VerticalScroll(id="compare-scroll"):
            yield Static(literal("\n".join([side_line("A", c.a), side_line("B", c.b), parting_line(c)])),
                         classes="compare-head", id="compare-sides")
            yield Static(literal("Scores", "bold"), classes="compare-title")
            yield Static(literal(score_lines(c)), classes="compare-head", id="compare-scores")
            yield from self._errors()
            yield Static(literal("The debates, round by round", "bold"), classes="compare-title")
            yield SideBySide(self.rows, id="compare-debates")
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

    def action_to_part(self) -> None:
        marks = [index for index, row in enumerate(self.rows) if isinstance(row, Label) and row.kind == "parts"]
        if marks:
            debates = self.query_one(SideBySide)
            self.query_one("#compare-scroll", VerticalScroll).scroll_to(
                y=debates.virtual_region.y + debates.row_line(marks[0]), animate=False)  # no padding above
        else:
            self.notify("The debates never part: one's turns are all the other's.")

    def action_back(self) -> None:
        self.dismiss()  # whoever opened it decides what is under it (the `compare --tui` app closes)
