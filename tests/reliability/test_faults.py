"""Provider faults, guards and the fault-injection suite, all through the real litellm path.

The first part pins down each behaviour on its own (retries honouring
Retry-After, errors no retry can fix, the per-call timeout, broken streams,
empty replies and refusals, immediate cancel, budgets, context windows and
condensed histories). The last test runs hundreds of debates across every
registered protocol with faults injected on a quarter of the calls, then
resumes whatever stopped, and checks that no completed turn was lost.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from debate_tui.cli import build_parser
from debate_tui.cli.task_args import build_task, session_from_args
from debate_tui.domain import HistorySettings, HumanAction, Session, Task, Usage
from debate_tui.engine.budget import Budget, BudgetExceeded
from debate_tui.engine.control import RunControl
from debate_tui.engine.events import NeedsHuman, Notice, TurnCompleted, TurnFailed, TurnStarted
from debate_tui.engine.runner import RetryPolicy
from debate_tui.factory import runner_for
from debate_tui.inputs import InputError
from debate_tui.llm.litellm_client import classify, load_litellm
from debate_tui.llm.router import ModelRouter
from debate_tui.protocols import PROTOCOLS, get_protocol
from debate_tui.store import read_session, write_session
from debate_tui.testing.fake_server import FAULTS, FakeLLMServer
from tests.helpers import FAKE_KEY
from tests.helpers.cli import FAST, run_cli
from tests.helpers.scripts import CRITIC
from tests.helpers.sessions import make_session, run_with_events

SMALL_MODEL = "openai/fake-small"
"""Registered with litellm below: a 1,000-token window and a price, so windows and costs can be tested."""


@pytest.fixture(scope="module", autouse=True)
def small_model() -> None:
    load_litellm().register_model({SMALL_MODEL: {
        "max_input_tokens": 1000, "max_output_tokens": 200, "input_cost_per_token": 0.001,
        "output_cost_per_token": 0.002, "litellm_provider": "openai", "mode": "chat",
    }})


async def run(session: Session, **kwargs) -> tuple[Session, list]:
    """With quick retries unless the test sets its own."""
    return await run_with_events(session, **{"retry": FAST, **kwargs})


# ----- retries -----------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
async def test_retry_after_is_read_from_the_429(llm_server, stream):
    llm_server.retry_after = 0.25
    llm_server.add_rule(fault="429")
    litellm = load_litellm()
    with pytest.raises(Exception) as caught:
        response = await litellm.acompletion(model="openai/fake-model", api_base=llm_server.base_url,
                                             messages=[{"role": "user", "content": "hi"}], num_retries=0,
                                             stream=stream)
        async for _ in response:
            pass
    error = classify(caught.value)
    assert error.kind == "rate_limit" and error.retryable
    assert error.retry_after == pytest.approx(0.25)


@pytest.mark.serial
async def test_429_waits_as_long_as_retry_after_says_then_succeeds(llm_server):
    llm_server.retry_after = 0.3
    llm_server.add_rule(fault="429", times=1)
    llm_server.add_rule("NO ISSUE", match=CRITIC)
    llm_server.add_rule("Fine.\nScore: 4")
    started = time.perf_counter()
    session, events = await run(make_session("debate", llm_server), retry=RetryPolicy(attempts=3, base_delay_s=5.0))
    assert session.status == "completed" and session.outcome.scores == {"coherence": 4}
    assert 0.3 <= time.perf_counter() - started < 3  # Retry-After, not the 5 s backoff
    failed = [t for t in session.turns if t.error]
    assert len(failed) == 1 and "RateLimitError" in failed[0].error
    assert [e.will_retry for e in events if isinstance(e, TurnFailed)] == [True]


def test_backoff_grows_exponentially_with_jitter_and_is_capped():
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0, jitter=0.25)
    delays = [policy.delay(attempt, None) for attempt in range(5)]
    for attempt, delay in enumerate(delays[:3]):
        assert 2**attempt <= delay <= 2**attempt * 1.25
    assert delays[4] <= 5.0 * 1.25
    assert policy.delay(0, 2.5) == 2.5 and policy.delay(0, 99.0) == 5.0


@pytest.mark.parametrize(("fault", "kind", "says"), [
    ("401", "auth", "authentication failed, not retried: check the key in OPENAI_API_KEY"),
    ("400", "bad_request", "the provider rejected the request, not retried"),
])
def test_auth_and_bad_request_fail_at_once_with_exit_3(capsys, story_file, llm_server, fault, kind, says):
    llm_server.add_rule(fault=fault)
    code, summary, err = run_cli(capsys, "run", "--text", str(story_file), "--model", "openai/fake-model",
                                 "--api-base", llm_server.base_url, "--retries", "4")
    assert code == 3 and summary["status"] == "failed"
    assert llm_server.calls == 1  # never a retry loop
    assert says in summary["error"] and "Scorer (openai/fake-model)" in summary["error"]
    assert FAKE_KEY not in err + json.dumps(summary)
    if fault == "401":
        assert "You sent Authorization: ***" in summary["error"]  # the proxy echoed the header; masked


def test_a_missing_key_is_an_auth_failure_not_retried(capsys, story_file, llm_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    code, summary, _ = run_cli(capsys, "run", "--text", str(story_file), "--model", "openai/fake-model",
                               "--api-base", llm_server.base_url)
    assert code == 3 and "authentication failed, not retried: check the key in OPENAI_API_KEY" in summary["error"]
    assert llm_server.calls == 0


@pytest.mark.serial
@pytest.mark.parametrize("stream", [False, True])
async def test_hang_times_out_and_the_retry_succeeds(llm_server, stream):
    llm_server.hang_seconds = 5
    llm_server.add_rule(fault="hang", times=1)
    llm_server.add_rule("NO ISSUE", match=CRITIC)
    llm_server.add_rule("Fine.\nScore: 4")
    started = time.perf_counter()
    session, _ = await run(make_session("debate", llm_server), client=ModelRouter(timeout_s=0.4), stream=stream)
    assert session.status == "completed"
    assert time.perf_counter() - started < 4
    [failed] = [t for t in session.turns if t.error]
    assert "Timeout" in failed.error


@pytest.mark.serial
def test_timeout_flag_and_variable_reach_the_client(capsys, story_file, llm_server, monkeypatch):
    llm_server.hang_seconds = 5
    llm_server.add_rule(fault="hang")
    monkeypatch.setenv("DEBATE_TUI_RETRY_DELAY", "0.01")
    started = time.perf_counter()
    code, summary, _ = run_cli(capsys, "run", "--text", str(story_file), "--model", "openai/fake-model",
                               "--api-base", llm_server.base_url, "--timeout", "0.3", "--retries", "2")
    assert code == 3 and "timeout error after 2 attempts" in summary["error"]
    assert llm_server.calls == 2 and time.perf_counter() - started < 4
    monkeypatch.setenv("DEBATE_TUI_TIMEOUT", "0.3")
    llm_server.reset()
    llm_server.hang_seconds = 5
    llm_server.add_rule(fault="hang")
    code, summary, _ = run_cli(capsys, "run", "--text", str(story_file), "--model", "openai/fake-model",
                               "--api-base", llm_server.base_url, "--retries", "1")
    assert code == 3 and "timeout error after 1 attempt" in summary["error"]


@pytest.mark.parametrize("fault", ["disconnect", "malformed"])
async def test_a_broken_stream_keeps_its_partial_text_marked_then_the_turn_is_retried(llm_server, fault):
    llm_server.chunk_size = 4
    llm_server.add_rule("The text is ordered and clear throughout.\nScore: 4", fault=fault, times=1)
    llm_server.add_rule("NO ISSUE", match=CRITIC)
    llm_server.add_rule("The text is ordered and clear throughout.\nScore: 4")
    session, events = await run(make_session("debate", llm_server), stream=True)
    assert session.status == "completed" and session.outcome.scores == {"coherence": 4}
    [broken] = [t for t in session.turns if t.error]
    assert broken.partial and broken.content and "The text is ordered".startswith(broken.content[:10])
    assert "MidStreamFallbackError" in broken.error
    assert [e.will_retry for e in events if isinstance(e, TurnFailed)] == [True]


def test_mid_stream_fallback_error_is_a_stream_failure():
    exceptions = load_litellm().exceptions
    error = exceptions.MidStreamFallbackError(message="The model is repeating the same chunk", model="m",
                                              llm_provider="openai")
    classified = classify(error, partial_text="so far")
    assert classified.kind == "stream" and classified.retryable and classified.partial_text == "so far"


async def test_a_turn_that_still_fails_ends_the_run_failed_and_resumable(llm_server, tmp_path):
    path = tmp_path / "s.json"
    llm_server.add_rule("Fine.\nScore: 4", times=1)
    llm_server.add_rule(fault="500")
    session, _ = await run(make_session("debate", llm_server), save=lambda s: write_session(path, s))
    assert session.status == "failed" and "server error after 4 attempts" in session.error
    saved = read_session(path)
    assert saved.status == "failed" and [t.score for t in saved.turns if not t.error] == [4]
    llm_server.reset()
    llm_server.add_rule("NO ISSUE", match=CRITIC)
    resumed, _ = await run(saved, save=lambda s: write_session(path, s))
    assert resumed.status == "completed" and llm_server.calls == 1
    assert read_session(path).turns[: len(saved.turns)] == saved.turns


# ----- empty replies and refusals ------------------------------------------------------------------


@pytest.mark.parametrize("reply", ["", "I cannot evaluate this text."])
async def test_empty_or_refused_score_is_reasked_once_then_unscored_and_reported(llm_server, reply):
    llm_server.add_rule("NO ISSUE", match=CRITIC)
    llm_server.add_rule(reply)
    session, events = await run(make_session("debate", llm_server))
    assert session.status == "completed"
    scorer = [t for t in session.turns if t.role == "scorer"]
    assert len(scorer) == 2 and scorer[1].unscored and session.outcome.scores == {"coherence": None}
    assert any(isinstance(e, Notice) and "marked unscored" in e.message for e in events)


async def test_empty_fault_on_the_critic_is_reasked_not_taken_as_an_objection(llm_server):
    llm_server.add_rule(match=CRITIC, fault="empty", times=1)
    llm_server.add_rule("NO ISSUE", match=CRITIC)
    llm_server.add_rule("Fine.\nScore: 4")
    session, _ = await run(make_session("debate", llm_server))
    critic = [t for t in session.turns if t.role == "critic"]
    assert [t.content for t in critic] == ["", "NO ISSUE"]
    assert "empty or declined" in llm_server.requests[-1].messages[-1]["content"]
    assert session.outcome.method.startswith("coherence: NO ISSUE after 1 iteration")


async def test_a_long_critique_starting_with_i_cannot_is_not_a_refusal(llm_server):
    llm_server.add_rule("I cannot agree with this score: the second sentence repeats the first, which "
                        "breaks the flow of the story.", match=CRITIC, times=1)
    llm_server.add_rule("NO ISSUE", match=CRITIC)
    llm_server.add_rule("Fine.\nScore: 4")
    session, _ = await run(make_session("debate", llm_server))
    assert [t.role for t in session.turns] == ["scorer", "critic", "scorer", "critic"]


# ----- cancel --------------------------------------------------------------------------------------


@pytest.mark.serial
async def test_stop_cancels_the_call_in_flight_at_once(llm_server):
    llm_server.latency = 10
    control = RunControl()

    def emit(event):
        if isinstance(event, TurnStarted):
            asyncio.get_running_loop().call_later(0.2, control.stop, "stopped by the test")

    started = time.perf_counter()
    session = await runner_for(make_session("debate", llm_server), ModelRouter(), emit=emit, control=control).run()
    assert session.status == "cancelled" and session.error == "stopped by the test"
    assert time.perf_counter() - started < 2


@pytest.mark.serial
async def test_stop_during_a_retry_wait_is_immediate(llm_server):
    llm_server.retry_after = 20
    llm_server.add_rule(fault="429")
    control = RunControl()

    def emit(event):
        if isinstance(event, TurnFailed):
            asyncio.get_running_loop().call_later(0.1, control.stop, "stopped while waiting")

    started = time.perf_counter()
    session = await runner_for(make_session("debate", llm_server), ModelRouter(), emit=emit, control=control,
                               retry=RetryPolicy(max_delay_s=30)).run()
    assert session.status == "cancelled" and time.perf_counter() - started < 2


# ----- budgets -------------------------------------------------------------------------------------


def test_budget_counts_the_next_prompt():
    spent = Usage(calls=2, prompt_tokens=600, completion_tokens=100, cost_usd=0.5)
    Budget(max_tokens=1000).check(spent, 300)
    with pytest.raises(BudgetExceeded, match=r"700 tokens spent .* about 301 more, over --max-tokens 1,000"):
        Budget(max_tokens=1000).check(spent, 301)
    Budget(max_cost=1.0).check(spent, 0, 0.5)
    with pytest.raises(BudgetExceeded, match=r"cost budget reached: \$0.5000 spent"):
        Budget(max_cost=1.0).check(spent, 0, 0.51)
    Budget().check(spent, 10**9, 10**9)


def test_max_tokens_stops_the_run_cancelled_with_the_reason_and_resume_finishes(capsys, story_file, llm_server):
    llm_server.add_rule("The score ignores the repetition.", match=CRITIC)
    llm_server.add_rule("Fine.\nScore: 4")
    code, summary, err = run_cli(capsys, "run", "--text", str(story_file), "--model", "openai/fake-model",
                                 "--api-base", llm_server.base_url, "--max-tokens", "700", "--rounds", "3")
    assert code == 4 and summary["status"] == "cancelled"
    assert "token budget reached" in summary["error"] and "--max-tokens 700" in summary["error"]
    assert "token budget reached" in err
    assert summary["prompt_tokens"] + summary["completion_tokens"] <= 700
    stopped_after = llm_server.calls
    assert 0 < stopped_after < 7
    code, summary, _ = run_cli(capsys, "resume", summary["session_path"], "--max-tokens", "100000")
    assert code == 0 and summary["status"] == "completed"
    assert llm_server.calls == 7  # 3 objections: 2*3 + 1 calls in all, none asked twice


def test_max_cost_stops_before_the_call_that_would_pass_it(capsys, story_file, llm_server):
    llm_server.add_rule("The score ignores the repetition.", match=CRITIC)
    llm_server.add_rule("Fine.\nScore: 4")
    code, summary, _ = run_cli(capsys, "run", "--text", str(story_file), "--model", SMALL_MODEL,
                               "--api-base", llm_server.base_url, "--max-cost", "0.5")
    assert code == 4 and "cost budget reached" in summary["error"] and "--max-cost $0.5" in summary["error"]
    assert 0 < summary["cost_usd"] <= 0.5


# ----- context window and condensed history --------------------------------------------------------


def test_a_text_over_the_models_window_is_refused_before_any_call(capsys, tmp_path, llm_server):
    big = tmp_path / "big.txt"
    big.write_text("The river bends east of the town and floods in spring. " * 120)
    code, summary, err = run_cli(capsys, "run", "--text", str(big), "--model", SMALL_MODEL,
                                 "--api-base", llm_server.base_url)
    assert code == 2 and summary is None and llm_server.calls == 0
    assert "over the 1,000-token input window of openai/fake-small" in err
    assert len(err.strip().splitlines()) == 1


async def test_a_prompt_over_the_window_mid_run_fails_clearly_without_a_call(llm_server):
    session = make_session("debate", llm_server)
    session.agents[0].model = SMALL_MODEL
    session.task = Task(text="The river bends east of the town and floods in spring. " * 120)
    session, _ = await run(session)
    assert session.status == "failed" and llm_server.calls == 0
    assert "input window of openai/fake-small; nothing was cut" in session.error


async def test_a_long_history_is_condensed_by_a_recorded_summarizer_turn_and_replays(llm_server, tmp_path):
    budget = 420
    llm_server.add_rule("Summary: the Scorer gave 4; the Critic objected to the repeated sentence.",
                        match="Condense this earlier part")
    llm_server.add_rule("The score ignores the repeated sentence, which says the same thing twice and "
                        "adds nothing; the flow of the story suffers and the score should be lower.", match=CRITIC)
    llm_server.add_rule("I weighed the criticism carefully against the text as a whole, sentence by sentence. "
                        "The repetition is real but brief, the rest is ordered.\nScore: 4")
    session = make_session("debate", llm_server, rounds=4)
    session.keep_history(HistorySettings(max_history_tokens=budget))
    path = tmp_path / "s.json"
    session, events = await run(session, save=lambda s: write_session(path, s))
    assert session.status == "completed"
    condensers = [t for t in session.turns if t.role == "summarizer"]
    assert condensers and all(t.agent.startswith("Condenser for ") for t in condensers)
    assert any(isinstance(e, Notice) and "condensed into a summary" in e.message for e in events)
    from debate_tui.llm.tokens import prompt_tokens
    for request in llm_server.requests:
        assert prompt_tokens("openai/fake-debater", request.messages) <= budget
    condensed = [r for r in llm_server.requests if "[Condensed history" in json.dumps(r.messages)]
    assert condensed  # the later prompts carry the summary, marked as one

    calls = llm_server.calls
    again = read_session(path)
    again.status, again.outcome = "failed", None
    replayed, _ = await run(again)
    assert llm_server.calls == calls  # every turn, the condenser's included, replayed from the file
    assert replayed.outcome.scores == session.outcome.scores


async def test_history_that_cannot_be_condensed_enough_fails_clearly(llm_server):
    session = make_session("debate", llm_server)
    session.keep_history(HistorySettings(max_history_tokens=50))
    llm_server.add_rule("Too long.", match=CRITIC)
    llm_server.add_rule("Fine.\nScore: 4")
    session, _ = await run(session)
    assert session.status == "failed" and "nothing was cut" in session.error


def test_max_history_tokens_too_small_for_the_text_is_bad_input(capsys, story_file):
    code, _, err = run_cli(capsys, "run", "--demo", "--text", str(story_file), "--max-history-tokens", "20")
    assert code == 2 and "over --max-history-tokens 20" in err


def session_for(protocol: str, server: FakeLLMServer, story: Path, *extra: str) -> Session:
    args = build_parser().parse_args(["run", "--protocol", protocol, "--text", str(story), "--seed", "3",
                                      "--model", "openai/fake-debater", "--api-base", server.base_url, *extra])
    return session_from_args(args, build_task(args, lambda message: None), lambda message: None).session


async def test_parallel_turns_reasked_in_any_order_resume_exactly(llm_server, story_file, tmp_path):
    """Slots of re-asked parallel turns follow arrival order; resume finds turns by agent, round and count."""
    session = session_for("chateval", llm_server, story_file, "--strategy", "simultaneous-talk", "--turns", "2",
                          "--structured", "off")  # the reminder's re-ask, not `auto`'s JSON call in its place
    referees = len([a for a in session.agents if a.role == "referee"])
    llm_server.add_rule(fault="empty", times=1, latency=0.0)
    llm_server.add_rule("Coherent enough.\nScore: 4", times=referees, latency=0.05)
    llm_server.add_rule(fault="400")
    path = tmp_path / "s.json"
    session, _ = await run(session, save=lambda s: write_session(path, s))
    assert session.status == "failed" and sum(1 for t in session.turns if not t.error) == referees + 1
    before = read_session(path)
    llm_server.reset()
    llm_server.add_rule("Coherent enough.\nScore: 4")
    resumed, events = await run(read_session(path), save=lambda s: write_session(path, s))
    assert resumed.status == "completed", resumed.error
    assert llm_server.calls == referees  # only the second turn's calls: the first turn replayed
    assert sum(1 for e in events if isinstance(e, TurnCompleted) and e.replayed) == referees + 1
    assert read_session(path).turns[: len(before.turns)] == before.turns
    slots = [t.slot for t in resumed.turns if not t.error]
    assert len(slots) == len(set(slots))


async def test_a_resume_that_skips_recorded_turns_says_so(llm_server):
    llm_server.add_rule("NO ISSUE", match=CRITIC)
    llm_server.add_rule("Fine.\nScore: 4")
    session, _ = await run(make_session("debate", llm_server))
    session.turns[1].agent = "Somebody else"  # as if the protocol had changed since the save
    session.status, session.outcome = "failed", None
    session, events = await run(session)
    assert session.status == "completed"
    assert any(isinstance(e, Notice) and "1 recorded turns were not asked for again" in e.message for e in events)


# ----- the fault-injection suite --------------------------------------------------------------------

DEBATES = 200
FAULT_RATE = 0.25
CONCURRENCY = 24
TIMEOUT_S = 1.0
"""A call's deadline while faults are injected: a hung call is dropped after it (and retried)."""
RESUME_TIMEOUT_S = 60.0
"""A call's deadline on resume, with no fault left: a call slow because the machine is busy is no fault, and with
both cores taken by other work 24 debates at once took longer than TIMEOUT_S per call."""
DEBATE_DEADLINE_S = 600.0
"""A bound on one debate, there only so that a debate that never ends fails the suite instead of hanging it."""
VARIANTS: dict[str, list[list[str]]] = {
    "debate": [[], ["--tie-breaker"], ["--rounds", "1"]],
    "chateval": [[], ["--strategy", "simultaneous-talk"], ["--strategy", "simultaneous-talk-with-summarizer"]],
    "scaleeval": [[], ["--on-no-consensus", "majority"]],
}
"""Extra flags tried in turn for a protocol (parallel turns, tie-breakers); unknown ones are skipped."""


