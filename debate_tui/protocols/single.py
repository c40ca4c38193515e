"""Single judge, G-Eval style (Liu et al. 2023): the baseline every panel is compared with.

Per criterion, one judge reads the criterion, its evaluation steps and the
text, and fills in the form's score. G-Eval samples n=20 replies at temperature
1 and averages their scores:

    for each criterion:
        s_1..s_N <- Judge(criterion, steps, text, form)     # N independent samples
        score    <- mean of the readable s_i                 # unscored samples counted, never taken as 0

Samples are N separate calls, made at once, rather than one call with n=N:
every provider and local server accepts that, each sample is a recorded turn
that a resumed run replays, and litellm's streaming handles one choice per call.
For a pair, the judge scores both texts (ChatEval's single-agent baseline) and
its preference follows from the mean scores; `swap` judges the exchanged pair too.

G-Eval's probability-weighted score, opt-in (`logprobs`): the judge's calls ask
for the top 5 log-probabilities of every token, and where the provider returns
them, the score token's in-scale alternatives give sum(p(v) * v) / sum(p(v))
per sample (`parsing.weighted_score`), averaged over the samples like the
scores. It is reported beside the parsed mean, in the notes and in
`session.state["weighted_scores"]`, never instead of it: many providers and
local servers return no log-probabilities (litellm's `drop_params` then
drops the request for them rather than fail the run), and a note says so.
Streaming is kept: litellm passes each chunk's log-probabilities on. For a
pair there is no weighted score (two score tokens, one verdict).

A jury (`jury`: models, comma-separated): one judge per model, "Judge 1",
"Judge 2", ..., on the same item and prompt, each with its samples. Each judge's
score is the mean of its samples; the jury's is their mean, median, or majority
(`jury_aggregate`: the score more than half the judges gave, else the median).
For a pair the verdict is the majority of the judges' preferences, as for
ChatEval's panel. No judge sees another, so there is no discussion and no vote
before it: the jury is the vote. The report and `meta` say how far the judges
agree with each other.
"""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Annotated, Literal

from pydantic import Field, field_validator

from debate_tui.domain import AgentSpec, Criterion, Outcome, Persona, Task, Turn, task_block
from debate_tui.engine.runner import Context
from debate_tui.llm import DEMO_MODEL
from debate_tui.llm.base import Message
from debate_tui.protocols import confidence
from debate_tui.protocols.common import ModelChoice, concurrently, criterion_block
from debate_tui.protocols.pairs import answer_form, in_both_orders, mean, pair_keys, tally, unscored_note
from debate_tui.protocols.spec import CallCount, CriteriaRule, Flag, ProtocolOptions, ProtocolSpec

JUDGE = "Judge"
JUDGE_SYSTEM = "You are a careful and impartial evaluator of text quality."
SAMPLING_TEMPERATURE = 1.0
"""G-Eval's: identical prompts at temperature 0 would give N copies of one sample."""
TOP_LOGPROBS = 5
"""Alternatives asked for per token: OpenAI allows up to 20; 5 covers a 1-5 scale and the likely part of wider ones."""
MAX_JURY = 9
Aggregate = Literal["mean", "median", "majority"]


class Options(ProtocolOptions):
    samples: int = Field(1, ge=1, le=50)
    """Replies drawn per criterion and averaged (G-Eval: 20)."""
    swap: bool = False
    """Pairwise only: judge again with the texts exchanged (position bias check)."""
    logprobs: bool = False
    """Also report G-Eval's probability-weighted score, where the provider returns log-probabilities
    (asks for the top 5 per token)."""
    jury: Annotated[str, Flag(metavar="MODEL,MODEL[,...]")] = ""
    """A jury: two or more models, comma-separated, one judge each on the same item (empty: one judge)."""
    jury_aggregate: Aggregate = "mean"
    """How the jury's scores become one: mean, median, or majority (else the median); a pair's verdict is
    the majority of the judges' preferences."""

    @field_validator("jury")
    @classmethod
    def _a_jury_is_several_models(cls, jury: str) -> str:
        models = jury_models(jury)
        if len(models) == 1:
            raise ValueError("a jury needs two or more models, comma-separated (one model: use --model)")
        if len(models) > MAX_JURY:
            raise ValueError(f"a jury has at most {MAX_JURY} judges, got {len(models)}")
        return ",".join(models)


def jury_models(jury: str) -> list[str]:
    """The jury's models as given, in order; empty for a single judge."""
    return [model.strip() for model in jury.split(",") if model.strip()]


