"""ChatEval (Chan et al. 2023): a panel of referees with distinct personas discusses, then votes.

Appendix B, per criterion, with referees D_1..D_N, T discussion turns and the
chat history H that every prompt quotes (Table 6's "discussion history" slot):

    for t in 1..T:
        one-by-one:         for n in 1..N: h_n <- D_n(H); H <- H + h_n      # later speakers hear earlier ones
        simultaneous-talk:  h_1..h_N <- D_1(H)..D_N(H) at once; H <- H + [h_1..h_N]
        ...-with-summarizer: as above, but H <- H + SUM(h_1..h_N)           # the summary, not the raw talk
    ANS <- EXT(each referee's final-turn answer)

EXT is the mean of the referees' scores for one text, or a majority vote of
their preferences for a pair (see `pairs`). The summarizer reads only the turn
it summarizes (Algorithm 3's BUF), not the earlier summaries: the referees
carry those already, and re-sending them grew every summary call.

A history too long for a referee's budget (its model's window, or
`--max-history-tokens`) is condensed before it speaks (engine.condense):
the older entries become one summary, by one more recorded call, or with
`--condense digest` one line each (speaker, opening words, score) without a call. The paper does not ask the panel to
reach a consensus, and neither do we. One history serves all referees: Algorithm
1's index ranges would hide a later speaker's words from earlier ones in the
next turn, which contradicts the text ("concatenate what previous other agents
have said"), so we follow the text. The summarizer runs after every turn, the
last included, as Algorithm 3 does: N*T + T calls.

The vote before discussion (`outcome.vote`) is EXT applied to the referees'
first-turn answers: their mean score, or the majority of their preferences for
a pair (position-calibrated like the final with `--swap`). With the simultaneous
strategies those answers are independent (no referee has heard another yet);
one-by-one, each referee after the first has already heard the ones before it
in that turn, so only the first referee's answer is untouched by discussion:
the vote's method says which. It costs the first turn's N calls.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Literal

from pydantic import Field

from debate_tui.catalog import find_persona
from debate_tui.domain import AgentSpec, Criterion, Outcome, Persona, Task, Turn, names_from_personas, task_block
from debate_tui.engine.condense import condense_log
from debate_tui.engine.runner import Context
from debate_tui.llm.base import Message
from debate_tui.protocols import confidence
from debate_tui.protocols.common import ModelChoice, concurrently, counted, criterion_block
from debate_tui.protocols.pairs import answer_form, in_both_orders, mean, pair_keys, tally, unscored_note
from debate_tui.protocols.spec import CallCount, CriteriaRule, Flag, ProtocolOptions, ProtocolSpec
from debate_tui.protocols.vote import first_round_slots, vote_from

Strategy = Literal["one-by-one", "simultaneous-talk", "simultaneous-talk-with-summarizer"]
REFEREE_PERSONAS = ("general-public", "critic", "news-author", "psychologist", "scientist")
"""The paper's five role prompts (Appendix A), in the order a panel is filled."""
SUMMARIZER = "Summarizer"
HISTORY_START, HISTORY_END = "[Discussion history]", "[End of discussion history]"
SUMMARY_WORDS_PER_REFEREE, SUMMARY_WORDS_EXTRA = 10, 10
"""A turn's summary: a clause per referee (name, score, main reason) and one on where they agree.

Every referee reads every earlier summary in every later turn, so a summary's length is paid N*(T-t)
times; "in a few sentences" left it to the model."""


class Options(ProtocolOptions):
    agents: int = Field(3, ge=2, le=5)
    """Referees N, each with its own persona."""
    turns: Annotated[int, Flag(metavar="T")] = Field(2, ge=1, le=10)
    """Discussion turns T."""
    strategy: Annotated[Strategy, Flag(metavar="NAME")] = "one-by-one"
    """Communication strategy: one-by-one, simultaneous-talk, simultaneous-talk-with-summarizer."""
    swap: bool = False
    """Pairwise only: judge again with the texts exchanged (position bias check)."""


def build_agents(options: Options, models: ModelChoice, personas: list[Persona] | None = None) -> list[AgentSpec]:
    """N referees, personas cycled from `personas` (default: the paper's five), plus the summarizer if used."""
    pool = personas or [find_persona(name) for name in REFEREE_PERSONAS]
    cast = [pool[i % len(pool)] for i in range(options.agents)]
    specs = [
        AgentSpec(name=name, role="referee", persona=persona,
                  model=models.model_for(name, "referee"), params=models.params)
        for name, persona in zip(names_from_personas(cast, frozenset({SUMMARIZER})), cast, strict=True)
    ]
    if options.strategy == "simultaneous-talk-with-summarizer":
        specs.append(AgentSpec(name=SUMMARIZER, role="summarizer",
                               model=models.model_for(SUMMARIZER, "summarizer"), params=models.params))
    return specs


