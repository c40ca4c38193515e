"""The human review queue behind `debate-tui review`: undecided batch items, one at a time.

No Textual here, so the queue is tested without a screen and any front end can
drive it. An item is one session whose result lines say `needs_human`.

Asking. The exact question and its options are what the protocol asks at the
point the session stopped. They are recovered by replaying the session on a
copy with a client that refuses every call: a waiting session has recorded
every turn up to its question, so the replay reaches `ask_human` for free.

Deciding. The decision is appended to the session as a `HumanAction` (who,
when, after how many turns, and the question it answers); the session is then
resumed headlessly: the runner replays its turns, takes the decision where the
protocol asks, and carries on (a later criterion may still call the model,
through the same cache). The item's result lines are then recomputed from the
session and swapped in atomically, so the queue can be left at any moment and
reopened where it stood.

Changing a decision (after going back) rewinds the session to the point of
the question, dropping the old decision and whatever followed it, and decides
again; the new action's text names the decision it replaces.

Overrides use the same queue (`mode="override"`): one item per completed
score line, the scale's points as answers. A key records an `override` action
for that criterion, which the runner re-applies whenever the session is
replayed; nothing is rerun, and a later override of the same score wins.

Blind audits (`mode="audit"`, `AuditDraw`): lines of a `batch --policy` drawn
at random (seeded) from the trusted ones and, if asked, from the rest, in a
shuffled order. The person gives the answer without the judge's answer or
confidence (the screen hides them until then); it is recorded as an `audit`
action with what the judge had answered: a label only, the result is left as
it is. The same seed draws the same lines, so a reopened audit shows what is
left of it. An answer changed after the judge's was shown is no longer blind.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Literal

from debate_tui.batch.results import ResultsFile, Row
from debate_tui.batch.rows import refresh
from debate_tui.domain import HumanAction, Session, Usage
from debate_tui.engine.events import Event, NeedsHuman
from debate_tui.engine.judged import stamp
from debate_tui.engine.runner import RetryPolicy, apply_overrides
from debate_tui.factory import runner_for
from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback, LLMClient, LLMError
from debate_tui.meta.concordance import Pair
from debate_tui.store import SessionFileError, SessionStore, write_session

PREFIX = "review queue: "
VERDICT_OPTIONS = ("1", "2", "0")
Mode = Literal["decide", "override", "audit"]
ANSWERS = ("predicted_verdict", "predicted")


@dataclass(frozen=True)
class AuditDraw:
    """How many lines a blind audit draws from the trusted ones and from the rest, and the seed of the draw."""

    trusted: int
    escalated: int = 0
    seed: int = 0


@dataclass(frozen=True)
class Question:
    text: str
    options: tuple[str, ...]
    criterion: str | None = None
    """The criterion the question is about, when the protocol says (a DEBATE tie, a ScaleEval verdict)."""


@dataclass
class ReviewItem:
    id: str
    session_id: str
    rows: list[Row]
    session: Session | None = None
    question: Question | None = None
    decision: HumanAction | None = None
    """The decision taken in this review, if any."""
    answered: Question | None = None
    """The question that decision answered: its options are the keys that may change it."""
    criterion: str | None = None
    """Override mode, or a ladder's line: the one score (or verdict) this item is about."""
    ladder: bool = False
    """A line no tier of a `batch --policy` ladder trusted: the person gives its answer (see `ladder_question`)."""
    blind: bool = False
    """A blind audit's line: the judge's answer and confidence stay hidden until the person has answered."""

    @property
    def about(self) -> str | None:
        """The criterion at stake: the overridden score's, else the one the open question is about."""
        return self.criterion or (self.question.criterion if self.question else None)

    @property
    def status(self) -> str:
        return str(self.rows[0].get("status")) if self.rows else "unknown"

    @property
    def hidden(self) -> bool:
        """The judge's answer is not to be shown yet."""
        return self.blind and self.decision is None

    @property
    def judge(self) -> tuple[float | str | None, float | None]:
        """The judge's answer on this item's line and its confidence (an escalated line: its last tier's)."""
        return line_answer(self.rows[0]) if self.rows else (None, None)

    @property
    def pending(self) -> bool:
        if self.criterion is not None:
            return self.decision is None
        return self.status == "needs_human"


