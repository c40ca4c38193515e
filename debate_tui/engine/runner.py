"""The runner: executes a protocol, one `turn()` at a time, for any watcher.

Every call gets a *slot*, a number unique in the session, in the order calls
start. A resumed run replays completed turns instead of calling the model
again, so the protocol rebuilds exactly the state it had (rounds, histories,
random draws) and carries on from there. A recorded turn is found by *who
asked in which round about what, for the how-many-th time*, not by slot:
parallel turns that are re-asked (an empty reply) take slots in the order
their replies happen to arrive, which a resume cannot reproduce, but each
agent's own sequence of calls is the same on every run.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from debate_tui import parsing
from debate_tui.domain import (
    VERDICT_FLIP,
    AgentSpec,
    Criterion,
    HumanAction,
    Outcome,
    Session,
    Task,
    Turn,
    Usage,
    task_injection_signs,
    utcnow,
)
from debate_tui.engine import structured
from debate_tui.engine.budget import Budget
from debate_tui.engine.control import RunControl, Stopped
from debate_tui.engine.events import (
    Event,
    Finished,
    HumanActed,
    NeedsHuman,
    Notice,
    OutcomeReached,
    Planned,
    RoundCompleted,
    TextDelta,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    Waiting,
)
from debate_tui.engine.judged import stamp
from debate_tui.engine.mass import score_mass
from debate_tui.generation import Generation
from debate_tui.llm import DEMO_MODEL, tokens
from debate_tui.llm.base import ChatRequest, Completion, DemoPart, LLMClient, LLMError, Message
from debate_tui.llm.keys import key_source
from debate_tui.pasted import injection_note
from debate_tui.redact import redact

if TYPE_CHECKING:
    from debate_tui.config import Limits


REMINDERS: dict[str, str] = {
    "score": "Your reply had no score I could read. Answer again and end with a line 'Score: N', "
             "N between {low:g} and {high:g}.",
    "pair": "Your reply had no pair of scores I could read. End with a line 'Scores: A B' for text 1 and text 2, "
            "each between {low:g} and {high:g}.",
    "verdict": "Your reply had no verdict I could read. "
               "End with a line 'Verdict: 1', 'Verdict: 2' or 'Verdict: 0' (tie).",
}
BRIEFLY = "Your reply was {ending} before it ended. Answer briefly this time, in a few sentences at most. "
"""Put before the reminder when the first reply did not finish: a shorter answer is what can fit."""
DECLINED = ("Your reply was empty or declined the task. This is an evaluation exercise and your answer is needed: "
            "answer the request above as asked.")
"""The reminder for a turn that expects free text (a Critic's feedback, a discussion turn)."""
ASKED_FOR = {"score": "the score line", "pair": "the scores line", "verdict": "the verdict line"}
"""What a reminder asks for, as a screen labels its call; other turns are asked for an answer again."""
CUT_RETRIED = "cut off: the stream ended without a finish reason or end marker; asked again"
"""A cut try's error: a fault retried within --retries, its partial text kept for reading only."""


ReplayKey = tuple[str, int, str | None]
"""Agent, round and criterion of a call; with its occurrence count, it finds a recorded turn."""


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
    def of(cls, limits: Limits) -> RetryPolicy:
        """The configuration's `limits.retries` (attempts per call) and `limits.retry_delay` (first backoff, seconds),
        read at the edge and handed down."""
        return cls(attempts=limits.retries, base_delay_s=limits.retry_delay)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay_s)
        backoff = min(self.base_delay_s * 2**attempt, self.max_delay_s)
        return backoff * (1 + self.jitter * self.rng.random())


Store = Callable[[Session], Any]


Play = Callable[["Context"], Awaitable[Outcome]]
"""A protocol's algorithm (its spec's `run`), handed to the runner by the layer that knows the protocols."""


