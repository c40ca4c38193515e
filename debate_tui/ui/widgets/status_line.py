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
    elapsed: reactive[float] = reactive(0.0)
    calls: reactive[int] = reactive(0)
    tokens: reactive[int] = reactive(0)
    cost: reactive[float] = reactive(0.0)
    trust: reactive[str] = reactive("")
    """With a trust ladder (`--policy`): this tier's confidence against its threshold, and what follows."""

    def watch_trust(self, trust: str) -> None:
        """A ladder's message gets lines of its own under the usual one, wrapped to the width."""
        self.styles.height = "auto" if trust else 1

    def set_usage(self, usage: Usage) -> None:
        self.calls, self.tokens, self.cost = usage.calls, usage.prompt_tokens + usage.completion_tokens, usage.cost_usd

    def render(self) -> Content:
        mode_style = MODE_STYLES.get(self.mode, "")
        parts: list[tuple[str, str] | str] = [
            ("round " + ("-" if self.round is None else str(self.round))
             + ("" if self.last_round is None else f" of {self.first_round}–{self.last_round}" if self.first_round == 0
                else f" of {self.last_round}"), "bold"), " │ ",
            (self.mode, mode_style), " │ ",
            f"{self.calls} calls │ {self.tokens:,} tokens │ ${self.cost:.4f} │ {clock(self.elapsed)}",
        ]
        if self.speaking:
            parts += [" │ ", (f"{self.speaking} speaking", "italic")]
        if self.trust:
            parts += ["\n", (self.trust, "bold")]
        return Content.assemble(*parts)