class _NoCalls:
    """A client for replays: a recorded debate must reach its question without asking a model."""

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        raise LLMError("bad_request", "the recorded debate does not reach its question without a new call")


def completed_turns(session: Session) -> int:
    return sum(1 for t in session.turns if t.error is None)


async def ask(session: Session) -> Question:
    """The question the session waits on, with the protocol's own options."""
    asked: list[NeedsHuman] = []

    def watch(event: Event) -> None:
        if isinstance(event, NeedsHuman):
            asked.append(event)

    await runner_for(session.model_copy(deep=True), _NoCalls(), emit=watch, stream=False,
                     retry=RetryPolicy(attempts=1)).run()
    if asked:
        return Question(asked[-1].question, tuple(asked[-1].options), asked[-1].criterion)
    return Question(session.pending_question or "", fallback_options(session))


def fallback_options(session: Session) -> tuple[str, ...]:
    """When the replay cannot say: a verdict for a pair, else the points of the last criterion's scale."""
    if session.task.pairwise:
        return VERDICT_OPTIONS
    last = next((t.criterion for t in reversed(session.turns) if t.criterion), None)
    return scale_points(session, last)


def scale_points(session: Session, name: str | None) -> tuple[str, ...]:
    criterion = next((c for c in session.criteria if c.name == name), session.criteria[0])
    return tuple(str(v) for v in range(int(criterion.low), int(criterion.high) + 1))


def override_question(session: Session, name: str) -> Question:
    outcome = session.outcome
    now = outcome.scores.get(name) if outcome else None
    how = next((n for n in (outcome.notes if outcome else []) if n.startswith(f"{name}:")), "")
    shown = "unscored" if now is None else f"{now:g}"
    return Question(f"Override the {name} score? It is {shown}{' (' + how + ')' if how else ''}. "
                    "Press the score it should be, or s to keep it.", scale_points(session, name))


def ladder_question(session: Session, row: Row) -> Question:
    """What a person sees for a line no tier trusted: every tier's answer and confidence against its threshold."""
    said = []
    for tier in row.get("tiers") or []:
        answer = tier.get("predicted_verdict", tier.get("predicted"))
        confidence, threshold = tier.get("confidence"), tier.get("threshold")
        sure = "no confidence" if confidence is None else f"confidence {confidence:.2f}"
        if isinstance(threshold, int | float):
            sure += f" < {threshold:.2f}"
        said.append(f"tier {tier.get('tier')} {tier.get('label') or tier.get('protocol')}: "
                    f"{'none' if answer is None else answer} ({sure})")
    what = "the verdict (1, 2 or 0 for a tie)" if session.task.pairwise else f"the {row.get('criterion')} score"
    options = VERDICT_OPTIONS if session.task.pairwise else scale_points(session, row.get("criterion"))
    return Question(f"No tier trusted its answer on {row.get('criterion')}: {'; '.join(said)}. Give {what}.",
                    options)


def line_answer(row: Row) -> tuple[float | str | None, float | None]:
    """A result line's answer and confidence; a ladder's line no tier trusted: its last tier's (the line's own
    answer, if any, is a person's decision)."""
    tiers = row.get("tiers")
    said: dict[str, Any] = tiers[-1] if isinstance(tiers, list) and tiers and row.get("tier") is None else row
    return next((said[name] for name in ANSWERS if said.get(name) is not None), None), said.get("confidence")