class Runner:
    """Runs `session.protocol` (its `play`) against `client`, emitting events and saving after each turn."""

    def __init__(
        self,
        session: Session,
        client: LLMClient,
        *,
        play: Play,
        emit: Callable[[Event], None] = lambda event: None,
        save: Store | None = None,
        control: RunControl | None = None,
        retry: RetryPolicy | None = None,
        stream: bool = True,
        interactive: bool = False,
        budget: Budget | None = None,
        demo: Mapping[str, DemoPart] | None = None,
    ):
        self.session = session
        self.play = play
        self.demo = demo or {}
        """Role -> the part the offline demo model plays for the session's agents of that role (the protocol's)."""
        self.client = client
        self.emit = emit
        self.save_fn = save
        self.control = control or RunControl()
        self.control.on_action = self.record_action
        self.retry = retry or RetryPolicy()
        self.stream = stream
        self.interactive = interactive
        self.budget = budget or Budget()
        self.structured = Generation.recorded(session.options).structured
        """`--structured` (True, "auto" or False): each answer line asked again as JSON where the model can."""
        self._probing: dict[str, asyncio.Lock] = {}
        """A lock per model whose answer format is still being tried (`structured.answer`)."""
        self._next_slot = 0
        self._replay: dict[ReplayKey, list[Turn]] = {}
        for recorded in sorted((t for t in session.turns if t.error is None), key=lambda t: t.slot):
            self._replay.setdefault((recorded.agent, recorded.round, recorded.criterion), []).append(recorded)
        self._used_slots = {t.slot for t in session.turns if t.error is None}
        self._asked: dict[ReplayKey, int] = {}
        self._decisions_used = 0
        self._inflight: set[asyncio.Future[Any]] = set()
        """Model calls and retry waits under way: `stop` cancels them all, parallel turns included."""
        self._closed = False
        """Set when the run has ended: a straggling parallel turn must not change the saved session."""

    # ----- what protocols call -------------------------------------------------

    @property
    def completed_turns(self) -> int:
        return sum(1 for t in self.session.turns if t.error is None)

    async def turn(
        self,
        agent: str | AgentSpec,
        messages: list[Message],
        *,
        round: int,
        criterion: Criterion | None = None,
        expect: structured.Expect = "text",
        types: Sequence[str] = (),
    ) -> Turn:
        """One utterance; an empty or refused reply, or one without the asked-for score or verdict, is re-asked once.

        `agent` names one of the session's agents; a spec not in the session (the
        history condenser) speaks as given. `types`: a report's error types, asked in order.
        """
        spec = agent if isinstance(agent, AgentSpec) else self.session.agent(agent)
        question = structured.Question(expect, criterion, tuple(types))
        first = await self._call(spec, messages, round, question)
        if _has_answer(first, expect):
            return first
        if first.finish_reason == "cut":  # already asked again within --retries: a reminder would be one more try
            self.emit(Notice(f"{spec.name}: every try was cut off before the reply ended; marked unscored"))
            return first
        low, high = structured.scale_of(criterion)
        reminder = REMINDERS[expect].format(low=low, high=high) if expect in REMINDERS else DECLINED
        if first.ending:
            reminder = BRIEFLY.format(ending=first.ending) + reminder
        again = [*messages, {"role": "assistant", "content": first.content}, {"role": "user", "content": reminder}]
        second = await self._call(spec, again, round, question, reminder=ASKED_FOR.get(expect, "an answer again"))
        if not _has_answer(second, expect):
            second.unscored = True
            what = expect if expect in REMINDERS else "answer"
            self.emit(Notice(f"{spec.name}: no {what} could be read after a reminder "
                             f"({'empty reply' if not second.content.strip() else 'refused or unreadable'}); "
                             "marked unscored"))
        return second

    async def ask_human(self, question: str, options: tuple[str, ...], *, labels: tuple[str, ...] = (),
                        details: tuple[tuple[str, str], ...] = (), criterion: str | None = None) -> str:
        """A decision recorded earlier (on resume), a live one (TUI), or a headless stop.

        `labels` (one per option) and `details` (labelled excerpts) tell the person what is decided."""
        decisions = [a for a in self.session.actions if a.kind == "decide"]
        if self._decisions_used < len(decisions):
            self._decisions_used += 1
            return str(decisions[self._decisions_used - 1].value)
        self.session.pending_question = question
        self.emit(NeedsHuman(question, options, labels, details, criterion))
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

    def plan(self, last_round: int, first_round: int = 1) -> None:
        self.emit(Planned(last_round, first_round))

    # ----- the run --------------------------------------------------------------

    async def run(self) -> Session:
        session = self.session
        session.status, session.error, session.pending_question = "running", None, None
        self.control.track(self._cancel_inflight)
        if signs := task_injection_signs(session.task):
            self.emit(Notice(injection_note(signs)))  # the TUI's notices and `run`'s stream say it before any turn
        try:
            await self._save()  # a first call that hangs still leaves a visible, resumable session
            outcome = await self.play(Context(self))
            session.outcome = apply_overrides(outcome, session.actions)
            session.status = "completed"
            if self.unreplayed():
                self.emit(Notice(f"{self.unreplayed()} recorded turns were not asked for again on resume; the "
                                 "protocol or its options changed since the session was saved"))
            self.emit(OutcomeReached(session.outcome))
        except NeedsHumanDecision:
            session.status = "needs_human"
        except Stopped as exc:
            session.status, session.error = "cancelled", str(exc)
        except LLMError as exc:
            session.status, session.error = "failed", redact(str(exc))
        except Exception as exc:  # a bug must not lose the session: save it as failed
            session.status, session.error = "failed", redact(f"internal error: {type(exc).__name__}: {exc}")
        finally:
            self._closed = True
            self.control.track(None)
            self._cancel_inflight()
        await self._save()
        self.emit(Finished(session.status, session.error))
        return session

    def record_action(self, action: HumanAction) -> None:
        """Store a human action where a replay will find it, and save it at once."""
        action.after_turn = self.completed_turns
        self.session.actions.append(stamp(action, self.session))
        if action.kind == "override" and self.session.outcome is not None:
            self.session.outcome = apply_overrides(self.session.outcome, [action])
        self.emit(HumanActed(action, acted_on(self.session, action)))
        with contextlib.suppress(RuntimeError):  # no loop yet: the run will save when it starts
            asyncio.get_running_loop().create_task(self._save())

    # ----- one model call ----------------------------------------------------------

    def _messages_with_remarks(self, messages: list[Message]) -> list[Message]:
        done = self.completed_turns
        remarks = [a.text for a in self.session.actions if a.kind == "inject" and a.after_turn <= done]
        if not remarks:
            return messages
        note = "\n".join(f"- {r}" for r in remarks)
        remark = f"Remarks from the human moderator, take them into account:\n{note}"
        return [*messages, {"role": "user", "content": remark}]

    async def _call(self, spec: AgentSpec, messages: list[Message], round: int, question: structured.Question, *,
                    reminder: str = "") -> Turn:
        """One model call as a turn: replayed when recorded, else asked (with retries), read, saved, announced."""
        criterion = question.criterion
        key: ReplayKey = (spec.name, round, criterion.name if criterion else None)
        recorded = self._replayed(key, spec)
        if recorded is not None:
            return recorded
        slot = self._take_slot()
        await self.control.gate()
        request = ChatRequest(model=spec.model, messages=self._messages_with_remarks(messages),
                              params=dict(spec.params), demo=self._demo_part(spec))
        turn, completion = await self._ask_with_retries(spec, request, slot, key, reminder)
        if turn.finish_reason == "cut":
            turn.unscored = True  # every try was cut: the partial text is kept for reading, never taken as an answer
        else:
            await self._read(spec, request, turn, completion, question)
        self._record(turn)
        await self._save()
        self.emit(TurnCompleted(turn))
        return turn

    def _demo_part(self, spec: AgentSpec) -> DemoPart | None:
        """The demo's part for one of the session's agents; a spec speaking as given (a condenser) has none."""
        if spec.model != DEMO_MODEL or all(agent.name != spec.name for agent in self.session.agents):
            return None
        return self.demo.get(spec.role)

    def _replayed(self, key: ReplayKey, spec: AgentSpec) -> Turn | None:
        """The recorded turn for this occurrence of `key` (a resumed run), announced as replayed; None if new."""
        occurrence = self._asked.get(key, 0)
        self._asked[key] = occurrence + 1
        recorded_here = self._replay.get(key, [])
        if occurrence >= len(recorded_here):
            return None
        recorded = recorded_here[occurrence]
        self.emit(TurnStarted(recorded.slot, spec.name, spec.role, key[1], key[2]))
        self.emit(TurnCompleted(recorded, replayed=True))
        return recorded

    async def _ask_with_retries(self, spec: AgentSpec, request: ChatRequest, slot: int,
                                key: ReplayKey, reminder: str = "") -> tuple[Turn, Completion]:
        """The first reply that ended (or the last cut one), after retrying errors and cut streams with backoff.

        A stream that ends with neither a finish reason nor an end marker (`cut`) is a fault like a dropped
        connection: its partial text may hold a number that is not the judge's last word.
        """
        for attempt in range(self.retry.attempts):
            final = attempt == self.retry.attempts - 1
            self._check_open()
            if tokens.needs_loading(spec.model):
                self.emit(Waiting("loading the model library (first call only)"))
                await self._cancellable(tokens.load_off_loop())
                self._check_open()
            self._measure(spec, request)
            self.emit(TurnStarted(slot, spec.name, spec.role, key[1], key[2], reminder))
            started, clock = utcnow(), time.perf_counter()
            try:
                completion = await self._complete(request, slot, spec.name)
            except LLMError as exc:
                self._check_open()
                final = final or not exc.retryable
                turn = _turn(spec, slot, key, started, clock, exc.partial_text, error=redact(str(exc)),
                             partial=bool(exc.partial_text), finish_reason="error")
                await self._failed_attempt(turn, will_retry=not final)
                if final:
                    raise LLMError(exc.kind, failure_message(spec, exc, attempt + 1),
                                   partial_text=exc.partial_text) from None
                await self._cancellable(asyncio.sleep(self.retry.delay(attempt, exc.retry_after)))
                continue
            self._check_open()
            turn = _turn(spec, slot, key, started, clock, completion.text, usage=completion.usage,
                         finish_reason=completion.finish_reason)
            if completion.finish_reason != "cut" or final:
                return turn, completion
            turn.error, turn.partial = CUT_RETRIED, bool(completion.text)
            await self._failed_attempt(turn, will_retry=True)
            await self._cancellable(asyncio.sleep(self.retry.delay(attempt, None)))
        raise AssertionError("unreachable: the last attempt either returns or raises")

    async def _failed_attempt(self, turn: Turn, *, will_retry: bool) -> None:
        """Keep a failed try in the session (its partial text and usage) and say whether it is tried again."""
        self._record(turn)
        self.emit(TurnFailed(turn.slot, turn.agent, turn.error or "", turn.content, will_retry=will_retry))
        await self._save()

    async def _read(self, spec: AgentSpec, request: ChatRequest, turn: Turn, completion: Completion,
                    question: structured.Question) -> None:
        """The asked-for answer from the reply, its weight, and with `--structured` the answer asked as JSON."""
        _read_answer(turn, question)
        _weigh_score(turn, completion, question)
        if structured.wanted(self.structured, question.expect, lambda: _answered(turn, question)):
            await structured.answer(lambda ask: self._cancellable(self.client.complete(ask)), self.session,
                                    spec, request.messages, turn, question, self.structured, self._probing)
            self._check_open()

    def _take_slot(self) -> int:
        """The next number no completed turn of the session has (taken before any await)."""
        while self._next_slot in self._used_slots:
            self._next_slot += 1
        self._used_slots.add(self._next_slot)
        return self._next_slot

    def unreplayed(self) -> int:
        """Recorded turns this run has not asked for: more than 0 after a completed resume means the
        protocol or its options changed since the session was saved."""
        return sum(max(0, len(turns) - self._asked.get(key, 0)) for key, turns in self._replay.items())

    def _measure(self, spec: AgentSpec, request: ChatRequest) -> None:
        """Before a call: refuse a prompt over the model's window, and stop if the budget would be passed.

        Both checks count tokens exactly only when a cheap upper bound cannot settle them: counting
        every prompt cost 1-2 ms a call, and its first count loaded the encoding on the UI's loop.
        """
        window, reply = tokens.window_for(spec)
        if window is not None and not tokens.fits(spec.model, request.messages, window - reply):
            size = tokens.prompt_tokens(spec.model, request.messages)
            with_reply = f" and its reply may take {reply:,}" if reply else ""
            which = "window" if reply else "input window"
            raise LLMError("context_window", (
                f"{spec.name}: the prompt is about {size:,} tokens{with_reply}, over the {window:,}-token {which} of "
                f"{spec.model}; nothing was cut. Lower --max-history-tokens (older rounds are then condensed), "
                f"shorten the text{', lower --max-reply-tokens' if reply else ''} or use a model with a larger window"))
        self.budget.check_prompt(self.session.usage, spec.model, request.messages)

    async def _complete(self, request: ChatRequest, slot: int, agent: str) -> Completion:
        on_delta = (lambda text: self.emit(TextDelta(slot, agent, text))) if self.stream else None
        return await self._cancellable(self.client.complete(request, on_delta))

    async def _cancellable(self, work: Awaitable[Any]) -> Any:
        """Await `work` as a task that `stop` cancels at once instead of waiting for it."""
        task = asyncio.ensure_future(work)
        self._inflight.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            if self.control.stopped:
                raise Stopped(self.control.stop_reason) from None
            raise
        finally:
            self._inflight.discard(task)

    def _cancel_inflight(self) -> None:
        for task in list(self._inflight):
            task.cancel()

    def _check_open(self) -> None:
        """A parallel turn still going when the run ended (its sibling failed) stops here, changing nothing."""
        if self._closed:
            raise Stopped("the run has ended")

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


