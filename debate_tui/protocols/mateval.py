"""MATEval (Li et al. 2024): evaluators discuss one error type per round, a feedback
agent steers each round, and a summarizer writes the located-error report.

Algorithm 1 of the paper (SR+CoT with feedback), the sub-questions Q being the
error types asked for (default: REP, LINC, DCONT, ILC, FER, one per round):

    H <- {}
    for each sub-question Q_r:                         # CoT: one sub-question per round
        for each evaluator A_i:  P_i <- Formulate_Idea(Q_r, H)     # its statement
        for each evaluator A_i:  R_i <- Self_Reflection(P_i, H)    # against the others' statements
                                 H <- H + {R_i}
        F_r <- Feedback(H)                             # repetition, disagreement, omissions; goes to
                                                       # every evaluator in the next round
    R_final <- Summary(H)                              # Q&A report: per type yes/no, quoted
                                                       # sentences, explanation, deduction

Every statement sees the history H and the statements made before it in the
same round (one by one); all statements of a round come before the first
reflection, so that each evaluator reflects against all the others' views (the
paper's "integrating the viewpoints of other agents"). H keeps each round's
final statements and its feedback, and the summarizer reads all of it.

Strategies (the paper's Section 4.3), each with feedback closing every round
and a final summary, as in the paper:

    SA      one evaluator, one round on the whole question (all error types)
    O_b_O   evaluators speak one by one on the whole question, several rounds
    SR      as O_b_O, and each statement is followed by a self-reflection
    CoT     one sub-question (error type) per round, statements only
    SR+CoT  one sub-question per round, statement then self-reflection (default)

Calls, with E evaluators (--evaluators, default 2), K sub-questions (default 5),
f = 1 with the feedback agent and 0 with --no-feedback (the paper's MATEval-FB
ablation), and R rounds for the strategies on the whole question (--rounds,
default K, so that every strategy discusses for as many rounds):

    SR+CoT  K*(2E+f) + 1     default: 5*(2E+1)+1, i.e. 26 calls with 2 evaluators
    CoT     K*(E+f) + 1
    SR      R*(2E+f) + 1
    O_b_O   R*(E+f) + 1
    SA      1 + f + 1

The last 1 is the summarizer. When its report answers none of the questions it
is asked once more with the format (one more call); if it still cannot be read,
the scores are unscored (None), never 0. With `--structured`, the report's
answers are asked again as JSON within its turn (a yes or no per type and the
sentence at fault: engine/structured.py), and that line, where it answers every
type, is the report's answer (`read_report`).

Scoring, the paper's rule: each type starts at 0 and every error deducts its
deduction (one point); the same sentence reported twice for a type counts once.
`outcome.scores` holds one score per type and "total".

The vote before discussion (`outcome.vote`), for the strategies with one error
type per round (CoT, SR+CoT): each evaluator's statement on a type (its first
word on it, before its self-reflection and the round's feedback) is read as a
score by the same rule, 0 minus one point per distinct sentence it quotes that
is found in the text; the vote is the evaluators' mean per type, and "total"
their sum. Only round 1 (the first type) comes before any discussion; the
statements on later types follow the earlier rounds' discussion and feedback,
and one by one, Evaluator 2 has read Evaluator 1's statement. It costs the
statement calls (E per type). SA has one evaluator and no discussion, and O_b_O
and SR discuss every type in each round, so a statement's quotes carry no type
to count without the summarizer: those strategies record no vote.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator

from debate_tui import parsing
from debate_tui.domain import AgentSpec, Criterion, ErrorSpan, Outcome, Persona, Task, Turn, Vote, task_block
from debate_tui.engine import structured
from debate_tui.engine.runner import Context
from debate_tui.inputs import InputError
from debate_tui.protocols import confidence
from debate_tui.protocols.common import ModelChoice, counted
from debate_tui.protocols.mateval_prompts import WORDINGS, Wording
from debate_tui.protocols.pairs import mean
from debate_tui.protocols.spec import CallCount, CriteriaRule, Flag, ProtocolOptions, ProtocolSpec
from debate_tui.protocols.vote import vote_from
from debate_tui.writing import prompt_language

Strategy = Literal["SA", "O_b_O", "SR", "CoT", "SR+CoT"]
DECOMPOSED: frozenset[str] = frozenset({"CoT", "SR+CoT"})
"""Strategies with one sub-question per round; the others discuss the whole question each round."""
REFLECTING: frozenset[str] = frozenset({"SR", "SR+CoT"})

class Options(ProtocolOptions):
    strategy: Annotated[Strategy, Flag(metavar="NAME")] = "SR+CoT"
    """Discussion strategy: SR+CoT, CoT, SR, O_b_O, SA (a single agent)."""
    evaluators: int = Field(2, ge=2, le=8)
    """Evaluator agents (SA always uses one)."""
    feedback: bool = True
    """The feedback agent closing each round; off is the paper's MATEval-FB ablation."""
    rounds: int | None = Field(None, ge=1, le=20)
    """Rounds on the whole question (O_b_O, SR); default: one per error type asked."""
    prompt_language: Literal["auto", "en", "zh"] = "auto"
    """The prompts' language: auto (Chinese for a Chinese text, as the paper ran LOT), en, zh."""
    count_unlocated: bool = False
    """Deduct a point for an error whose quote is not found in the text too (the paper's rule). Off by
    default: a quote that is not in the text is no evidence (a copied example, a paraphrase)."""
    seed: int = 0
    """Seed for every random draw (stored in the session)."""

    @field_validator("rounds")
    @classmethod
    def _rounds_only_without_decomposition(cls, rounds: int | None, info: ValidationInfo) -> int | None:
        strategy = info.data.get("strategy")
        if rounds is not None and (strategy in DECOMPOSED or strategy == "SA"):
            raise ValueError(f"{strategy} has a fixed number of rounds (one per error type, or one for SA); "
                             "rounds apply to O_b_O and SR")
        return rounds