def scripted_reply(request: dict) -> str:
    """A plausible answer to whatever a protocol asks, read from the request's last message."""
    asked = request["messages"][-1]["content"]
    if "Condense this earlier part" in asked:
        return "Summary: scores were given and discussed."
    if "NO ISSUE" in asked:
        return "NO ISSUE" if "Earlier debate" in asked else "The score overlooks the repeated sentence."
    if "Q: Does the text contain" in asked:
        return 'Q: Does the text contain Repetition (REP) errors?\nA: Yes\nLocation: "He went to the pool every ' \
               'morning."\nExplanation: said twice.\nDeduction: -1'
    if "Scores: A B" in asked:
        return "Both are readable; the first is tighter.\nScores: 4 3"
    if '"1", "2" or "0"' in asked or "Verdict" in asked:
        return "Submission 1 answers the question more directly.\n1"
    if "Score:" in asked or "Score: N" in asked:
        return "The story is ordered, with one repeated sentence.\nScore: 4"
    return "The text repeats one sentence; otherwise it reads well."


@dataclass
class Debate:
    protocol: str
    session: Session
    path: Path
    stream: bool
    budget: Budget = field(default_factory=Budget)
    """A tight token budget for some debates: they stop cancelled, then resume without it."""
    stop_after: int | None = None
    """For some debates, a person presses stop after this many completed turns."""
    control: RunControl = field(default_factory=RunControl)
    events: list = field(default_factory=list)
    first_status: str = ""
    saved_before_resume: Session | None = None

    def emit(self, event) -> None:
        if isinstance(event, TurnStarted):
            return
        self.events.append(event)
        done = sum(1 for e in self.events if isinstance(e, TurnCompleted))
        if isinstance(event, TurnCompleted) and done == self.stop_after:
            self.control.stop("stopped by the suite")

    def for_resume(self) -> None:
        """Read the session back from its file, as `resume` does, without the first run's levers."""
        self.saved_before_resume = read_session(self.path)
        self.session = read_session(self.path)
        self.budget, self.stop_after, self.control = Budget(), None, RunControl()
        if self.first_status == "needs_human":
            asked = [e for e in self.events if isinstance(e, NeedsHuman)][-1]
            self.session.actions.append(HumanAction(kind="decide", value=asked.options[0], who="test",
                                                    after_turn=sum(1 for t in self.session.turns if not t.error)))