class Panel:
    """One criterion's discussion: the brief every referee reads and the history they share."""

    def __init__(self, ctx: Context, task: Task, criterion: Criterion):
        self.ctx = ctx
        self.criterion = criterion
        self.pairwise = task.pairwise
        self.brief = f"{task_block(task)}\n\n[System]\n{_request(task, criterion)}"
        self.history: list[str] = []

    def prompt(self, referee: AgentSpec, history: list[str] | None = None) -> list[Message]:
        """Table 6: task, request, discussion history, role description, the call to speak.

        The task and request come first and never change, so a provider's prompt cache serves them on
        every call; the history only grows at its end until it is condensed.
        """
        history = self.history if history is None else history
        heard = "\n\n".join(history) or "(Nobody has spoken yet.)"
        role = referee.persona.role_prompt if referee.persona else ""
        return [{"role": "user", "content": (
            f"{self.brief}\n\nThere are a few other referees assigned the same task; it is your responsibility "
            "to discuss with them and think critically before you make your final judgment.\n"
            f"Here is your discussion history:\n{HISTORY_START}\n{heard}\n{HISTORY_END}\n\n{role}\n\n"
            f"Now it's your time to talk, please make your talk short and clear, {referee.name}! "
            + answer_form(self.criterion, self.pairwise)
        )}]

    async def fit(self, referees: list[AgentSpec], turn_number: int) -> None:
        """Condense the shared history if it would pass one of `referees`' budgets, before they speak."""
        for referee in referees:
            self.history = await condense_log(self.ctx, referee.name, self.history, round=turn_number,
                                              around=self.prompt(referee, history=[]))

    async def speak(self, referee: AgentSpec, turn_number: int) -> Turn:
        return await self.ctx.turn(referee.name, self.prompt(referee), round=turn_number, criterion=self.criterion,
                                   expect="pair" if self.pairwise else "score")

    def hear(self, referee: AgentSpec, turn: Turn) -> None:
        self.history.append(f"[{referee.name}]: {turn.content.strip()}")

    async def summarize(self, turns: list[tuple[AgentSpec, Turn]], turn_number: int) -> None:
        """Algorithm 3's SUM(BUF): the referees will carry this summary forward, not their own words."""
        said = "\n\n".join(f"[{referee.name}]: {turn.content.strip()}" for referee, turn in turns)
        summary = await self.ctx.turn(SUMMARIZER, [{"role": "user", "content": (
            f"Several referees are discussing the {self.criterion.name} of "
            f"{'two texts' if self.pairwise else 'a text'}.\n\n"
            f"[Discussion in turn {turn_number}]\n{said}\n[End of discussion in turn {turn_number}]\n\n"
            f"Summarize this turn for the referees in at most {summary_words(len(turns))} words: each referee's "
            "position with the score they gave, and where they agree or disagree. Do not add a judgment of your own."
        )}], round=turn_number, criterion=self.criterion, expect="text")
        self.history.append(f"[Summary of turn {turn_number}]: {summary.content.strip()}")


def summary_words(referees: int) -> int:
    return SUMMARY_WORDS_PER_REFEREE * referees + SUMMARY_WORDS_EXTRA


def _request(task: Task, criterion: Criterion) -> str:
    if task.pairwise:
        return (f"We would like to request your feedback on the two texts displayed above.\n"
                f"{criterion_block(criterion)}\nEach text receives a score on a scale of {criterion.scale}, "
                "where a higher score indicates better performance.")
    return f"We would like to request your feedback on the text displayed above.\n{criterion_block(criterion)}"


TurnOf = Callable[[Panel, list[AgentSpec], int], Awaitable[list[Turn]]]


async def one_by_one(panel: Panel, referees: list[AgentSpec], turn_number: int) -> list[Turn]:
    turns = []
    for referee in referees:
        await panel.fit([referee], turn_number)
        turn = await panel.speak(referee, turn_number)
        panel.hear(referee, turn)
        turns.append(turn)
    return turns


async def simultaneous_talk(panel: Panel, referees: list[AgentSpec], turn_number: int) -> list[Turn]:
    await panel.fit(referees, turn_number)
    turns = await concurrently(panel.speak(referee, turn_number) for referee in referees)
    for referee, turn in zip(referees, turns, strict=True):
        panel.hear(referee, turn)
    return turns


async def simultaneous_talk_with_summarizer(panel: Panel, referees: list[AgentSpec], turn_number: int) -> list[Turn]:
    await panel.fit(referees, turn_number)
    turns = await concurrently(panel.speak(referee, turn_number) for referee in referees)
    await panel.summarize(list(zip(referees, turns, strict=True)), turn_number)
    return turns