def failure_message(spec: AgentSpec, exc: LLMError, attempts: int) -> str:
    """What the person reads when a call finally fails: who, which model, why, and what to do."""
    who = f"{spec.name} ({spec.model})"
    if exc.kind == "auth":
        source = key_source(spec.model, spec.params.get("api_key_env"))
        where = f"the key in {source.variable} ({source.origin})" if source.variable else "the provider's API key"
        return redact(f"{who}: authentication failed, not retried: check {where}. {exc}")
    if exc.kind == "context_window":
        return redact(f"{who}: the prompt and reply do not fit the model's context window, not retried: {exc}. "
                      "Lower --max-history-tokens or --max-reply-tokens, or shorten the text")
    if exc.kind in ("bad_request", "not_found"):
        return redact(f"{who}: the provider rejected the request, not retried: {exc}")
    if exc.kind == "reply":
        return redact(f"{who}: {exc}, not retried")
    tries = f"after {attempts} attempt{'s' if attempts > 1 else ''}" if exc.retryable else "not retried"
    return redact(f"{who}: {exc.kind.replace('_', ' ')} error {tries}: {exc}")


def _turn(spec: AgentSpec, slot: int, key: ReplayKey, started: datetime, clock: float, content: str,
          **fields: Any) -> Turn:
    """A try's turn: who spoke, where, when and for how long, with what it said."""
    return Turn(slot=slot, agent=spec.name, role=spec.role, round=key[1], criterion=key[2], content=content,
                started_at=started, duration_s=time.perf_counter() - clock, **fields)


