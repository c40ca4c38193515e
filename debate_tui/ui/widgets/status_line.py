"""The one-line summary under the panes: round, mode, calls, tokens, cost, elapsed time."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from debate_tui.domain import Usage
from debate_tui.ui.widgets.kept_lines import KeptLines


def clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


MODE_STYLES = {
    "paused": "bold reverse", "pausing after this turn": "bold", "waiting for you": "bold reverse", "step": "bold",
}


class StatusLine(Static, KeptLines):
    """Reactive fields, so a key press (pause) shows on the very next frame."""

    round: reactive[int | None] = reactive(None)
    last_round: reactive[int | None] = reactive(None)
    first_round: reactive[int] = reactive(1)
    mode: reactive[str] = reactive("auto")
    speaking: reactive[str] = reactive("")
    waiting: reactive[str] = reactive("")
    """What the run waits for before its next turn, when that is not a model (its library's first import)."""
    elapsed: reactive[float] = reactive(0.0)
    calls: reactive[int] = reactive(0)
    tokens: reactive[int] = reactive(0)
    cost: reactive[float] = reactive(0.0)
    picked: reactive[str] = reactive("")
    """The turn picked to fork after ("turn 3 of 7 picked"), once a person picks one."""
    trust: reactive[str] = reactive("", layout=True)
    """With a trust ladder (`--policy`): the climb so far, a line per tier (what it said, and what follows).
    A new line makes the line taller: `layout`, else the height measured for the first line stayed."""

    def watch_trust(self, trust: str) -> None:
        """A ladder's message gets lines of its own under the usual one, wrapped to the width."""
        self.styles.height = "auto" if trust else 1

    def set_usage(self, usage: Usage) -> None:
        self.calls, self.tokens, self.cost = usage.calls, usage.prompt_tokens + usage.completion_tokens, usage.cost_usd

    def round_text(self) -> str:
        """"round k of R"; a protocol's round 0 (DEBATE's first score, ScaleEval's initial verdicts) is the opening.
        Before the first turn "not started", not "round -": short, so what the run waits for still fits at 80."""
        if self.round is None:
            return "not started"
        if self.round == 0 and self.first_round == 0:
            return "opening round" + (f" (then up to {self.last_round})" if self.last_round else "")
        return f"round {self.round}" + (f" of {self.last_round}" if self.last_round else "")

    def render(self) -> Content:
        parts = [  # (text, style, rank): when the line is too wide, the lowest rank goes first
            (self.round_text(), "bold", 9), (self.mode, MODE_STYLES.get(self.mode.split(":")[0], ""), 9),
            (f"{self.calls} {'call' if self.calls == 1 else 'calls'}", "", 4),
            (f"{self.tokens:,} tokens", "", 2), (f"${self.cost:.4f}", "", 3),
            (clock(self.elapsed), "", 8), *([(f"{self.speaking} speaking", "italic", 1)] if self.speaking else []),
            *([(f"{self.waiting} ...", "italic", 7)] if self.waiting else []),
            *([(self.picked, "bold", 5)] if self.picked else []),
        ]
        room = self.outer_size.width - self.styles.gutter.width
        while room > 0 and len(" │ ".join(text for text, _, _ in parts)) > room:
            lowest = min(parts, key=lambda part: part[2])
            if lowest[2] >= 8:  # the round, the mode and the time stay, cut at the edge if they must
                break
            parts.remove(lowest)
        pieces: list[tuple[str, str] | str] = []
        for text, style, _ in parts:
            pieces += [" │ ", (text, style)] if pieces else [(text, style)]
        if self.trust:
            pieces += ["\n", (self.trust, "bold")]
        return Content.assemble(*pieces)
