"""The TUI's trust ladder (`debate-tui --text F --policy POLICY.json`): one text, tier after tier.

Tier 1 plays in its debate screen. When a tier's run ends, its status line shows
its confidence against its threshold and what follows: "trusted: >= 85% agreement
at 90% confidence, calibrated on 412 items", or "not sure (0.61 < 0.78):
escalating to tier 2, chateval", and the next tier plays in a screen of its own
over the earlier one (Escape goes back to it). When no tier trusts itself the
person decides with the decision dialog (the verdict for a pair, a point of the
scale for a score), recorded as an override in the last session. The last
session keeps the ladder (`state["ladder"]`), which its report shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from debate_tui.batch.ladder import Tier, lowest_confidence, record_ladder, rung, step_message, tier_session
from debate_tui.domain import HumanAction, Session
from debate_tui.engine.judged import stamp
from debate_tui.engine.runner import apply_overrides
from debate_tui.store import write_session
from debate_tui.ui.screens.dialogs import DecisionDialog

if TYPE_CHECKING:
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.screens.debate import DebateScreen

VERDICT_LABELS = ("text 1 is better", "text 2 is better", "a tie")


class LadderPlay:
    def __init__(self, app: DebateTUI, tiers: list[Tier], policy: str) -> None:
        self.app, self.tiers, self.policy = app, tiers, policy
        self.rungs: list[dict[str, Any]] = []

    def start(self, session: Session) -> None:
        self._play(0, session)

    def _play(self, index: int, session: Session) -> None:
        tier = self.tiers[index]
        kind = f"tier {tier.number} of {len(self.tiers)}, trusted at confidence >= {tier.threshold:.2f}"
        self.app.run_tier(session, kind, lambda screen: self.finished(index, screen))

    def finished(self, index: int, screen: DebateScreen) -> None:
        """A tier's run ended: trust it, escalate, or ask the person."""
        tier, session = self.tiers[index], screen.session
        confidence = lowest_confidence(session)
        trusted = tier.trusts(confidence)
        self.rungs.append(rung(tier, session, confidence, trusted))
        later = self.tiers[index + 1] if index + 1 < len(self.tiers) else None
        shown = "none" if confidence is None else f"{confidence:.2f}"
        screen.status.trust = (f"trust ladder: confidence {shown}, threshold {tier.threshold:.2f}: "
                               + step_message(tier, confidence, trusted, later, session.status))
        if trusted or session.status != "completed":
            self._close(session)
        elif later is not None:
            self._play(index + 1, tier_session(later, session.task))
        else:
            self._ask(screen)

    def _said(self) -> str:
        def one(r: dict[str, Any]) -> str:
            answer = r["verdict"] or ", ".join(f"{k} {v:g}" for k, v in r["scores"].items() if v is not None)
            sure = "no confidence" if r["confidence"] is None else f"confidence {r['confidence']:.2f}"
            return f"tier {r['tier']} {r['protocol']}: {answer or 'none'} ({sure})"

        return "; ".join(one(r) for r in self.rungs)

    def _ask(self, screen: DebateScreen, names: list[str] | None = None) -> None:
        """The decision dialog, once for a pair's verdict, else once per criterion."""
        session = screen.session
        names = [c.name for c in session.criteria] if names is None else names
        criterion = next(c for c in session.criteria if c.name == names[0])
        options: tuple[str, ...]
        labels: tuple[str, ...]
        if session.task.pairwise:
            options, labels, what = ("1", "2", "0"), VERDICT_LABELS, "the verdict"
        else:
            options = tuple(str(v) for v in range(int(criterion.low), int(criterion.high) + 1))
            labels, what = (), f"the {criterion.name} score ({criterion.scale})"
        question = f"No tier trusted its answer ({self._said()}). Decide {what}."

        def done(value: str | None) -> None:
            if value is None:
                self._close(session)
                return
            action = HumanAction(kind="override", criterion=criterion.name, who=self.app.user,
                                 value=value if session.task.pairwise else float(value),
                                 after_turn=sum(1 for t in session.turns if t.error is None),
                                 text="trust ladder: no tier trusted its answer", where="tui ladder", source="decision")
            session.actions.append(stamp(action, session))
            if session.outcome is not None:
                session.outcome = apply_overrides(session.outcome, [action])
            screen.refresh_outcome()
            if len(names) > 1 and not session.task.pairwise:
                self._ask(screen, names[1:])
                return
            self._close(session, person=self.app.user)
            screen.status.trust = f"decided by {self.app.user}"

        self.app.push_screen(DecisionDialog(question, options, labels,
                                            escape="Escape leaves it undecided (the report says so)"), done)

    def _close(self, session: Session, person: str | None = None) -> None:
        """The ladder goes into the last session, saved, so its report (r, e) shows it."""
        who = record_ladder(session, self.rungs, self.policy, person)
        try:
            write_session(self.app.store.path_for(session.id), session)
        except OSError as exc:
            self.app.notify(f"cannot save the ladder into the session: {exc.strerror or exc}", severity="error",
                            markup=False)
            return
        self.app.notify(f"decided by {who}", title="Trust ladder", markup=False)