def _read_answer(turn: Turn, question: structured.Question) -> None:
    """Read the asked-for answer (parsing.read_answer); a score or pair needs the criterion's scale, a report is
    read by its protocol."""
    expect, criterion = question.expect, question.criterion
    if expect in ("score", "pair") and criterion is None or expect in ("text", "report"):
        return
    low, high = structured.scale_of(criterion)
    structured.give(turn, expect, parsing.read_answer(turn.content, expect, low, high,
                                                     criterion.name if criterion else None))


def _weigh_score(turn: Turn, completion: Completion, question: structured.Question) -> None:
    """Keep what the log-probabilities say about a single score; the token list itself is not kept
    (hundreds of tokens a turn), so a resumed run replays the weighted score, not its inputs."""
    turn.logprobs = completion.top_logprobs is not None
    criterion = question.criterion
    if completion.top_logprobs and question.expect == "score" and criterion is not None and turn.score is not None:
        turn.weighted_score = parsing.weighted_score(completion.top_logprobs, criterion.low, criterion.high,
                                                     turn.score)
        turn.score_mass = score_mass(completion.top_logprobs, criterion.low, criterion.high, turn.score)


def _answered(turn: Turn, question: structured.Question) -> bool:
    """Whether the free text gives what was asked; a report, when it answers one of its questions."""
    if question.expect == "report":
        return bool(parsing.readable_types(turn.content, "", list(question.types)))
    return _has_answer(turn, question.expect)