def build_agents(options: Options, models: ModelChoice, personas: list[Persona] | None = None) -> list[AgentSpec]:
    count = 1 if options.strategy == "SA" else options.evaluators
    specs = []
    for number in range(1, count + 1):
        name = f"Evaluator {number}"
        persona = personas[(number - 1) % len(personas)] if personas else None
        specs.append(AgentSpec(name=name, role="evaluator", persona=persona,
                               model=models.model_for(name, "evaluator"), params=models.params))
    helpers = [("Feedback", "feedback")] if options.feedback else []
    for name, role in [*helpers, ("Summarizer", "summarizer")]:
        specs.append(AgentSpec(name=name, role=role, model=models.model_for(name, role), params=models.params))
    return specs


def error_type(criterion: Criterion) -> str:
    """The MATEval error type a criterion stands for; only those five have a report form to answer."""
    abbreviation = parsing.normalize_error_type(criterion.abbreviation or criterion.name)
    if abbreviation is None or criterion.kind != "error_type":
        raise InputError(f"MATEval judges error types ({', '.join(parsing.ERROR_TYPES)}); "
                         f"criterion {criterion.name!r} is not one of them")
    return abbreviation


def check_task(task: Task, criteria: list[Criterion], options: object = None) -> None:
    """Refuse, before any call, what this protocol cannot judge (the inputs are the spec's to check)."""
    types = [error_type(c) for c in criteria]
    if len(set(types)) != len(types):
        raise InputError("MATEval: each error type may be asked once")


@dataclass(frozen=True)
class Question:
    """What one round discusses: one error type (CoT), or all of them."""

    criteria: tuple[Criterion, ...]

    @property
    def criterion(self) -> Criterion | None:
        return self.criteria[0] if len(self.criteria) == 1 else None

    @property
    def types(self) -> list[str]:
        return [error_type(c) for c in self.criteria]

    def text(self, words: Wording) -> str:
        lines = []
        for criterion in self.criteria:
            code = error_type(criterion)
            described = words.descriptions[code] if words.descriptions else criterion.description
            lines.append(words.type_line.format(code=code, name=words.type_names[code], description=described))
        return "\n".join([words.ask_one if len(lines) == 1 else words.ask_many, *lines])


def plan(criteria: list[Criterion], options: Options) -> list[Question]:
    """The rounds of the discussion, one Question each (the paper's decomposition D(Q))."""
    if options.strategy in DECOMPOSED:
        return [Question((c,)) for c in criteria]
    rounds = 1 if options.strategy == "SA" else options.rounds or len(criteria)
    return [Question(tuple(criteria))] * rounds


