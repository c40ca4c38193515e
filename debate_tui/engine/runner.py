"""The runner: executes a protocol, one `turn()` at a time, for any watcher.

Every call gets a *slot*, its number in the protocol's own call sequence,
taken before the first await so that parallel turns are numbered the same way
on every run. Completed turns are saved by slot; a resumed run replays them
instead of calling the model again, so the protocol rebuilds exactly the state
it had (rounds, histories, random draws) and carries on from there.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from debate_tui import parsing
from debate_tui.config import load_config
from debate_tui.domain import AgentSpec, Criterion, HumanAction, Outcome, Session, Task, Turn, Usage, utcnow
from debate_tui.engine.control import RunControl, Stopped
from debate_tui.engine.events import (
    Event, Finished, NeedsHuman, Notice, OutcomeReached, RoundCompleted,
    TextDelta, TurnCompleted, TurnFailed, TurnStarted,
)
from debate_tui.llm.base import ChatRequest, LLMClient, LLMError, Message
from debate_tui.redact import redact

Expect = Literal["text", "score", "pair", "verdict", "no_issue"]

REMINDERS: dict[str, str] = {
    "score": "Your reply had no score I could read. Answer again and end with a line 'Score: N', N between {low:g} and {high:g}.",
    "pair": "Your reply had no pair of scores I could read. End with a line 'Scores: A B' for text 1 and text 2, each between {low:g} and {high:g}.",
    "verdict": "Your reply had no verdict I could read. End with a line 'Verdict: 1', 'Verdict: 2' or 'Verdict: 0' (tie).",
}


class NeedsHumanDecision(Exception):
    """A headless run reached a point only a person can decide."""


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter, honouring Retry-After, for a bounded number of attempts."""

    attempts: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    jitter: float = 0.25
    rng: random.Random = field(default_factory=random.Random)

    @classmethod
    def from_env(cls) -> RetryPolicy:
        """The configured `limits.retries` (attempts per call) and `limits.retry_delay` (first backoff, seconds),
        which DEBATE_TUI_RETRIES and DEBATE_TUI_RETRY_DELAY override."""
        limits = load_config().limits
        return cls(attempts=limits.retries, base_delay_s=limits.retry_delay)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay_s)
        backoff = min(self.base_delay_s * 2**attempt, self.max_delay_s)
        return backoff * (1 + self.jitter * self.rng.random())


Store = Callable[[Session], Any]