STRATEGIES: dict[str, TurnOf] = {
    "one-by-one": one_by_one,
    "simultaneous-talk": simultaneous_talk,
    "simultaneous-talk-with-summarizer": simultaneous_talk_with_summarizer,
}


async def discuss(ctx: Context, task: Task, criterion: Criterion, options: Options,
                  first_turn: int) -> tuple[list[Turn], list[Turn]]:
    """T turns of discussion on one criterion; returns each referee's first-turn and final-turn answers."""
    panel = Panel(ctx, task, criterion)
    referees = ctx.agents("referee")
    first: list[Turn] = []
    final: list[Turn] = []
    for turn_number in range(first_turn, first_turn + options.turns):
        final = await STRATEGIES[options.strategy](panel, referees, turn_number)
        first = first or final
        ctx.round_completed(turn_number, criterion)
    return first, final


def extract(task: Task, criteria: list[Criterion], answers: dict[str, list[Turn]], which: str) -> Outcome:
    """EXT over one answer per referee and criterion (`which` turn's): mean score, or majority vote for a pair."""
    outcome = Outcome()
    for criterion in criteria:
        turns = answers[criterion.name]
        for turn in turns:
            scores = outcome.per_agent.setdefault(turn.agent, {})
            if task.pairwise:
                scores.update(zip(pair_keys(criterion.name), (turn.score, turn.score_b), strict=True))
            else:
                scores[criterion.name] = turn.score
        if not task.pairwise:
            outcome.scores[criterion.name] = mean(turn.score for turn in turns)
            outcome.notes.append(f"{criterion.name}: mean of the referees' {which} scores{unscored_note(turns)}")
    if task.pairwise:
        tally(outcome, criteria)
    return outcome


async def judge(ctx: Context, task: Task, options: Options, first_turn: int = 1) -> Outcome:
    """Every criterion discussed on `task`, then EXT on the final turn (the outcome) and on the first (its vote)."""
    firsts: dict[str, list[Turn]] = {}
    finals: dict[str, list[Turn]] = {}
    for criterion in ctx.criteria:
        firsts[criterion.name], finals[criterion.name] = await discuss(ctx, task, criterion, options, first_turn)
    outcome = extract(task, ctx.criteria, finals, "final-turn")
    heard = ("independent" if options.strategy != "one-by-one" else
             "one-by-one: each referee after the first had heard those before it")
    what = "majority of the referees' first-turn preferences" if task.pairwise else "mean of the referees' " \
        "first-turn scores"
    referees = [a.name for a in ctx.agents("referee")]
    outcome.vote = vote_from(extract(task, ctx.criteria, firsts, "first-turn"), f"{what} ({heard})",
                             first_round_slots(ctx, referees, first_turn))
    return outcome


def warn_if_one_persona(ctx: Context) -> None:
    """The paper's ablation: one role prompt for every referee lowers agreement with humans."""
    personas = {a.persona.name if a.persona else None for a in ctx.agents("referee")}
    if len(personas) == 1:
        ctx.notice(f"all referees share one persona ({personas.pop() or 'none'}); ChatEval found that diverse "
                   "role prompts matter, and identical ones lower agreement with human judgments")


def calls(options: Options, criteria: int, pairwise: bool) -> CallCount:
    """N*T per criterion, +T with the summarizer; twice over for a swapped pair."""
    summaries = options.turns if options.strategy == "simultaneous-talk-with-summarizer" else 0
    count = criteria * (options.agents * options.turns + summaries) * (2 if options.swap and pairwise else 1)
    return CallCount(count, count)


async def run(ctx: Context) -> Outcome:
    options = Options.model_validate(ctx.options)
    ctx.plan(options.turns * (2 if options.swap and ctx.task.pairwise else 1))
    warn_if_one_persona(ctx)
    outcome = await in_both_orders(ctx, lambda task, first: judge(ctx, task, options, first),
                                   swap=options.swap, rounds=options.turns)
    extract = "majority vote of the referees' preferences" if ctx.task.pairwise else "mean of final-turn scores"
    outcome.method = (f"{options.strategy}, {counted(len(ctx.agents('referee')), 'referee')}, "
                      f"{counted(options.turns, 'turn')}: {extract}")
    if options.swap and ctx.task.pairwise:
        outcome.method += ", each referee's scores averaged over both text orders"
    return outcome


SPEC = ProtocolSpec(
    name="chateval", title="ChatEval",
    paper="Chan et al. 2023, ChatEval: Towards Better LLM-based Evaluators through Multi-Agent Debate",
    options=Options, criteria=CriteriaRule("score", ("coherence",)), optional=("text_b", "source", "context"),
    build_agents=build_agents, run=run, calls=calls, personas=True,
    calls_formula="N*T per criterion (+T with the summarizer), twice with --swap on a pair",
    confidence=confidence.DISCUSSION,
    demo="debate_tui.protocols.chateval_demo",
)