class Discussion:
    """The history H and the prompts built from it: what every agent is shown, round by round."""

    def __init__(self, ctx: Context, options: Options, rounds: int, words: Wording):
        self.ctx = ctx
        self.options = options
        self.words = words
        self.rounds = rounds
        self.brief = task_block(ctx.task)
        self.evaluators = [a.name for a in ctx.agents("evaluator")]
        self.history: list[str] = []
        self.feedback: str | None = None
        self.statements: dict[str, dict[str, Turn]] = {}
        """Each evaluator's statement per error type, for the rounds on one type: the vote before discussion."""

    def _system(self, name: str) -> str:
        spec = self.ctx.session.agent(name)
        persona = f"\n\n{spec.persona.role_prompt}" if spec.persona else ""
        return self.words.evaluator_system.format(name=name, count=len(self.evaluators)) + persona

    def _statement_prompt(
        self, name: str, number: int, question: Question, said: dict[str, Turn]
    ) -> list[dict[str, str]]:
        """The brief, then the discussion so far, then this round's question: the history only grows at its
        end, so each evaluator's prompts share everything up to it (a provider's prompt cache serves that).

        The last feedback closes the history, under its own heading, and is not repeated there.
        """
        words, parts = self.words, [self.brief]
        earlier = self.history[:-1] if self.feedback else self.history
        if earlier:
            parts.append(f"{words.discussion_so_far}\n" + "\n\n".join(earlier))
        if self.feedback:
            parts.append(f"{words.feedback_heading}\n{self.feedback}")
        parts.append(self._round(number, question))
        if said:
            parts.append(f"{words.statements_so_far}\n" + _quoted(said))
        parts.append(words.state_view)
        return [{"role": "system", "content": self._system(name)}, {"role": "user", "content": "\n\n".join(parts)}]

    def _reflection_prompt(
        self, name: str, statement: list[dict[str, str]], said: dict[str, Turn]
    ) -> list[dict[str, str]]:
        others = {other: turn for other, turn in said.items() if other != name}
        return [*statement, {"role": "assistant", "content": said[name].content},
                {"role": "user", "content": self.words.reflect.format(others=_quoted(others))}]

    def _round(self, number: int, question: Question) -> str:
        return self.words.round.format(number=number, rounds=self.rounds, question=question.text(self.words))

    async def round(self, number: int, question: Question) -> None:
        """One round: statements one by one, then (SR) a self-reflection each, then the feedback."""
        said: dict[str, Turn] = {}
        prompts: dict[str, list[dict[str, str]]] = {}
        for name in self.evaluators:
            prompts[name] = self._statement_prompt(name, number, question, said)
            said[name] = await self.ctx.turn(name, prompts[name], round=number, criterion=question.criterion)
        if question.criterion is not None:
            self.statements[question.types[0]] = dict(said)
        final = said
        if self.options.strategy in REFLECTING:
            final = {}
            for name in self.evaluators:
                final[name] = await self.ctx.turn(name, self._reflection_prompt(name, prompts[name], said),
                                                  round=number, criterion=question.criterion)
        self.history += [self.words.history_entry.format(number=number, name=name, content=turn.content)
                         for name, turn in final.items()]
        if self.options.feedback:
            feedback = await self.ctx.turn("Feedback", self._feedback_prompt(number, question, final),
                                           round=number, criterion=question.criterion)
            self.feedback = feedback.content
            self.history.append(self.words.history_entry.format(number=number, name="Feedback",
                                                                content=feedback.content))
        self.ctx.round_completed(number, question.criterion)

    def _feedback_prompt(self, number: int, question: Question, final: dict[str, Turn]) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.words.feedback_system}, {"role": "user", "content": (
            f"{self.brief}\n\n{self._round(number, question)}\n\n"
            + self.words.feedback_request.format(statements=_quoted(final))
        )}]

    def summary_prompt(self, types: list[str]) -> list[dict[str, str]]:
        words = self.words
        asked = "" if set(types) == set(parsing.ERROR_TYPES) else words.only_types.format(types=", ".join(types))
        return [{"role": "system", "content": words.summarizer_system}, {"role": "user", "content": (
            f"{self.brief}\n\n{words.discussion_heading}\n" + "\n\n".join(self.history) +
            f"\n\n{words.write_report}{asked}\n\n{words.report_format}\n\n{words.scoring_rule}"
        )}]