class Runner:
    """Runs `session.protocol` against `client`, emitting events and saving after each turn."""

    def __init__(
        self,
        session: Session,
        client: LLMClient,
        *,
        emit: Callable[[Event], None] = lambda event: None,
        save: Store | None = None,
        control: RunControl | None = None,
        retry: RetryPolicy | None = None,
        stream: bool = True,
        interactive: bool = False,
    ):
        self.session = session
        self.client = client
        self.emit = emit
        self.save_fn = save
        self.control = control or RunControl()
        self.control.on_action = self.record_action
        self.retry = retry or RetryPolicy()
        self.stream = stream
        self.interactive = interactive
        self._next_slot = 0
        self._replay = {t.slot: t for t in session.turns if t.error is None}
        self._decisions_used = 0

    # ----- what protocols call -------------------------------------------------

    @property
    def completed_turns(self) -> int:
        return sum(1 for t in self.session.turns if t.error is None)

    async def turn(
        self,
        agent: str,
        messages: list[Message],
        *,
        round: int,
        criterion: Criterion | None = None,
        expect: Expect = "text",
        hint: dict[str, Any] | None = None,
    ) -> Turn:
        """One utterance; a reply without the asked-for score or verdict is re-asked once."""
        spec = self.session.agent(agent)
        first = await self._call(spec, messages, round, criterion, expect, hint)
        if expect in REMINDERS and not _has_answer(first, expect):
            low, high = (criterion.low, criterion.high) if criterion else (1, 5)
            again = [*messages, {"role": "assistant", "content": first.content},
                     {"role": "user", "content": REMINDERS[expect].format(low=low, high=high)}]
            second = await self._call(spec, again, round, criterion, expect, hint)
            if not _has_answer(second, expect):
                second.unscored = True
                self.emit(Notice(f"{agent}: no {expect} could be read after a reminder; marked unscored"))
            return second
        return first

    async def ask_human(self, question: str, options: tuple[str, ...]) -> str:
        """A decision recorded earlier (on resume), a live one (TUI), or a headless stop."""
        decisions = [a for a in self.session.actions if a.kind == "decide"]
        if self._decisions_used < len(decisions):
            self._decisions_used += 1
            return str(decisions[self._decisions_used - 1].value)
        self.session.pending_question = question
        self.emit(NeedsHuman(question, options))
        if not self.interactive:
            raise NeedsHumanDecision(question)
        self.session.status = "needs_human"
        await self._save()
        value = await self.control.wait_for_decision()
        self._decisions_used += 1
        self.session.status = "running"
        self.session.pending_question = None
        return value

    def round_completed(self, round: int, criterion: Criterion | None = None) -> None:
        self.emit(RoundCompleted(round, criterion.name if criterion else None))

    def notice(self, message: str) -> None:
        self.emit(Notice(message))

    # ----- the run --------------------------------------------------------------

    async def run(self) -> Session:
        from debate_tui.protocols import get_protocol

        session = self.session
        session.status, session.error, session.pending_question = "running", None, None
        try:
            outcome = await get_protocol(session.protocol).run(Context(self))
            session.outcome = apply_overrides(outcome, session.actions)
            session.status = "completed"
            self.emit(OutcomeReached(session.outcome))
        except NeedsHumanDecision:
            session.status = "needs_human"
        except Stopped as exc:
            session.status, session.error = "cancelled", str(exc)
        except LLMError as exc:
            session.status, session.error = "failed", redact(str(exc))
        except Exception as exc:  # a bug must not lose the session: save it as failed
            session.status, session.error = "failed", redact(f"internal error: {type(exc).__name__}: {exc}")
        await self._save()
        self.emit(Finished(session.status, session.error))
        return session

    def record_action(self, action: HumanAction) -> None:
        """Store a human action where a replay will find it, and save it at once."""
        action.after_turn = self.completed_turns
        self.session.actions.append(action)
        if action.kind == "override" and self.session.outcome is not None:
            self.session.outcome = apply_overrides(self.session.outcome, [action])
        try:
            asyncio.get_running_loop().create_task(self._save())
        except RuntimeError:  # no loop yet: the run will save when it starts
            pass

    # ----- one model call ----------------------------------------------------------

    def _messages_with_remarks(self, messages: list[Message]) -> list[Message]:
        done = self.completed_turns
        remarks = [a.text for a in self.session.actions if a.kind == "inject" and a.after_turn <= done]
        if not remarks:
            return messages
        note = "\n".join(f"- {r}" for r in remarks)
        return [*messages, {"role": "user", "content": f"Remarks from the human moderator, take them into account:\n{note}"}]

    async def _call(
        self, spec: AgentSpec, messages: list[Message], round: int,
        criterion: Criterion | None, expect: Expect, hint: dict[str, Any] | None,
    ) -> Turn:
        slot = self._next_slot
        self._next_slot += 1
        name = criterion.name if criterion else None
        if slot in self._replay:
            recorded = self._replay[slot]
            self.emit(TurnStarted(slot, spec.name, spec.role, round, name))
            self.emit(TurnCompleted(recorded, replayed=True))
            return recorded
        await self.control.gate()
        request = ChatRequest(
            model=spec.model,
            messages=self._messages_with_remarks(messages),
            params=dict(spec.params),
            hint={"role": spec.role, "criterion": name, "round": round, "text": self.session.task.text,
                  "text_b": self.session.task.text_b, "low": criterion.low if criterion else 1,
                  "high": criterion.high if criterion else 5, **(hint or {})},
        )
        for attempt in range(self.retry.attempts):
            self.emit(TurnStarted(slot, spec.name, spec.role, round, name))
            started, clock = utcnow(), time.perf_counter()
            try:
                completion = await self._complete(request, slot, spec.name)
            except LLMError as exc:
                final = not exc.retryable or attempt == self.retry.attempts - 1
                self._record(Turn(slot=slot, agent=spec.name, role=spec.role, round=round, content=exc.partial_text,
                                  criterion=name, started_at=started, duration_s=time.perf_counter() - clock,
                                  error=redact(str(exc)), partial=bool(exc.partial_text)))
                self.emit(TurnFailed(slot, spec.name, redact(str(exc)), exc.partial_text, will_retry=not final))
                await self._save()
                if final:
                    raise
                await asyncio.sleep(self.retry.delay(attempt, exc.retry_after))
                continue
            turn = Turn(slot=slot, agent=spec.name, role=spec.role, round=round, content=completion.text,
                        criterion=name, started_at=started, duration_s=time.perf_counter() - clock,
                        usage=completion.usage)
            _read_answer(turn, expect, criterion)
            self._record(turn)
            await self._save()
            self.emit(TurnCompleted(turn))
            return turn
        raise AssertionError("unreachable: the last attempt either returns or raises")

    async def _complete(self, request: ChatRequest, slot: int, agent: str):
        on_delta = (lambda text: self.emit(TextDelta(slot, agent, text))) if self.stream else None
        task = asyncio.ensure_future(self.client.complete(request, on_delta))
        self.control.track(task.cancel)
        try:
            return await task
        except asyncio.CancelledError:
            if self.control.stopped:
                raise Stopped(self.control.stop_reason) from None
            raise
        finally:
            self.control.track(None)

    def _record(self, turn: Turn) -> None:
        self.session.turns.append(turn)
        self.session.usage.add(turn.usage)

    async def _save(self) -> None:
        if self.save_fn is None:
            return
        self.session.updated_at = utcnow()
        result = self.save_fn(self.session)
        if asyncio.iscoroutine(result):
            await result