def audit_question(session: Session, row: Row) -> Question:
    """A blind audit's question: the answer asked for, and nothing of the judge's."""
    criterion = str(row.get("criterion"))
    if session.task.pairwise:
        return Question(f"Blind audit: which text is better on {criterion}? 1 = the first, 2 = the second, 0 = a "
                        "tie. The judge's answer is shown once you have given yours.", VERDICT_OPTIONS, criterion)
    points = scale_points(session, criterion)
    return Question(f"Blind audit: what {criterion} score ({points[0]}-{points[-1]}) does this text deserve? The "
                    "judge's answer is shown once you have given yours.", points, criterion)


def drawn(rows: list[Row], draw: AuditDraw) -> list[Row]:
    """The lines of a blind audit: `draw.trusted` at random from the trusted lines of a ladder's results,
    `draw.escalated` from the rest, shuffled together; ValueError when the file is no ladder's."""
    lines = list({(r.get("id"), r.get("criterion")): r for r in rows
                  if r.get("session") and r.get("criterion") and isinstance(r.get("tiers"), list)}.values())
    if not lines:
        raise ValueError("--audit draws from the trusted lines of `batch --policy` results; these lines name no tier")
    rng = random.Random(draw.seed)
    trusted = [r for r in lines if isinstance(r.get("tier"), int)]
    rest = [r for r in lines if r.get("tier") is None and r.get("status") in ("completed", "needs_human")]
    picked = rng.sample(trusted, min(draw.trusted, len(trusted))) + rng.sample(rest, min(draw.escalated, len(rest)))
    rng.shuffle(picked)
    return picked


def rewind(session: Session, action: HumanAction) -> None:
    """Undo `action` and everything after it: the session waits on the same question again."""
    session.actions = session.actions[: session.actions.index(action)]
    kept, done = [], 0
    for turn in session.turns:
        if done == action.after_turn:
            break
        kept.append(turn)
        done += turn.error is None
    session.turns = kept
    session.usage = Usage()
    for turn in kept:
        session.usage.add(turn.usage)
    session.status, session.outcome, session.error = "needs_human", None, None
    session.pending_question = action.text.removeprefix(PREFIX).split(" (replaces ")[0]