def _quoted(said: dict[str, Turn]) -> str:
    return "\n\n".join(f"[{name}]: {turn.content}" for name, turn in said.items())


def point_at_repeats(errors: list[ErrorSpan], text: str) -> None:
    """A repetition is where the sentence comes again: move a REP span to the quote's last occurrence."""
    for error in errors:
        if error.type != "REP" or error.end is None:
            continue
        later = parsing.locate(error.quote, text, error.end)
        while later is not None:
            error.start, error.end = later
            later = parsing.locate(error.quote, text, later[1])


def distinct(errors: list[ErrorSpan]) -> list[ErrorSpan]:
    """One error per type and sentence: the same sentence reported twice counts once."""
    seen: set[tuple[str, object]] = set()
    kept = []
    for error in errors:
        where = (error.start, error.end) if error.located else " ".join(error.quote.lower().split())
        if (error.type, where) not in seen:
            seen.add((error.type, where))
            kept.append(error)
    return kept


def counts(error: ErrorSpan, count_unlocated: bool = False) -> bool:
    """Whether an error costs its deduction: a located one always, a not located one only on request."""
    return error.located or count_unlocated


def score(errors: list[ErrorSpan], types: list[str], answered: set[str],
          count_unlocated: bool = False) -> dict[str, float | None]:
    """Per type: 0 minus the deductions of its errors that count, None when the report left it unanswered;
    and the total."""
    scores: dict[str, float | None] = {
        t: -sum(e.deduction for e in errors if e.type == t and counts(e, count_unlocated)) if t in answered
        else None for t in types
    }
    values = list(scores.values())
    scores["total"] = None if None in values else sum(v for v in values if v is not None)
    return scores


async def summarize(ctx: Context, discussion: Discussion, types: list[str],
                    round: int) -> tuple[set[str], list[ErrorSpan]]:
    """The types the summarizer's report answers and the errors it lists; the report re-asked once when it
    answers none."""
    prompt = discussion.summary_prompt(types)
    report = await ctx.turn("Summarizer", prompt, round=round, expect="report", types=types)
    answered, errors = read_report(report.content, ctx.task.text, types)
    if answered:
        return answered, errors
    ctx.notice("Summarizer: the report answers none of the questions; asking once more with the format")
    words = discussion.words
    again = [*prompt, {"role": "assistant", "content": report.content},
             {"role": "user", "content": words.rewrite.format(form=words.report_format)}]
    report = await ctx.turn("Summarizer", again, round=round, expect="report", types=types)
    answered, errors = read_report(report.content, ctx.task.text, types)
    report.unscored = not answered
    return answered, errors


def read_report(report: str, text: str, types: list[str]) -> tuple[set[str], list[ErrorSpan]]:
    """The types a report answers and the errors it lists: from the JSON line `--structured` added, where it
    did (a yes or no for every asked type, each yes with its sentence, and the report's own explanation of that
    sentence where it gives one), else from the report's own text."""
    written = parsing.parse_error_report(report, text)
    data = structured.Question("report", types=tuple(types)).read(report.rstrip().rsplit("\n", 1)[-1])
    if data is None:
        return parsing.readable_types(report, text, types, written), written
    explained = {(error.type, error.start): error.explanation for error in written if error.located}
    errors = []
    for kind in types:
        if data[kind] == "yes":
            quote = data[f"{kind}_sentence"].strip()
            start, end = (parsing.locate(quote, text) if quote else None) or (None, None)
            errors.append(ErrorSpan(type=kind, quote=quote, start=start, end=end,
                                    explanation=explained.get((kind, start), "")))
    return set(types), errors


def calls(options: Options, criteria: int, pairwise: bool) -> CallCount:
    """Rounds times (statements, reflections, feedback), plus the summary: see the module's table."""
    evaluators = 1 if options.strategy == "SA" else options.evaluators
    rounds = (1 if options.strategy == "SA"
              else criteria if options.strategy in DECOMPOSED else options.rounds or criteria)
    per_round = evaluators * (2 if options.strategy in REFLECTING else 1) + options.feedback
    count = rounds * per_round + 1
    return CallCount(count, count)