def _read_answer(turn: Turn, expect: Expect, criterion: Criterion | None) -> None:
    text = turn.content
    if expect == "no_issue":
        turn.no_issue = parsing.is_no_issue(text)
    elif parsing.is_refusal(text):
        return
    elif expect == "score" and criterion is not None:
        turn.score = parsing.parse_score(text, criterion.low, criterion.high)
    elif expect == "pair" and criterion is not None:
        pair = parsing.parse_pair_scores(text, low=criterion.low, high=criterion.high)
        if pair is not None:
            turn.score, turn.score_b = pair
    elif expect == "verdict":
        turn.verdict = parsing.parse_verdict(text)


def _has_answer(turn: Turn, expect: Expect) -> bool:
    if expect == "verdict":
        return turn.verdict is not None
    return turn.score is not None


def apply_overrides(outcome: Outcome, actions: list[HumanAction]) -> Outcome:
    """A person's override replaces the protocol's score; the note keeps both."""
    for action in actions:
        if action.kind != "override" or action.criterion is None:
            continue
        before = outcome.scores.get(action.criterion)
        outcome.scores[action.criterion] = float(action.value) if action.value is not None else None
        why = f": {action.text}" if action.text else ""
        outcome.notes.append(
            f"{action.criterion}: score overridden by {action.who} from {before} to {action.value}{why}"
        )
    return outcome


class Context:
    """All a protocol may touch: the task, its options, turns, and the human."""

    def __init__(self, runner: Runner):
        self._runner = runner
        self.session = runner.session
        self.turn = runner.turn
        self.ask_human = runner.ask_human
        self.round_completed = runner.round_completed
        self.notice = runner.notice
        self.rng = random.Random(self.session.options.get("seed", 0))

    @property
    def task(self) -> Task:
        return self.session.task

    @property
    def criteria(self) -> list[Criterion]:
        return self.session.criteria

    @property
    def options(self) -> dict[str, Any]:
        return self.session.options

    def agents(self, role: str) -> list[AgentSpec]:
        return [a for a in self.session.agents if a.role == role]

    def usage(self) -> Usage:
        return self.session.usage