def _has_answer(turn: Turn, expect: structured.Expect) -> bool:
    if expect == "verdict":
        return turn.verdict is not None
    if expect in ("score", "pair"):
        return turn.score is not None
    return turn.no_issue is True or not _declined(turn.content)


def _declined(text: str) -> bool:
    """Empty, or a short refusal: a long reply that starts "I cannot ..." is an argument, not a refusal."""
    return not text.strip() or (parsing.is_refusal(text) and len(text.split()) <= 40)


def acted_on(session: Session, action: HumanAction) -> tuple[str, ...]:
    """The agents an action reaches: an override, those whose answers on its criterion it replaces (DEBATE's
    Scorer, not the Critic); anything else, every agent (a remark goes into the next prompts)."""
    agents = tuple(a.name for a in session.agents if a.role != "human")
    if action.kind != "override":
        return agents
    answered = {t.agent for t in session.turns
                if t.criterion == action.criterion and (t.score is not None or t.verdict is not None)}
    if session.outcome is not None:
        answered |= {name for name, scores in session.outcome.per_agent.items() if action.criterion in scores}
    return tuple(name for name in agents if name in answered) or agents


def apply_overrides(outcome: Outcome, actions: list[HumanAction]) -> Outcome:
    """A person's override replaces the protocol's score, or of a pair its verdict; the note keeps both."""
    for action in actions:
        if action.kind != "override" or action.criterion is None:
            continue
        if isinstance(action.value, str) and action.value in VERDICT_FLIP:
            outcome.notes.append(f"verdict overridden by {action.who} from {outcome.verdict or 'none'} to "
                                 f"{action.value}" + (f": {action.text}" if action.text else ""))
            outcome.verdict = action.value
            outcome.confidence[action.criterion] = None  # a person's answer: no judge's confidence in it
            continue
        before = outcome.scores.get(action.criterion)
        outcome.scores[action.criterion] = float(action.value) if action.value is not None else None
        outcome.confidence[action.criterion] = None
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
        self.plan = runner.plan

    @cached_property
    def rng(self) -> random.Random:
        """The session's seeded draws (ScaleEval's speaking order), made when first drawn from: seeding one costs
        about 3.5 us, which every batch item of the other protocols paid for nothing."""
        return random.Random(self.session.options.get("seed", 0))

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
