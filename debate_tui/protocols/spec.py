"""What a protocol declares about itself, in one place: every front end reads it.

A protocol module defines one `SPEC = ProtocolSpec(...)`: its paper, the inputs
it reads, the criteria it accepts, its options (a `ProtocolOptions` model whose
fields carry types, defaults, ranges and help), how many calls a run makes, the
report's sections, and the functions that build its agents and run it. The CLI's
option flags, the TUI's option form, config.toml's `[protocols.<name>]` check,
the protocol table (docs/protocols.md) and the call-count tests all read the spec;
nothing probes a module with `hasattr`.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from debate_tui.domain import AgentSpec, Criterion, Outcome, Persona, Task
from debate_tui.inputs import InputError
from debate_tui.protocols.confidence import DISCUSSION, Confidence, of_outcome
from debate_tui.registry import REGISTRY

if TYPE_CHECKING:
    from debate_tui.engine.runner import Context
    from debate_tui.llm.base import DemoPart
    from debate_tui.protocols.common import ModelChoice

InputName = Literal["text_b", "source", "context"]
INPUT_NAMES: dict[InputName, str] = {"text_b": "a second text", "source": "a source", "context": "a context"}
"""The extra inputs a protocol may read besides the text, as a sentence names them."""
INPUT_FLAGS: dict[str, str] = {"text": "--text", "text_b": "--text-b", "source": "--source", "context": "--context"}
"""How a refusal names each input by default: the flag that gives it (a batch names its lines' fields)."""
CriteriaKind = Literal["score", "error_type"]
REPORT_SECTIONS = ("result", "per_agent", "verdicts", "errors", "how", "actions", "usage", "transcript")
"""Every section a report can have, in the order they are written."""


@dataclass(frozen=True)
class Flag:
    """How an option's command-line flag is written where its type does not say it, as `Annotated` metadata:
    `turns: Annotated[int, Flag(metavar="T")]`. The flag's name, type, choices and help come from the field."""

    metavar: str | None = None
    """What the help shows for its value; unset: N for a number, NAME for a string, the choices of a Literal."""
    bare: str | None = None
    """The value of the flag given alone (`--tie-breaker`: agent); unset: the flag needs a value."""


class ProtocolOptions(BaseModel):
    """A protocol's options; an attribute docstring is a field's help, and every field is a flag of `run`, `batch`
    and the TUI (`cli.task_flags`): a bool is a switch (`--swap`, or `--no-feedback` for one that defaults to true).

    Keys it does not have are ignored here: a session's options also hold the run's generation settings, and the
    session factory refuses a chosen option the spec does not have, naming it."""

    model_config = ConfigDict(use_attribute_docstrings=True)


@dataclass(frozen=True)
class CallCount:
    """Model calls of one run, re-asks and history condensation left out: the fewest and the most."""

    fewest: int
    most: int


@dataclass(frozen=True)
class CriteriaRule:
    """Which criteria a protocol accepts, and which it judges when none are given."""

    kind: CriteriaKind
    default: tuple[str, ...]
    one_per_run: bool = False
    """Whether a run judges exactly one criterion."""

    def describe(self) -> str:
        what = "error types (REP, LINC, DCONT, ILC, FER)" if self.kind == "error_type" else "scored criteria"
        return f"one of the {what}" if self.one_per_run else f"{what}"


Check = Callable[[Task, list[Criterion], Any], None]


@dataclass(frozen=True)
class ProtocolSpec:
    """One protocol, as the front ends, the config and the docs see it."""

    name: str
    title: str
    """As the paper names it: DEBATE, ChatEval, ..."""
    paper: str
    options: type[ProtocolOptions]
    criteria: CriteriaRule
    build_agents: Callable[[Any, ModelChoice, list[Persona] | None], list[AgentSpec]]
    run: Callable[[Context], Awaitable[Outcome]]
    calls: Callable[[Any, int, bool], CallCount]
    """(options, number of criteria, pairwise) -> the calls a run makes."""
    calls_formula: str
    """The same count as a person reads it, for the protocol table."""
    required: tuple[InputName, ...] = ()
    optional: tuple[InputName, ...] = ()
    report: tuple[str, ...] = ("result", "per_agent", "how", "actions", "usage", "transcript")
    check: Check | None = None
    """The protocol's own refusals of a task, beyond what the spec says (run before any call)."""
    personas: bool = False
    """Whether `--personas` gives the agents their personas."""
    persona_option: str | None = None
    """An option naming an agent's persona (DEBATE's critic_persona), looked up like `--personas`: the user's
    personas_dir and a .toml file included."""
    confidence: Confidence = DISCUSSION
    """How an answer's confidence is computed from the session (see `protocols.confidence`); a protocol that
    declares none gets the agents' agreement with the final answer (and with their vote, if it has one)."""
    demo: str | None = None
    """The module of the parts the offline demo model plays for its agents (`PARTS`: role -> part, see
    `llm.demo`), imported for a demo run only; None: the demo judges every agent plainly (the single judge)."""

    async def play(self, ctx: Context) -> Outcome:
        """The run, its outcome carrying each criterion's confidence by this protocol's rule."""
        outcome = await self.run(ctx)
        outcome.confidence = of_outcome(self.confidence, ctx.session, outcome)
        return outcome

    @property
    def summary(self) -> str:
        """One line on what a run does, as registered."""
        return REGISTRY[self.name].summary.split(": ", 1)[1]

    @property
    def roles(self) -> dict[str, str]:
        """The roles its agents play, as registered (the configuration's `[roles]` reads them there)."""
        return REGISTRY[self.name].roles

    def demo_parts(self) -> dict[str, DemoPart]:
        """Role -> the part the demo model plays for an agent of that role (none declared: {})."""
        return importlib.import_module(self.demo).PARTS if self.demo else {}

    @property
    def inputs(self) -> tuple[InputName, ...]:
        """Every extra input the protocol reads, required first."""
        return (*self.required, *self.optional)

    def check_task(self, task: Task, criteria: list[Criterion], options: Any,
                   names: dict[str, str] = INPUT_FLAGS) -> None:
        """Refuse, before any call and with a one-line reason, what this protocol cannot judge.

        `names` says how the person gave each input (a flag, or a batch line's field)."""
        self.check_inputs(task, names)
        self.check_choices(task, criteria, options)

    def check_inputs(self, task: Task, names: dict[str, str] = INPUT_FLAGS) -> None:
        """The texts this protocol needs, and none it would ignore."""
        if "text_b" in self.required and task.text_b is None:
            raise InputError(f"{self.title} compares two texts: give the second with {names['text_b']}")
        if task.text_b is not None and "text_b" not in self.inputs:
            raise InputError(f"{self.title} judges one text; {names['text_b']} is not used")
        for key in ("source", "context"):
            if key in self.required and getattr(task, key) is None:
                raise InputError(f"{self.title} needs {INPUT_NAMES[key]}: give it with {names[key]}")
            if getattr(task, key) is not None and key not in self.inputs:
                raise InputError(f"{self.title} does not read {INPUT_NAMES[key]}; {names[key]} is not used")

    def check_choices(self, task: Task, criteria: list[Criterion], options: Any) -> None:
        """The criteria and options, and the protocol's own refusals."""
        if self.criteria.one_per_run and len(criteria) != 1:
            raise InputError(f"{self.title} judges one criterion per run; give exactly one with --criteria")
        if self.check is not None:
            self.check(task, criteria, options)