def new_debate(protocol: str, number: int, server: FakeLLMServer, story: Path, other: Path, root: Path) -> Debate:
    criterion = get_protocol(protocol).criteria.default[0]
    variants = VARIANTS.get(protocol, [[]])
    base = ["run", "--protocol", protocol, "--text", str(story), "--criteria", criterion, "--seed", str(number),
            "--model", "openai/fake-debater", "--api-base", server.base_url]
    for extra in (variants[number % len(variants)], []):
        for pair in ([], ["--text-b", str(other)]):
            args = build_parser().parse_args([*base, *pair, *extra])
            try:
                session = session_from_args(args, build_task(args, lambda message: None), lambda message: None).session
            except InputError:
                continue
            return Debate(protocol, session, root / f"{session.id}-{number}.json", stream=number % 2 == 0,
                          budget=Budget(max_tokens=400) if number % 10 == 3 else Budget(),
                          stop_after=2 if number % 10 == 7 else None)
    raise AssertionError(f"{protocol}: no session could be built for the fault suite")


async def drive(debate: Debate, limit: asyncio.Semaphore, timeout_s: float = TIMEOUT_S) -> None:
    async with limit:
        runner = runner_for(debate.session, ModelRouter(timeout_s=timeout_s), emit=debate.emit, retry=FAST,
                            stream=debate.stream, save=lambda s: write_session(debate.path, s),
                            control=debate.control, budget=debate.budget)
        debate.session = await asyncio.wait_for(runner.run(), timeout=DEBATE_DEADLINE_S)


