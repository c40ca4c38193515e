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

Left out: G-Eval's probability-weighted score. It needs the log-probabilities
of the score token, which our client does not return (it carries text and
usage, streamed), and which many providers and local servers do not give.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from debate_tui.domain import AgentSpec, Criterion, Outcome, Persona, Task
from debate_tui.engine.runner import Context
from debate_tui.llm.base import Message
from debate_tui.protocols.common import ModelChoice, concurrently, criterion_block, task_block
from debate_tui.protocols.pairs import answer_form, in_both_orders, mean, pair_keys, tally, unscored_note

JUDGE = "Judge"
JUDGE_SYSTEM = "You are a careful and impartial evaluator of text quality."
SAMPLING_TEMPERATURE = 1.0
"""G-Eval's: identical prompts at temperature 0 would give N copies of one sample."""


class Options(BaseModel):
    samples: int = Field(1, ge=1, le=50, description="replies drawn per criterion and averaged (G-Eval: 20)")
    swap: bool = Field(False, description="pairwise only: judge again with the texts exchanged")


def build_agents(options: Options, models: ModelChoice, personas: list[Persona] | None = None) -> list[AgentSpec]:
    params = dict(models.params)
    if options.samples > 1:
        params.setdefault("temperature", SAMPLING_TEMPERATURE)
    return [AgentSpec(name=JUDGE, role="judge", persona=personas[0] if personas else None,
                      model=models.model_for(JUDGE, "judge"), params=params)]


def judge_prompt(ctx: Context, task: Task, criterion: Criterion) -> list[Message]:
    judge = ctx.session.agent(JUDGE)
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


async def judge(ctx: Context, task: Task, samples: int, first_round: int = 1) -> Outcome:
    """Each criterion sampled `samples` times; the judge's score is the mean of the readable samples."""
    outcome = Outcome()
    scores = outcome.per_agent.setdefault(JUDGE, {})
    hint = {"text": task.text, "text_b": task.text_b}
    for criterion in ctx.criteria:
        messages = judge_prompt(ctx, task, criterion)
        turns = await concurrently(
            ctx.turn(JUDGE, messages, round=first_round + n, criterion=criterion,
                     expect="pair" if task.pairwise else "score", hint=hint)
            for n in range(samples)
        )
        if task.pairwise:
            key_1, key_2 = pair_keys(criterion.name)
            scores[key_1], scores[key_2] = mean(t.score for t in turns), mean(t.score_b for t in turns)
        else:
            scores[criterion.name] = outcome.scores[criterion.name] = mean(t.score for t in turns)
        outcome.notes.append(f"{criterion.name}: mean of {samples} sample{'s' if samples > 1 else ''}"
                             f"{unscored_note(turns)}")
    if task.pairwise:
        tally(outcome, ctx.criteria)
    return outcome


async def run(ctx: Context) -> Outcome:
    options = Options.model_validate(ctx.options)
    outcome = await in_both_orders(ctx, lambda task, first: judge(ctx, task, options.samples, first),
                                   swap=options.swap, rounds=options.samples)
    outcome.method = f"single judge, {options.samples} sample{'s' if options.samples > 1 else ''} per criterion"
    return outcome
