"""DEBATE (Kim et al. 2024): a Scorer and a devil's-advocate Critic, led by a Commander.

Algorithm 1 of the paper, per criterion:

    score <- Scorer(prompt)
    for i in 1..n:
        feedback <- Critic(prompt, score)          # Commander forwards score and rationale
        if NO ISSUE in feedback: break
        score <- Scorer(feedback)                  # Commander forwards the criticism
    final <- latest score, or the Tie-Breaker's (or a person's) when no agreement

The Commander is a fixed template here, not a model call: it composes each
prompt and carries the debate's memory, which is all the paper asks of it.
So a debate agreeing at iteration k costs 2k calls, and 2n+1 without agreement.

The vote before discussion (`outcome.vote`) is the Scorer's first score of each
criterion, before the Critic spoke: DEBATE's first round has only one scorer,
so its "vote" is that one judge's score, and costs one call per criterion (two
when it had to be re-asked). The debate's gain over it is what the Critic's
objections changed.
A history too long for an agent's context is condensed (engine.condense) at
the cost of one more call per condensation; it is never cut.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from debate_tui.catalog import find_persona
from debate_tui.domain import AgentSpec, Criterion, Outcome, Persona, Turn, task_block
from debate_tui.engine.condense import condense, condense_log
from debate_tui.engine.runner import Context
from debate_tui.protocols import confidence
from debate_tui.protocols.common import ModelChoice, counted, criterion_block, excerpt, score_form
from debate_tui.protocols.spec import CallCount, CriteriaRule, Flag, ProtocolOptions, ProtocolSpec
from debate_tui.protocols.vote import first_answers, first_round_slots, vote_from

SCORER_SYSTEM = "You are the Scorer. Think logically, step by step, to score the text you are given."
TIE_BREAKER_SYSTEM = (
    "You are the Tie-Breaker. A Scorer and a Critic could not agree on a score. Read the task and "
    "their debate log, take a side, and decide the final score according to the evaluation criterion."
)


class Options(ProtocolOptions):
    rounds: int = Field(4, ge=1, le=20)
    """Maximum Critic iterations n (the paper's best: 4)."""
    critic_persona: Annotated[str, Flag(metavar="NAME|FILE.toml")] = "strictly-negative"
    """The Critic's persona: strictly-negative, moderately-negative, weakly-negative, plain, sophisticated, or one
    of yours (a name in personas_dir, or a .toml file)."""
    tie_breaker: Annotated[Literal["none", "agent", "human"], Flag(bare="agent")] = "none"
    """Who decides when Scorer and Critic never agree: nobody (the Scorer's last score), an agent, a person."""
    seed: int = 0
    """Seed for every random draw (stored in the session)."""


def build_agents(options: Options, models: ModelChoice, personas: list[Persona] | None = None) -> list[AgentSpec]:
    critic = personas[0] if personas else find_persona(options.critic_persona)
    specs = [
        AgentSpec(name="Scorer", role="scorer", model=models.model_for("Scorer", "scorer"), params=models.params),
        AgentSpec(name="Critic", role="critic", persona=critic,
                  model=models.model_for("Critic", "critic"), params=models.params),
    ]
    if options.tie_breaker == "agent":
        specs.append(AgentSpec(name="Tie-Breaker", role="tie_breaker",
                               model=models.model_for("Tie-Breaker", "tie_breaker"), params=models.params))
    return specs


class Commander:
    """Composes every prompt and remembers the debate, as the paper's Commander does."""

    def __init__(self, ctx: Context, criterion: Criterion):
        self.criterion = criterion
        self.brief = f"{task_block(ctx.task)}\n\n{criterion_block(criterion)}"
        critic = ctx.session.agent("Critic")
        self.critic_system = critic.persona.role_prompt if critic.persona else ""
        self.scorer_dialogue: list[dict[str, str]] = [
            {"role": "system", "content": SCORER_SYSTEM},
            {"role": "user", "content": f"{self.brief}\n\n{score_form(criterion)}"},
        ]
        self.log: list[str] = []

    async def fit(self, ctx: Context, agent: str, round: int) -> None:
        """Condense the older rounds `agent` is about to read if they would not fit its context."""
        if agent == "Scorer":
            self.scorer_dialogue = await condense(ctx, "Scorer", self.scorer_dialogue, round=round)
        else:
            frame = self._critic_prompt([], "") if agent == "Critic" else self._tie_breaker_prompt([])
            self.log = await condense_log(ctx, agent, self.log, around=frame, round=round)

    def ask_scorer(self) -> list[dict[str, str]]:
        return list(self.scorer_dialogue)

    def scorer_said(self, turn: Turn) -> None:
        self.scorer_dialogue.append({"role": "assistant", "content": turn.content})
        self.log.append(f"Scorer: {turn.content}")

    def ask_critic(self, scorer_turn: Turn) -> list[dict[str, str]]:
        return self._critic_prompt(self.log[:-1], scorer_turn.content)

    def _critic_prompt(self, earlier_log: list[str], latest: str) -> list[dict[str, str]]:
        earlier = "\n\n".join(earlier_log)
        history = f"Earlier debate:\n{earlier}\n\n" if earlier else ""
        return [
            {"role": "system", "content": self.critic_system},
            {"role": "user", "content": (
                f"{self.brief}\n\n{history}The Scorer's latest score and rationale:\n{latest}\n\n"
                "Criticise the score if it is not justified. If it is, reply NO ISSUE."
            )},
        ]

    def critic_said(self, turn: Turn) -> None:
        self.log.append(f"Critic: {turn.content}")
        self.scorer_dialogue.append({"role": "user", "content": (
            f"The Critic replies:\n{turn.content}\n\nReconsider your score in the light of this criticism. "
            f"{score_form(self.criterion)}"
        )})

    def ask_tie_breaker(self) -> list[dict[str, str]]:
        return self._tie_breaker_prompt(self.log)

    def _tie_breaker_prompt(self, entries: list[str]) -> list[dict[str, str]]:
        log = "\n\n".join(entries)
        return [
            {"role": "system", "content": TIE_BREAKER_SYSTEM},
            {"role": "user", "content": f"{self.brief}\n\nDebate log:\n{log}\n\n{score_form(self.criterion)}"},
        ]


def _shown(score: float | None) -> str:
    return "unscored" if score is None else f"{score:g}"


class ScorerRecord:
    """The Scorer's scores as the debate goes: the latest turn decides; an unscored latest turn leaves the
    criterion unscored (the Critic disputed the earlier ones), and the last readable score is only told."""

    def __init__(self) -> None:
        self.readable: tuple[float, int] | None = None

    def said(self, turn: Turn, iteration: int) -> Turn:
        if turn.score is not None:
            self.readable = (turn.score, iteration)
        return turn

    def how(self, latest: Turn, reached: str) -> str:
        if latest.score is not None or self.readable is None:
            return reached
        value, iteration = self.readable
        return (f"{reached}; the Scorer's last turn is unscored, so the criterion is unscored (its last readable "
                f"score, {value:g} at iteration {iteration}, was disputed by the Critic; information only)")


async def debate_one(ctx: Context, criterion: Criterion, options: Options) -> tuple[float | None, str]:
    """One criterion's debate; returns the final score and how it was reached."""
    commander = Commander(ctx, criterion)
    record = ScorerRecord()
    score = record.said(await ctx.turn("Scorer", commander.ask_scorer(), round=0, criterion=criterion,
                                       expect="score"), 0)
    commander.scorer_said(score)
    for iteration in range(1, options.rounds + 1):
        await commander.fit(ctx, "Critic", iteration)
        feedback = await ctx.turn("Critic", commander.ask_critic(score), round=iteration,
                                  criterion=criterion, expect="no_issue")
        commander.critic_said(feedback)
        if feedback.no_issue:
            ctx.round_completed(iteration, criterion)
            return score.score, record.how(score, f"NO ISSUE after {counted(iteration, 'iteration')}")
        await commander.fit(ctx, "Scorer", iteration)
        score = record.said(await ctx.turn("Scorer", commander.ask_scorer(), round=iteration, criterion=criterion,
                                           expect="score"), iteration)
        commander.scorer_said(score)
        ctx.round_completed(iteration, criterion)
    if options.tie_breaker == "agent":
        await commander.fit(ctx, "Tie-Breaker", options.rounds + 1)
        decision = await ctx.turn("Tie-Breaker", commander.ask_tie_breaker(), round=options.rounds + 1,
                                  criterion=criterion, expect="score")
        if decision.score is not None:
            return decision.score, f"tie-breaker after {counted(options.rounds, 'iteration')} without agreement"
    iterations = counted(options.rounds, "iteration")
    if options.tie_breaker == "human":
        choices = tuple(f"{v:g}" for v in _scale_points(criterion))
        last = record.how(score, f"Scorer's last score: {_shown(score.score)}")
        objection = next((e.removeprefix("Critic: ") for e in reversed(commander.log) if e.startswith("Critic: ")), "-")
        details = (("Text", excerpt(ctx.task.text)), ("Scorer", f"last score {_shown(score.score)}"),
                   ("Critic", excerpt(objection)))
        value = await ctx.ask_human(f"Scorer and Critic did not agree on {criterion.name} after {iterations} ({last}). "
                                    f"Decide the score ({criterion.scale}).", choices, details=details,
                                    criterion=criterion.name)
        return float(value), "decided by a person after no agreement"
    return score.score, record.how(score, f"Scorer's last score: no agreement after {iterations}")


def _scale_points(criterion: Criterion) -> list[float]:
    low, high = int(criterion.low), int(criterion.high)
    return [float(v) for v in range(low, high + 1)]


def calls(options: Options, criteria: int, pairwise: bool) -> CallCount:
    """Per criterion: 2 when the Critic agrees at once, 2n+1 when it never does (+1 with the Tie-Breaker)."""
    most = 2 * options.rounds + 1 + (options.tie_breaker == "agent")
    return CallCount(2 * criteria, most * criteria)


async def run(ctx: Context) -> Outcome:
    options = Options.model_validate(ctx.options)
    ctx.plan(options.rounds + (options.tie_breaker == "agent"), first_round=0)  # round 0: the first score
    outcome, first = Outcome(), Outcome()
    for criterion in ctx.criteria:
        final, how = await debate_one(ctx, criterion, options)
        outcome.scores[criterion.name] = final
        outcome.per_agent.setdefault("Scorer", {})[criterion.name] = final
        outcome.notes.append(f"{criterion.name}: {how}")
        opening = first_answers(ctx, ["Scorer"], 0, criterion)["Scorer"]
        first.scores[criterion.name] = first.per_agent.setdefault("Scorer", {})[criterion.name] = opening.score
    outcome.method = "; ".join(outcome.notes)
    outcome.vote = vote_from(first, "the Scorer's first score, before the Critic spoke (one scorer in the first "
                             "round: the vote is that one score)", first_round_slots(ctx, ["Scorer"], 0))
    return outcome


SPEC = ProtocolSpec(
    name="debate", title="DEBATE",
    paper="Kim et al. 2024, DEBATE: Devil's Advocate-Based Assessment and Text Evaluation",
    options=Options, criteria=CriteriaRule("score", ("coherence",)), optional=("source", "context"),
    build_agents=build_agents, run=run, calls=calls, personas=True, persona_option="critic_persona",
    calls_formula="2k with agreement at iteration k; 2n+1 without (+1 Tie-Breaker), per criterion",
    confidence=confidence.DEBATE,
    demo="debate_tui.protocols.debate_demo",
)