@pytest.mark.serial
async def test_fault_injection_suite(tmp_path, story_file, capsys):
    protocols = list(PROTOCOLS)
    per_protocol = math.ceil(DEBATES / len(protocols))
    other = tmp_path / "other.txt"
    other.write_text("Tom learned to swim in a month. He practised every morning and lost his fear of water.")
    root = tmp_path / "sessions"
    started = time.perf_counter()
    with FakeLLMServer(default_reply=scripted_reply, fault_rate=FAULT_RATE, fault_kinds=FAULTS, seed=5,
                       retry_after=0.05, hang_seconds=2 * TIMEOUT_S, chunk_size=16) as server:
        debates = [new_debate(p, n, server, story_file, other, root)
                   for n in range(per_protocol) for p in protocols]
        limit = asyncio.Semaphore(CONCURRENCY)
        await asyncio.gather(*(drive(d, limit) for d in debates))
        faulted_calls = server.calls
        faults = Counter(r.fault for r in server.requests if r.fault)

        for debate in debates:
            debate.first_status = debate.session.status
            assert debate.first_status in {"completed", "failed", "cancelled", "needs_human"}
            assert "internal error" not in (debate.session.error or ""), debate.session.error
            on_disk = read_session(debate.path)
            assert on_disk == debate.session  # the last save holds everything, the final status included
            saved = {(t.slot, t.content) for t in on_disk.turns if not t.error}
            completed = [e.turn for e in debate.events if isinstance(e, TurnCompleted) and not e.replayed]
            assert all((t.slot, t.content) in saved for t in completed)  # each completed turn was saved

        server.fault_rate = 0.0
        stopped = [d for d in debates if d.first_status != "completed"]
        for debate in stopped:
            debate.for_resume()
        await asyncio.gather(*(drive(d, limit, RESUME_TIMEOUT_S) for d in stopped))
        resume_calls = server.calls - faulted_calls
    elapsed = time.perf_counter() - started

    kept = 0
    for debate in stopped:
        before, after = debate.saved_before_resume, read_session(debate.path)
        assert after.status == "completed", (debate.protocol, after.error)
        assert after.turns[: len(before.turns)] == before.turns  # zero completed turns lost or changed
        kept += sum(1 for t in before.turns if not t.error)
    assert all(d.session.status == "completed" for d in debates)

    failures = [e for d in debates for e in d.events if isinstance(e, TurnFailed)]
    statuses = Counter(d.first_status for d in debates)
    figures = {
        "debates": len(debates),
        "protocols": {p: sum(1 for d in debates if d.protocol == p) for p in protocols},
        "streamed": sum(d.stream for d in debates),
        "calls_with_faults_on": faulted_calls,
        "faults_injected": sum(faults.values()),
        "fault_share": round(sum(faults.values()) / faulted_calls, 3),
        "faults_by_kind": dict(sorted(faults.items())),
        "failed_attempts_retried": sum(e.will_retry for e in failures),
        "failed_attempts_final": sum(not e.will_retry for e in failures),
        "completed_first_time": statuses["completed"],
        "stopped": {k: v for k, v in statuses.items() if k != "completed"},
        "resumed_and_completed": len(stopped),
        "completed_turns_kept_across_resume": kept,
        "resume_calls": resume_calls,
        "seconds": round(elapsed, 1),
    }
    with capsys.disabled():
        print("\nfault-injection suite:", json.dumps(figures, indent=1))
    assert len(debates) >= DEBATES
    assert figures["fault_share"] >= 0.2
    assert set(faults) == set(FAULTS)  # every kind injected
    assert figures["failed_attempts_retried"] > 0
    assert {"failed", "cancelled"} <= set(figures["stopped"])