async def run(ctx: Context) -> Outcome:
    options = Options.model_validate(ctx.options)
    SPEC.check_task(ctx.task, ctx.criteria, options)
    types = [error_type(c) for c in ctx.criteria]
    questions = plan(ctx.criteria, options)
    language = prompt_language(ctx.task.text) if options.prompt_language == "auto" else options.prompt_language
    ctx.session.options["prompt_language"] = language  # what auto chose, for the record and for a resume
    discussion = Discussion(ctx, options, len(questions), WORDINGS[language])
    ctx.plan(len(questions) + 1)  # the summarizer's round comes last
    for number, question in enumerate(questions, start=1):
        await discussion.round(number, question)
    answered, errors = await summarize(ctx, discussion, types, len(questions) + 1)
    point_at_repeats(errors, ctx.task.text)
    errors = distinct(errors)
    asked = [e for e in errors if e.type in types]
    outcome = Outcome(scores=score(asked, types, answered, options.count_unlocated), errors=errors)
    outcome.method = (f"MATEval {options.strategy}, {counted(len(discussion.evaluators), 'evaluator')}, feedback "
                      f"{'on' if options.feedback else 'off'}, {counted(len(questions), 'round')}; "
                      "report by the Summarizer")
    outcome.notes += [outcome.method, *_notes(errors, types, answered, options.count_unlocated)]
    if options.strategy in DECOMPOSED:
        outcome.vote = statement_vote(ctx, discussion, types)
    return outcome


def statement_score(turn: Turn, text: str) -> float | None:
    """0 minus one point per distinct sentence of `text` the statement quotes; None for a failed turn."""
    if turn.error is not None:
        return None
    spans = {parsing.locate(parsing.passage_words(m), text) for m in parsing.find_passages(turn.content)}
    return 0.0 - len(spans - {None})


def statement_vote(ctx: Context, discussion: Discussion, types: list[str]) -> Vote:
    """The evaluators' statements per type, scored like the report and averaged: see the module docstring."""
    counted = Outcome()
    for kind in types:
        said = discussion.statements.get(kind, {})
        for name, turn in said.items():
            counted.per_agent.setdefault(name, {})[kind] = statement_score(turn, ctx.task.text)
        counted.scores[kind] = mean(scores.get(kind) for scores in counted.per_agent.values())
    values = list(counted.scores.values())
    counted.scores["total"] = None if None in values else sum(v for v in values if v is not None)
    slots = [turn.slot for said in discussion.statements.values() for turn in said.values()]
    return vote_from(counted, "the evaluators' first statement on each error type, one point per quoted sentence "
                     "found in the text, averaged over the evaluators (only the first type's round precedes all "
                     "discussion)", slots)


def _notes(errors: list[ErrorSpan], types: list[str], answered: set[str], count_unlocated: bool) -> list[str]:
    notes = []
    cost = "each costs its point (--count-unlocated)" if count_unlocated else "no point deducted"
    for t in types:
        if t not in answered:
            notes.append(f"{t}: the summarizer's report does not answer this question: unscored")
            continue
        found = [e for e in errors if e.type == t]
        unlocated = sum(1 for e in found if not e.located)
        notes.append(f"{t}: {counted(len(found), 'error')}"
                     + (f", {unlocated} not located in the text ({cost})" if unlocated else ""))
    other = sorted({e.type for e in errors if e.type not in types})
    if other:
        notes.append(f"errors of types not asked for are listed but not counted: {', '.join(other)}")
    return notes



SPEC = ProtocolSpec(
    name="mateval", title="MATEval",
    paper="Li et al. 2024, MATEval: A Multi-Agent Discussion Framework for Advancing Open-Ended Text Evaluation",
    options=Options, criteria=CriteriaRule("error_type", ("REP", "LINC", "DCONT", "ILC", "FER")),
    optional=("source", "context"), build_agents=build_agents, run=run, calls=calls, check=check_task,
    personas=True, report=("result", "errors", "how", "actions", "usage", "transcript"),
    calls_formula="SR+CoT K*(2E+f)+1, CoT K*(E+f)+1, SR R*(2E+f)+1, O_b_O R*(E+f)+1, SA 2+f (f = feedback)",
    confidence=confidence.MATEVAL,
    demo="debate_tui.protocols.mateval_demo",
)
