"""The review screen: one undecided item at a time, both texts side by side, a key decides.

Keys: the answer keys the question allows (1, 2, 0 for a pair; the scale's
points for a score), `s` skip, `b` back, `d` the whole debate, `q` quit. In a
blind audit the judge's answer, its confidence, the positions and the debate
stay hidden until the person has answered; the answer then says what the judge
had said. The agreement panel sets the judge against the person over the
decisions so far (the blind ones apart). Each
decision is written to the session and to RESULTS.jsonl before the next item
shows, so quitting at any moment loses nothing; reopening shows what is left.
The work (loading, replaying, resuming) runs in workers; keys are ignored
while one is busy rather than queued behind it.
"""

from __future__ import annotations

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Footer, Static

from debate_tui.meta.review import ReviewItem, ReviewQueue
from debate_tui.ui.keymap import apply_keymap
from debate_tui.ui.literal import literal
from debate_tui.ui.review import view

DIGITS = "0123456789"


class ReviewApp(App[None]):
    TITLE = "debate-tui review"
    CSS = """
    Screen { layout: vertical; }
    #heading { height: 1; text-wrap: nowrap; text-overflow: ellipsis; background: $primary-background;
               color: $text; padding: 0 1; text-style: bold; }
    #question { max-height: 4; padding: 0 1; color: $warning; }
    #choices { padding: 0 1; color: $accent; }
    #source { height: auto; max-height: 5; border: round $secondary; padding: 0 1; }
    #texts { height: 1fr; min-height: 5; }
    #texts VerticalScroll { width: 1fr; border: round $primary; padding: 0 1; }
    #positions { height: auto; max-height: 35%; border: round $secondary; padding: 0 1; }
    #debate { height: 2fr; border: round $accent; padding: 0 1; display: none; }
    #debate.shown { display: block; }
    #agreement { height: auto; max-height: 3; padding: 0 1; color: $accent; display: none; }
    #agreement.shown { display: block; }
    #note { height: auto; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [
        *(Binding(d, f"decide('{d}')", d, show=False, id=f"review.answer_{d}") for d in DIGITS),
        Binding("s", "skip", "Skip", id="review.skip", tooltip="Leave this item for later"),
        Binding("b", "back", "Back", id="review.back", tooltip="The previous item (a decision there can be changed)"),
        Binding("d", "debate", "Debate", id="review.debate", tooltip="Show or hide the whole debate"),
        Binding("q", "quit", "Quit", id="review.quit", tooltip="Quit; every decision is already saved"),
    ]

    def __init__(self, queue: ReviewQueue):
        super().__init__()
        self.queue = queue
        self.busy = False
        self.options: tuple[str, ...] = ()
        self.reveal = ""
        """What the judge had said on the blind item just answered: shown under the next one."""

    def compose(self) -> ComposeResult:
        yield Static(id="heading")
        yield Static(id="question")
        yield Static(id="choices")
        with VerticalScroll(id="source"):
            yield Static(id="source-text")
        with Horizontal(id="texts"):
            with VerticalScroll(id="pane-1"):
                yield Static(id="text-1")
            with VerticalScroll(id="pane-2"):
                yield Static(id="text-2")
        with VerticalScroll(id="positions"):
            yield Static(id="positions-text")
        with VerticalScroll(id="debate"):
            yield Static(id="debate-text")
        yield Static(id="agreement")
        yield Static(id="note")
        yield Footer()

    def on_mount(self) -> None:
        apply_keymap(self)
        self.show_current()

    # ----- showing --------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "decide":
            return bool(parameters) and parameters[0] in self.options
        return True

    def set_note(self, text: str) -> None:
        self.query_one("#note", Static).update(literal(text))

    @work(exclusive=True, group="review", exit_on_error=False, description="open the review item")
    async def show_current(self) -> None:
        item = self.queue.current
        if item is None:
            self.finish()
            return
        self.busy = True
        try:
            await self.queue.open(item)
        except Exception as exc:  # an unreadable session must not end the review: say so and let it be skipped
            self.set_note(f"cannot open session {item.session_id}: {exc}; press s to skip it")
            self.options = ()
            return
        finally:
            self.busy = False
        self.render_item(item)

    def render_item(self, item: ReviewItem) -> None:
        session = item.session
        assert session is not None
        task = session.task
        self.query_one("#heading", Static).update(literal(view.heading(item, self.queue.left, self.queue.total)))
        if item.question is not None:
            self.options = item.question.options
            self.query_one("#question", Static).update(literal(item.question.text))
        else:
            self.options = item.answered.options if item.answered and item.decision else ()
            self.query_one("#question", Static).update(
                literal(view.decided(item.decision) if item.decision else f"status: {item.status}"))
        labels = "   ".join(view.option_label(v, task.pairwise) for v in self.options)
        keys = f"Decide: {labels}   ·   s skip · b back · d debate · q quit"
        self.query_one("#choices", Static).update(literal(keys))
        self.query_one("#source").display = bool(task.source or task.context)
        self.query_one("#source-text", Static).update(literal("\n\n".join(p for p in (task.source, task.context) if p)))
        self.query_one("#pane-1", VerticalScroll).border_title = "Submission 1" if task.pairwise else "Text"
        self.query_one("#text-1", Static).update(literal(task.text))
        self.query_one("#pane-2").display = task.pairwise
        self.query_one("#pane-2", VerticalScroll).border_title = "Submission 2"
        self.query_one("#text-2", Static).update(literal(task.text_b or ""))
        self.query_one("#positions").display = not item.hidden
        self.query_one("#positions", VerticalScroll).border_title = "Final positions"
        self.query_one("#positions", VerticalScroll).border_subtitle = view.numbering_note(session)
        self.query_one("#positions-text", Static).update(literal("" if item.hidden else view.final_positions(session)))
        self.query_one("#debate", VerticalScroll).border_title = "Debate (d hides it)"
        self.query_one("#debate-text", Static).update(literal("" if item.hidden else view.transcript(session)))
        if item.hidden:
            self.query_one("#debate").remove_class("shown")
        self.show_agreement()
        self.set_note(self.reveal)
        self.refresh_bindings()

    def show_agreement(self) -> None:
        """The panel, once a decision can be set against a judge's answer (from the start in an audit)."""
        panel = self.query_one("#agreement", Static)
        every = self.queue.decided_pairs()
        panel.set_class(bool(every) or self.queue.mode == "audit", "shown")
        panel.update(literal(view.agreement(every, self.queue.decided_pairs(blind=True))))

    def finish(self) -> None:
        self.options = ()
        total = self.queue.total
        audit = self.queue.mode == "audit"
        done = f"All {total} item(s) answered and kept as labels." if audit else \
            f"All {total} item(s) decided and written back."
        message = "Nothing to review." if total == 0 else done
        queue = "Blind audit" if audit else "Review queue"
        self.query_one("#heading", Static).update(literal(f"{queue} · 0 of {total} left"))
        self.query_one("#question", Static).update(literal(message + " Press q to quit, b to go back."))
        for selector in ("#choices", "#text-1", "#text-2", "#positions-text", "#debate-text", "#source-text"):
            self.query_one(selector, Static).update("")
        self.show_agreement()
        self.set_note(self.reveal)
        self.refresh_bindings()

    # ----- keys -----------------------------------------------------------------------

    def action_decide(self, value: str) -> None:
        item = self.queue.current
        if self.busy or item is None or value not in self.options:
            return
        self.busy = True
        self.set_note(f"recording {value} and finishing the debate…")
        self.record(item, value)

    @work(exclusive=True, group="review", exit_on_error=False, description="record a decision")
    async def record(self, item: ReviewItem, value: str) -> None:
        try:
            await self.queue.decide(item, value)
        except Exception as exc:
            self.busy = False
            self.set_note(f"not recorded: {exc}")
            return
        self.busy = False
        self.reveal = view.revealed(item) if item.blind else ""
        if not item.blind:  # a blind answer is acknowledged by the reveal under the next item
            self.notify(f"{item.id}: {value} recorded ({item.status.replace('_', ' ')})", timeout=2, markup=False)
        self.show_current()

    def action_skip(self) -> None:
        if not self.busy and self.queue.left:
            self.queue.skip()
            self.show_current()

    async def action_back(self) -> None:
        if not self.busy and self.queue.items:
            self.queue.back()
            self.show_current()

    def action_debate(self) -> None:
        item = self.queue.current
        if item is not None and item.hidden:
            self.notify("Blind audit: the debate is shown once you have answered.", timeout=2)
            return
        self.query_one("#debate").toggle_class("shown")

