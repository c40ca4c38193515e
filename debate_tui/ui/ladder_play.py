"""The TUI's trust ladder (`debate-tui --text F --policy POLICY.json`): one text, tier after tier.

Tier 1 plays in its debate screen. When a tier's run ends, its status line says
what follows: "trust ladder: confidence 1.00, threshold 1.00: trusted: >= 85%
agreement at 90% confidence, calibrated on 412 items", or "tier 1 (single, conf
0.61 < 0.78): not sure, escalating to tier 2 (chateval)", and the next tier plays
in a screen of its own over the earlier one (Escape goes back to it), the climb's
lines so far kept under its status line: the climb stays on screen.

When no tier trusts itself the last session waits for a person (`climb.record_ladder`:
needs_human, no result) and the decision dialog asks (the verdict for a pair, a
point of the scale per criterion), with the text judged, `r` for the report and
F1 for help. Escape leaves it waiting, as it is saved: the sessions screen (F2)
or `debate-tui resume SESSION --decide` decide it later, with the same dialog
(`ask_decision`) or the same `climb.decide`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from debate_tui.domain import Session
from debate_tui.meta.climb import decide, lowest_confidence, record_ladder, rung, said, step_message, tier_session
from debate_tui.protocols.common import excerpt
from debate_tui.store import write_session
from debate_tui.ui.screens.dialogs import DecisionDialog

if TYPE_CHECKING:
    from debate_tui.meta.ladder import Tier
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.screens.debate import DebateScreen

VERDICT_LABELS = ("text 1 is better", "text 2 is better", "a tie")
Answers = dict[str, float | str]


def ask_decision(app: DebateTUI, session: Session, done: Callable[[Answers | None], None]) -> None:
    """The decision dialog for a waiting ladder: once for a pair's verdict, else once per criterion; `done` gets
    the answers, or None when the person pressed Escape (the session keeps waiting)."""
    rungs = (session.state.get("ladder") or {}).get("rungs") or []
    details = [("Text", excerpt(session.task.text))]
    if session.task.text_b is not None:
        details.append(("Text 2", excerpt(session.task.text_b)))
    answers: Answers = {}

    def next_question() -> None:
        criterion = next(c for c in session.criteria if c.name not in answers)
        options: tuple[str, ...]
        labels: tuple[str, ...]
        if session.task.pairwise:
            options, labels, what = ("1", "2", "0"), VERDICT_LABELS, "the verdict"
        else:
            options = tuple(str(v) for v in range(int(criterion.low), int(criterion.high) + 1))
            labels, what = (), f"the {criterion.name} score ({criterion.scale})"

        def answered(value: str | None) -> None:
            if value is None:
                done(None)
                return
            answers[criterion.name] = value if session.task.pairwise else float(value)
            if session.task.pairwise or len(answers) == len(session.criteria):
                done(answers)
            else:
                next_question()

        app.push_screen(DecisionDialog(f"No tier trusted its answer ({said(rungs)}). Decide {what}.", options,
                                       labels, tuple(details), escape="Escape leaves it waiting for a person",
                                       report=lambda: app.open_report(session)), answered)

    next_question()


class LadderPlay:
    def __init__(self, app: DebateTUI, tiers: list[Tier], policy: str) -> None:
        self.app, self.tiers, self.policy = app, tiers, policy
        self.rungs: list[dict[str, Any]] = []
        self.climb: list[str] = []
        """One line per tier that ran: shown on every later tier's screen."""

    def start(self, session: Session) -> None:
        self._play(0, session)

    def _play(self, index: int, session: Session) -> None:
        tier = self.tiers[index]
        kind = f"tier {tier.number} of {len(self.tiers)} ({tier.label}), trusted at confidence >= {tier.threshold:.2f}"
        self.app.run_tier(session, kind, lambda screen: self.finished(index, screen), climb="\n".join(self.climb))

    def finished(self, index: int, screen: DebateScreen) -> None:
        """A tier's run ended: trust it, escalate, or ask the person."""
        tier, session = self.tiers[index], screen.session
        confidence = lowest_confidence(session)
        trusted = tier.trusts(confidence)
        self.rungs.append(rung(tier, session, confidence, trusted))
        later = self.tiers[index + 1] if index + 1 < len(self.tiers) else None
        line = step_message(tier, confidence, trusted, later, session.status)
        if trusted:
            shown = "none" if confidence is None else f"{confidence:.2f}"
            line = f"trust ladder: confidence {shown}, threshold {tier.threshold:.2f}: {line}"
        self._say(screen, line)
        if trusted or session.status != "completed" or later is None:
            self._close(screen)
        else:
            self._play(index + 1, tier_session(later, session.task))

    def _say(self, screen: DebateScreen, line: str) -> None:
        self.climb.append(line)
        screen.status.trust = "\n".join(self.climb)

    def _close(self, screen: DebateScreen) -> None:
        """The ladder goes into the last session, saved, so its report (r, e) shows it; with no tier trusted, the
        session waits and the person is asked."""
        session = screen.session
        decided = record_ladder(session, self.rungs, self.policy, self.tiers)
        screen.refresh_outcome()
        if not self._save(session):
            return
        if decided is not None or session.status != "needs_human":
            self.app.notify(f"decided by {decided or 'nobody: the tier ended ' + session.status}",
                            title="Trust ladder", markup=False)
            return

        def done(answers: Answers | None) -> None:
            if answers is None:
                self._say(screen, "waiting for a person: no tier trusted its answer")
                self.app.notify(f"No tier trusted its answer: session {session.id} waits for a person (decide it "
                                "from the sessions list, F2, or `debate-tui resume ID --decide SCORE`).",
                                title="Trust ladder: needs a person", severity="warning", markup=False, timeout=10)
                return
            who = decide(session, answers, self.app.user, "TUI decision dialog")
            screen.refresh_outcome()
            self._say(screen, f"decided by {who}")
            if self._save(session):
                self.app.notify(f"decided by {who}", title="Trust ladder", markup=False)

        ask_decision(self.app, session, done)

    def _save(self, session: Session) -> bool:
        try:
            write_session(self.app.store.path_for(session.id), session)
        except OSError as exc:
            self.app.notify(f"cannot save the ladder into the session: {exc.strerror or exc}", severity="error",
                            markup=False)
            return False
        return True
