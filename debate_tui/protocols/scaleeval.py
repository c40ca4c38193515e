"""ScaleEval (Chern et al. 2024, Section 4.1 and Appendix A): speakers judge a pair, then
discuss until they agree; when they never do, a person decides.

    draw the submission order and the speaking order (seeded; kept in session.state)
    d = 0: every speaker A_j judges independently: reasoning, then "1", "2" or "0"
    while the speakers disagree and d < D:             # D = --rounds (default 2)
        d += 1
        each speaker, in the drawn order, reads every evaluation and discussion so far
        and keeps or changes its answer
    unanimous -> that verdict; otherwise a person decides (--on-no-consensus)

Calls: 3 speakers agreeing at once cost 3 calls, and every discussion round 3
more (a speaker whose answer cannot be read is asked once more).

Numbering. The speakers see the two texts in the drawn order, so a turn's verdict
(in the transcript) is in the *presented* numbering: when `state["order"]["swapped"]`,
Submission 1 is text 2. Every verdict in the outcome (`verdict`,
`agent_verdicts`) and a person's decision are in the *original* numbering:
1 = the text given first (--text), 2 = the second (--text-b), 0 = a tie.

`--rounds` means discussion rounds here (0: the initial verdicts only); DEBATE
reads the same flag as its Critic iterations. `--criteria-variant` perturbs the
rubric (the paper's Table 7) for robustness runs.

The vote before discussion (`outcome.vote`) is the initial round's verdicts,
given independently: unanimous, that verdict; otherwise their majority (a
split is a tie, "0"), since a vote cannot ask a person. With
`--on-no-consensus majority` it is the final rule applied to round 0. It costs
the initial round's N calls; when the speakers agree at once the final is the
vote and the discussion cost nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from random import Random
from typing import Literal

from pydantic import Field

from debate_tui.domain import AgentSpec, Criterion, Outcome, PairOrder, Persona, Task, Turn, Verdict, Vote
from debate_tui.engine.runner import Context
from debate_tui.pasted import escape_markers
from debate_tui.protocols import confidence
from debate_tui.protocols.common import ModelChoice, counted, excerpt
from debate_tui.protocols.criteria_variants import Variant, rubric, vary
from debate_tui.protocols.pairs import describe_votes, majority
from debate_tui.protocols.spec import CallCount, CriteriaRule, ProtocolOptions, ProtocolSpec
from debate_tui.protocols.vote import first_round_slots, vote_from

VERDICTS: tuple[Verdict, ...] = ("1", "2", "0")
VERDICT_LABELS = ("text 1 better", "text 2 better", "tie")
"""What each of VERDICTS means, in the original numbering, for the person deciding."""
SYSTEM = "You are evaluating two submissions for a particular question, using a specific set of criteria."
DISCUSSION_SYSTEM = (
    "Always remember you are {name}. Review again your own previous evaluations and discussions first, "
    "then answer the user's request from {name}'s perspective."
)
OPTIONS_TEXT = (
    'Afterwards, choose one of the following options:\nSubmission 1 is better: "1"\n'
    'Submission 2 is better: "2"\nNeither is better: "0"\n\n'
    'Type "1", "2" or "0" (without quotes or punctuation) to match your reasoning. At the end, repeat just '
    "the number again by itself on a new line."
)
INITIAL_REQUEST = (
    "Compare the two submissions based on the criteria above. Which one is better? First, give a "
    "step-by-step explanation of your evaluation according to the criteria. Avoid any bias, and do not let "
    "the order in which the submissions are presented affect your judgement. Keep your explanation under "
    "150 words. " + OPTIONS_TEXT
)
DISCUSSION_REQUEST = (
    "Read the question, submissions, criteria and evaluations above. First, explain step by step your "
    "thoughts about the other speakers' evaluations. Second, explain step by step whether or not you change "
    "your original answer about which submission is better, after considering their perspectives. Keep your "
    "reasoning under 150 words. " + OPTIONS_TEXT
)

NoConsensus = Literal["human", "majority", "tie", "undecided"]


class Options(ProtocolOptions):
    agents: int = Field(3, ge=2, le=5)
    """Speakers (the paper: 3)."""
    rounds: int = Field(2, ge=0, le=10)
    """Discussion rounds after the initial verdicts."""
    on_no_consensus: NoConsensus = "human"
    """When the speakers still disagree after the last round: ask a person (headless: exit code 5, resume with
    --decide), the majority, a tie, or no verdict."""
    criteria_variant: Variant = "general"
    """The rubric as written (general) or perturbed from the seed, for robustness runs (the paper's Table 7)."""
    seed: int = 0
    """Seed for every random draw (stored in the session)."""


def build_agents(options: Options, models: ModelChoice, personas: list[Persona] | None = None) -> list[AgentSpec]:
    names = [f"Speaker {number}" for number in range(1, options.agents + 1)]
    return [AgentSpec(name=name, role="speaker", model=models.model_for(name, "speaker"), params=models.params)
            for name in names]


class Order(PairOrder):
    """What was drawn: whether the submissions are shown swapped, and who speaks when."""

    @classmethod
    def draw(cls, rng: Random, names: Sequence[str]) -> Order:
        swapped = rng.random() < 0.5
        return cls(swapped=swapped, speakers=tuple(rng.sample(list(names), k=len(names))))

    def presented(self, task: Task) -> tuple[str, str]:
        """(Submission 1, Submission 2) as the speakers see them."""
        assert task.text_b is not None
        return (task.text_b, task.text) if self.swapped else (task.text, task.text_b)


class Panel:
    """The speakers' shared record: the data they judge, and everything said so far."""

    def __init__(self, ctx: Context, criterion: Criterion, order: Order):
        self.ctx = ctx
        self.criterion = criterion
        self.order = order
        self.first, self.second = order.presented(ctx.task)
        self.record: list[str] = []

    def data(self) -> str:
        task = self.ctx.task
        parts = [f"[Question]: {escape_markers(task.source or '(no question given)')}"]
        if task.context:
            parts.append(f"[Context]: {escape_markers(task.context)}")
        parts += [f"[Submission 1]: {escape_markers(self.first)}", f"[Submission 2]: {escape_markers(self.second)}",
                  f"[Criteria]: {self.criterion.name}\n{rubric(self.criterion)}"]
        return "\n\n".join(parts)

    async def _ask(self, name: str, messages: list[dict[str, str]], round: int) -> Turn:
        return await self.ctx.turn(name, messages, round=round, criterion=self.criterion, expect="verdict")

    async def initial(self) -> dict[str, Turn]:
        """Round 0: every speaker judges on its own (none sees another's evaluation).

        Asked one after the other, not at once: a speaker re-asked for an unreadable
        verdict would otherwise take its next slot in whatever order the replies
        arrived, and a resumed run could not replay the turns slot by slot."""
        prompt = f"{self.data()}\n\n{INITIAL_REQUEST}"
        said: dict[str, Turn] = {}
        for name in self.order.speakers:
            said[name] = await self._ask(
                name, [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}], 0)
        self.record += [f"[{name}'s Initial Evaluation]: {turn.content}" for name, turn in said.items()]
        return said

    async def discuss(self, round: int) -> dict[str, Turn]:
        """One discussion round: each speaker in turn reads all that was said and answers again."""
        said: dict[str, Turn] = {}
        for name in self.order.speakers:
            # The paper puts the speaker's reminder in the system message; here it follows the record, so
            # every prompt of every speaker starts with the same system message and data, which a
            # provider's prompt cache then serves instead of billing it again.
            prompt = (f"{self.data()}\n\n" + "\n\n".join(self.record)
                      + f"\n\n{DISCUSSION_SYSTEM.format(name=name)}\n\n{DISCUSSION_REQUEST}")
            said[name] = turn = await self._ask(name, [
                {"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt},
            ], round)
            self.record.append(f"[{name}'s Discussion -- Round {round}]: {turn.content}")
        return said


def unanimous(said: dict[str, Turn]) -> Verdict | None:
    """The verdict every speaker gave; None when they differ or one could not be read."""
    verdicts = {turn.verdict for turn in said.values()}
    return verdicts.pop() if len(verdicts) == 1 else None


def decision_details(task: Task, finals: dict[str, Verdict | None], swapped: bool) -> tuple[tuple[str, str], ...]:
    """What the person decides between: both texts and each speaker's last verdict, in the original numbering;
    the swap, when there was one, said once."""
    meaning = dict(zip(VERDICTS, VERDICT_LABELS, strict=True))
    details = [("Text 1", excerpt(task.text)), ("Text 2", excerpt(task.text_b or ""))]
    details += [(name, f"{verdict} ({meaning[verdict]})" if verdict else "unreadable")
                for name, verdict in finals.items()]
    if swapped:
        details.append(("Order", "the speakers saw text 2 first; every number here is in the original numbering"))
    return tuple(details)


async def settle(ctx: Context, options: Options, finals: dict[str, Verdict | None], rounds: int,
                 swapped: bool = False) -> tuple[Verdict | None, str]:
    """The verdict when the speakers never agreed, as --on-no-consensus says."""
    if options.on_no_consensus == "human":
        views = ", ".join(f"{name}: {verdict or 'unreadable'}" for name, verdict in finals.items())
        question = (f"The speakers did not agree after {counted(rounds, 'discussion round')} on {ctx.criteria[0].name} "
                    f"({views}; in the original numbering). Which text is better? 1 = the first text, "
                    "2 = the second, 0 = a tie.")
        details = decision_details(ctx.task, finals, swapped)
        about = ctx.criteria[0].name
        decision = await ctx.ask_human(question, VERDICTS, labels=VERDICT_LABELS, details=details, criterion=about)
        while decision not in VERDICTS:  # a mistyped decision is asked again, not taken for a verdict
            ctx.notice(f"the decision {decision!r} is not 1, 2 or 0; asking again")
            decision = await ctx.ask_human(question, VERDICTS, labels=VERDICT_LABELS, details=details,
                                           criterion=about)
        return decision, f"decided by a person after no consensus in {counted(rounds, 'discussion round')}"
    if options.on_no_consensus == "majority":
        return majority(finals.values()), f"majority of the final verdicts ({describe_votes(finals.values())})"
    if options.on_no_consensus == "tie":
        return "0", "declared a tie after no consensus"
    return None, f"undecided: no consensus in {counted(rounds, 'discussion round')}"


def calls(options: Options, criteria: int, pairwise: bool) -> CallCount:
    """One verdict per speaker initially, one more per speaker and discussion round until they agree."""
    return CallCount(options.agents, options.agents * (1 + options.rounds))


async def run(ctx: Context) -> Outcome:
    options = Options.model_validate(ctx.options)
    SPEC.check_task(ctx.task, ctx.criteria, options)
    criterion = vary(ctx.criteria[0], options.criteria_variant, options.seed)
    ctx.plan(options.rounds, first_round=0)  # round 0: the initial verdicts
    order = Order.draw(ctx.rng, [a.name for a in ctx.agents("speaker")])
    ctx.session.keep_order(order)
    if order.swapped:
        ctx.notice("the speakers see text 2 first (a drawn order); every verdict shown to you is in the original "
                   "numbering: 1 = the first text, 2 = the second, 0 = a tie")
    if options.criteria_variant != "general":
        ctx.session.state["criteria_variant"] = {"variant": options.criteria_variant, "rubric": rubric(criterion)}
    panel = Panel(ctx, criterion, order)
    outcome = Outcome(notes=[_order_note(order)])
    said, round = await panel.initial(), 0
    outcome.vote = initial_vote(ctx, order, said)
    _tally(outcome, order, said, round)
    ctx.round_completed(round, criterion)
    while unanimous(said) is None and round < options.rounds:
        round += 1
        said = await panel.discuss(round)
        _tally(outcome, order, said, round)
        ctx.round_completed(round, criterion)
    finals = {name: order.original(said[name].verdict) for name in sorted(said)}
    outcome.agent_verdicts = finals
    agreed = unanimous(said)
    if agreed is not None:
        outcome.verdict = order.original(agreed)
        outcome.method = "consensus in the initial round" if round == 0 else f"consensus in discussion round {round}"
    else:
        outcome.verdict, outcome.method = await settle(ctx, options, finals, round, order.swapped)
    outcome.notes.append(outcome.method)
    return outcome


def initial_vote(ctx: Context, order: Order, said: dict[str, Turn]) -> Vote:
    """Round 0's verdicts in the original numbering: unanimous, else the majority (a split is a tie)."""
    views = {name: order.original(said[name].verdict) for name in sorted(said)}
    agreed = unanimous(said)
    counted = Outcome(verdict=order.original(agreed) if agreed is not None else majority(views.values()),
                      agent_verdicts=views)
    how = "unanimous" if agreed is not None else f"majority of {describe_votes(views.values())}, a split is a tie"
    return vote_from(counted, f"the speakers' initial verdicts, given independently ({how})",
                     first_round_slots(ctx, list(said), 0))


def _order_note(order: Order) -> str:
    speaking = f"speaking order {', '.join(order.speakers)}"
    if not order.swapped:
        return f"submission order drawn from the seed: as given, so all numbering is the original one; {speaking}"
    return (f"submission order drawn from the seed: swapped, the speakers saw the second text as Submission 1; "
            f"{speaking}. Verdicts in the transcript are in that presented numbering; every verdict here is in "
            "the original numbering (1 = the first text, 2 = the second, 0 = a tie)")


def _tally(outcome: Outcome, order: Order, said: dict[str, Turn], round: int) -> None:
    stage = "initial round" if round == 0 else f"discussion round {round}"
    views = ", ".join(f"{name}: {order.original(turn.verdict) or 'unreadable'}" for name, turn in said.items())
    outcome.notes.append(f"{stage}: {views}")



SPEC = ProtocolSpec(
    name="scaleeval", title="ScaleEval",
    paper="Chern et al. 2024, Can Large Language Models be Trusted for Evaluation? (ScaleEval)",
    options=Options, criteria=CriteriaRule("score", ("helpfulness",), one_per_run=True),
    required=("text_b",), optional=("source", "context"), build_agents=build_agents, run=run, calls=calls,
    report=("result", "verdicts", "how", "actions", "usage", "transcript"),
    calls_formula="N speakers, +N per discussion round until unanimous (at most N*(1+rounds))",
    confidence=confidence.DISCUSSION,
    demo="debate_tui.protocols.scaleeval_demo",
)