@dataclass
class ReviewQueue:
    results: ResultsFile
    store: SessionStore
    client: LLMClient
    who: str
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    mode: Mode = "decide"
    draw: AuditDraw | None = None
    """Audit mode: what to draw."""
    items: list[ReviewItem] = field(default_factory=list)
    index: int = 0
    decisions: int = 0
    """The decisions recorded through this queue since it was made (what `review` reports as "reviewed")."""

    def load(self) -> None:
        """The items to review, in file order (an audit's in its drawn order); starts at the first."""
        rows = self.results.read().rows
        if self.mode == "audit":
            self.items = self._audited(rows)
        else:
            self.items = self._scores(rows) if self.mode == "override" else self._waiting(rows)
        self.index = self._next_pending(0)

    def _audited(self, rows: list[Row]) -> list[ReviewItem]:
        """The drawn lines, each with the audit answer its session already holds (a reopened audit)."""
        items = []
        for row in drawn(rows, self.draw or AuditDraw(0)):
            item = ReviewItem(str(row.get("id")), str(row["session"]), [row], criterion=str(row["criterion"]),
                              blind=True)
            try:
                session = self.store.load(item.session_id)
            except (SessionFileError, OSError, ValueError):  # said when the item is opened
                session = None
            if session is not None:
                item.decision = next((a for a in reversed(session.actions)
                                      if a.kind == "audit" and a.criterion == item.criterion), None)
                item.answered = audit_question(session, row) if item.decision else None
            items.append(item)
        return items

    @staticmethod
    def _scores(rows: list[Row]) -> list[ReviewItem]:
        """Override mode: every completed score line (a pair's verdict is not a score to override)."""
        return [ReviewItem(str(row.get("id")), str(row["session"]), [row], criterion=str(row["criterion"]))
                for row in rows
                if row.get("session") and row.get("criterion") and row.get("status") == "completed"
                and "predicted_verdict" not in row]

    @staticmethod
    def _waiting(rows: list[Row]) -> list[ReviewItem]:
        """Decide mode: the sessions whose lines say needs_human; a ladder's line is an item of its own."""
        by_session: dict[str, ReviewItem] = {}
        ladder: list[ReviewItem] = []
        for row in rows:
            session_id = row.get("session")
            if not session_id:
                continue
            if isinstance(row.get("tiers"), list):
                if row.get("status") == "needs_human":
                    ladder.append(ReviewItem(str(row.get("id")), session_id, [row], criterion=str(row["criterion"]),
                                             ladder=True))
                continue
            item = by_session.get(session_id)
            if item is None:
                if row.get("status") != "needs_human":
                    continue
                item = by_session[session_id] = ReviewItem(str(row.get("id")), session_id, [])
            item.rows.append(row)
        return [*by_session.values(), *ladder]

    # ----- where we are -------------------------------------------------------------

    def decided_pairs(self, blind: bool | None = None) -> list[Pair]:
        """(the judge's answer, the person's) over the decisions in this queue; `blind`: only those that were
        (True) or were not (False) taken blind."""
        pairs: list[Pair] = []
        for item in self.items:
            action = item.decision
            if action is None or (blind is not None and action.blind != blind):
                continue
            pair = bool(item.rows) and "predicted_verdict" in item.rows[0]
            person = action.value if pair or not isinstance(action.value, str) else float(action.value)
            pairs.append((action.judge_answer, person))
        return pairs

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def left(self) -> int:
        return sum(item.pending for item in self.items)

    @property
    def current(self) -> ReviewItem | None:
        """The item on show; None once nothing waits (`back` still returns to the last one)."""
        return self.items[self.index] if self.index < len(self.items) else None

    def skip(self) -> None:
        """On to the next waiting item, coming round again to skipped ones."""
        self.index = self._next_pending(self.index + 1)

    def back(self) -> None:
        self.index = max(self.index - 1, 0)

    def _next_pending(self, start: int) -> int:
        count = len(self.items)
        for step in range(count):
            candidate = (start + step) % count
            if self.items[candidate].pending:
                return candidate
        return count

    # ----- the work -----------------------------------------------------------------

    async def open(self, item: ReviewItem) -> ReviewItem:
        """Load the item's session (and its question, if it still waits on one)."""
        item.session = session = self.store.load(item.session_id)
        if item.blind:
            item.question = audit_question(session, item.rows[0]) if item.pending else None
        elif item.ladder:
            item.question = ladder_question(session, item.rows[0]) if item.pending else None
        elif item.criterion is not None:
            item.question = override_question(session, item.criterion) if item.pending else None
        else:
            item.question = await ask(session) if session.status == "needs_human" else None
        return item

    async def decide(self, item: ReviewItem, value: str) -> Session:
        """Record the decision, let the session go on, write its lines back; move on once it no longer waits."""
        session = self.store.load(item.session_id)
        if item.blind:
            self._audit(item, session, value)
        elif item.ladder:
            self._answer(item, session, value)
        elif item.criterion is not None:
            self._override(item, session, value)
        else:
            await self._decide(item, session, value)
        item.session = session
        item.question = None
        self.decisions += 1
        if item is self.current and not item.pending:  # a new question on the same text is asked at once
            self.index = self._next_pending(self.index + 1)
        return session

    async def _decide(self, item: ReviewItem, session: Session, value: str) -> None:
        replaces = ""
        if item.decision is not None and session.status != "needs_human":  # back on a decided item: change it
            earlier = next((a for a in session.actions if a.at == item.decision.at and a.kind == "decide"), None)
            if earlier is not None:
                rewind(session, earlier)
                replaces = f" (replaces {earlier.value} by {earlier.who} at {earlier.at:%Y-%m-%d %H:%M:%S})"
        if session.status == "needs_human":
            question = await ask(session)
            if value not in question.options:
                raise ValueError(f"{value!r} is not an answer to this question; expected {', '.join(question.options)}")
            action = HumanAction(kind="decide", value=value, who=self.who, after_turn=completed_turns(session),
                                 criterion=question.criterion, text=f"{PREFIX}{question.text}{replaces}",
                                 where="review", source="review")
            session.actions.append(stamp(action, session))
            path = self.store.path_for(session.id)
            await runner_for(session, self.client, save=lambda s: write_session(path, s), stream=False,
                             retry=self.retry).run()
            item.decision, item.answered = action, question
        item.rows = refresh(item.rows, session)
        self.results.replace_session(session.id, item.rows)

    def _answer(self, item: ReviewItem, session: Session, value: str) -> None:
        """A ladder's line: the person's answer goes into the line (and, for the record, into the last tier's
        session as an override); the other lines of the item are left as they are."""
        question = ladder_question(session, item.rows[0])
        if value not in question.options:
            raise ValueError(f"{value!r} is not an answer to this question; expected {', '.join(question.options)}")
        pair = session.task.pairwise
        action = HumanAction(kind="override", criterion=item.criterion, value=value if pair else float(value),
                             who=self.who, after_turn=completed_turns(session), text=f"{PREFIX}{question.text}",
                             where="review", source="review")
        session.actions.append(stamp(action, session))
        if session.outcome is not None:
            session.outcome = apply_overrides(session.outcome, [action])
        write_session(self.store.path_for(session.id), session)
        row = dict(item.rows[0])
        row["predicted_verdict" if pair else "predicted"] = action.value
        row |= {"status": "completed", "decided_by": action.who, "decided_at": action.at.isoformat()}
        self.results.rewrite([row if (r.get("id"), r.get("criterion")) == (row["id"], row["criterion"]) else r
                              for r in self.results.read().rows])
        item.rows = [row]
        item.decision, item.answered = action, question

    def _audit(self, item: ReviewItem, session: Session, value: str) -> None:
        """A blind audit's answer, kept in the session as a label: the result is left as it is. Changing it once
        the judge's answer has been shown keeps the new answer, no longer blind."""
        question = audit_question(session, item.rows[0])
        if value not in question.options:
            raise ValueError(f"{value!r} is not an answer to this question; expected {', '.join(question.options)}")
        blind = item.decision is None
        judge, confidence = item.judge
        text = f"{PREFIX}{question.text}" + ("" if blind else " (changed after the judge's answer was shown)")
        action = HumanAction(kind="audit", criterion=item.criterion, value=value if session.task.pairwise else
                             float(value), who=self.who, after_turn=completed_turns(session), text=text,
                             judge_answer=judge, judge_confidence=confidence, where="review --audit",
                             source="audit", blind=blind)
        session.actions.append(action)
        write_session(self.store.path_for(session.id), session)
        item.decision, item.answered = action, question

    def _override(self, item: ReviewItem, session: Session, value: str) -> None:
        assert item.criterion is not None and session.outcome is not None
        question = override_question(session, item.criterion)
        if value not in question.options:
            raise ValueError(f"{value!r} is not on the scale; expected {', '.join(question.options)}")
        action = HumanAction(kind="override", criterion=item.criterion, value=float(value), who=self.who,
                             after_turn=completed_turns(session), text=f"{PREFIX}{question.text}",
                             where="review --override", source="review")
        session.actions.append(stamp(action, session))
        session.outcome = apply_overrides(session.outcome, [action])
        write_session(self.store.path_for(session.id), session)
        lines = [row for row in self.results.read().rows if row.get("session") == session.id]
        fresh = refresh(lines, session)
        self.results.replace_session(session.id, fresh)
        item.rows = [row for row in fresh if row.get("criterion") == item.criterion]
        item.decision, item.answered = action, question