def combine(values: list[float | None], how: Aggregate) -> float | None:
    """The jury's score from its judges' (unscored ones left out): mean, median, or strict majority else median."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    if how == "majority":
        top, count = Counter(present).most_common(1)[0]
        if 2 * count > len(present):
            return top
    return statistics.median(present) if how != "mean" else sum(present) / len(present)


def build_agents(options: Options, models: ModelChoice, personas: list[Persona] | None = None) -> list[AgentSpec]:
    params = dict(models.params)
    if options.samples > 1:
        params.setdefault("temperature", SAMPLING_TEMPERATURE)
    if options.logprobs:
        params.update(logprobs=True, top_logprobs=TOP_LOGPROBS, drop_params=True)
    jurors = jury_models(options.jury)
    if not jurors:
        return [AgentSpec(name=JUDGE, role="judge", persona=personas[0] if personas else None,
                          model=models.model_for(JUDGE, "judge"), params=params)]
    names = [f"{JUDGE} {number}" for number in range(1, len(jurors) + 1)]
    return [AgentSpec(name=name, role="judge", persona=personas[number % len(personas)] if personas else None,
                      model=DEMO_MODEL if models.demo else models.named(name) or model, params=params)
            for number, (name, model) in enumerate(zip(names, jurors, strict=True))]


def judge_prompt(judge: AgentSpec, task: Task, criterion: Criterion) -> list[Message]:
    what = "two texts" if task.pairwise else "a text"
    return [
        {"role": "system", "content": judge.persona.role_prompt if judge.persona else JUDGE_SYSTEM},
        {"role": "user", "content": (
            f"You will be given {what} to rate on one metric.\n"
            "Please make sure you read and understand these instructions carefully.\n\n"
            f"{criterion_block(criterion)}\n\n{task_block(task)}\n\n"
            f"Evaluation form: {answer_form(criterion, task.pairwise)}"
        )},
    ]


def weighted_note(turns: list[Turn]) -> tuple[float | None, str]:
    """The mean probability-weighted score of a criterion's samples, and the note that reports it or says why not."""
    weighted = mean(t.weighted_score for t in turns)
    with_logprobs = sum(1 for t in turns if t.logprobs)
    if not with_logprobs:
        return None, "no log-probabilities returned, so no probability-weighted score"
    if weighted is None:
        return None, "no probability-weighted score: no in-scale score token among the log-probabilities"
    counted = sum(1 for t in turns if t.weighted_score is not None)
    over = f" (mean of {counted} of {len(turns)} samples)" if len(turns) > 1 else ""
    return weighted, f"probability-weighted score: {weighted:.2f}{over}"


async def judge(ctx: Context, task: Task, options: Options, first_round: int = 1) -> Outcome:
    """Each criterion sampled `samples` times per judge; a judge's score is the mean of its readable samples,
    the jury's their aggregate."""
    outcome = Outcome()
    weighted_scores: dict[str, float | None] = {}
    judges, samples, logprobs = ctx.agents("judge"), options.samples, options.logprobs
    for criterion in ctx.criteria:
        asked = [(spec, n) for spec in judges for n in range(samples)]
        turns = await concurrently(
            ctx.turn(spec.name, judge_prompt(spec, task, criterion), round=first_round + n, criterion=criterion,
                     expect="pair" if task.pairwise else "score")
            for spec, n in asked
        )
        for spec in judges:
            own = [turn for (who, _), turn in zip(asked, turns, strict=True) if who is spec]
            scores = outcome.per_agent.setdefault(spec.name, {})
            if task.pairwise:
                key_1, key_2 = pair_keys(criterion.name)
                scores[key_1], scores[key_2] = mean(t.score for t in own), mean(t.score_b for t in own)
            else:
                scores[criterion.name] = mean(t.score for t in own)
        if not task.pairwise:
            outcome.scores[criterion.name] = combine(
                [outcome.per_agent[spec.name][criterion.name] for spec in judges], options.jury_aggregate)
        outcome.notes.append(f"{criterion.name}: mean of {samples} sample{'s' if samples > 1 else ''}"
                             f"{' per judge' if len(judges) > 1 else ''}{unscored_note(turns)}")
        if logprobs and not task.pairwise:
            weighted_scores[criterion.name], note = weighted_note(turns)
            outcome.notes.append(f"{criterion.name}: {note}")
    if task.pairwise:
        tally(outcome, ctx.criteria)
    elif logprobs:
        ctx.session.state["weighted_scores"] = weighted_scores
    return outcome


def calls(options: Options, criteria: int, pairwise: bool) -> CallCount:
    """One call per judge, sample and criterion; twice over for a swapped pair."""
    judges = max(1, len(jury_models(options.jury)))
    count = criteria * judges * options.samples * (2 if options.swap and pairwise else 1)
    return CallCount(count, count)


async def run(ctx: Context) -> Outcome:
    options = Options.model_validate(ctx.options)
    ctx.plan(options.samples * (2 if options.swap and ctx.task.pairwise else 1))
    if options.logprobs and ctx.task.pairwise:
        ctx.notice("--logprobs: a probability-weighted score is given for a single text's score, not for a pair")
    outcome = await in_both_orders(ctx, lambda task, first: judge(ctx, task, options, first),
                                   swap=options.swap, rounds=options.samples)
    judges = ctx.agents("judge")
    who = (f"a jury of {len(judges)} judges ({', '.join(j.model for j in judges)}), "
           f"{'majority of their preferences' if ctx.task.pairwise else options.jury_aggregate + ' of their scores'}"
           if len(judges) > 1 else "single judge")
    outcome.method = f"{who}, {options.samples} sample{'s' if options.samples > 1 else ''} per criterion"
    if len(judges) > 1:
        outcome.notes.append(outcome.method)
    return outcome


SPEC = ProtocolSpec(
    name="single", title="Single judge",
    paper="Liu et al. 2023, G-Eval: NLG Evaluation using GPT-4 with Better Human Alignment",
    options=Options, criteria=CriteriaRule("score", ("coherence",)), optional=("text_b", "source", "context"),
    build_agents=build_agents, run=run, calls=calls, personas=True,
    calls_formula="samples per criterion (times the judges of a --jury), twice with --swap on a pair",
    confidence=confidence.SINGLE,
)
