"""From the setup form's choices to a fresh Session, with one clear message per problem.

The catalog (protocol modules, built-in criteria and personas) is loaded once,
in a thread, by `load_catalog`; after that nothing here imports or reads a
file, so validating and starting never block a key press.
"""

from __future__ import annotations

import importlib
import random
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ValidationError

from debate_tui.cli.task_args import with_model_params
from debate_tui.config import load_config
from debate_tui.domain import AgentSpec, Criterion, Persona, Session, Task
from debate_tui.generation import Generation
from debate_tui.inputs import InputError, check_text
from debate_tui.llm import DEMO_MODEL
from debate_tui.protocols.common import ModelChoice
from debate_tui.ui.opening import INPUT_LABELS
from debate_tui.ui.state import SetupChoices

TASK_INPUTS: dict[str, tuple[str, ...]] = {
    "debate": ("source", "context"),
    "chateval": ("text_b", "source", "context"),
    "mateval": ("source",),
    "scaleeval": ("text_b", "source"),
    "single": ("text_b", "source", "context"),
}
"""Which extra inputs a protocol reads, unless its module declares `INPUTS` itself."""
REQUIRED_INPUTS: dict[str, tuple[str, ...]] = {"scaleeval": ("text_b",)}


@dataclass
class Catalog:
    """What the setup screen offers, loaded once off the event loop."""

    protocols: dict[str, ModuleType]
    descriptions: dict[str, str]
    criteria: dict[str, Criterion]
    """Qualified name ("summeval/coherence") -> criterion, in catalog order."""
    personas: dict[str, Persona]
    problems: list[str] = field(default_factory=list)

    def inputs(self, protocol: str) -> tuple[str, ...]:
        module = self.protocols.get(protocol)
        declared = getattr(module, "INPUTS", None)
        return tuple(declared) if declared else TASK_INPUTS.get(protocol, ("text_b", "source", "context"))

    def required(self, protocol: str) -> tuple[str, ...]:
        module = self.protocols.get(protocol)
        return tuple(getattr(module, "REQUIRED_INPUTS", REQUIRED_INPUTS.get(protocol, ())))

    def qualify(self, name: str) -> str | None:
        """A criterion name as typed (bare or qualified, any case) -> its qualified catalog name."""
        wanted = name.strip().lower()
        for qualified, criterion in self.criteria.items():
            if qualified.lower() == wanted or criterion.name.lower() == wanted:
                return qualified
        return None


def load_catalog() -> Catalog:
    """Import every protocol module and read the built-in data files; meant for a thread worker."""
    from debate_tui.catalog import all_personas, criteria_sets
    from debate_tui.protocols import PROTOCOLS

    protocols: dict[str, ModuleType] = {}
    problems: list[str] = []
    for name in PROTOCOLS:
        try:
            protocols[name] = importlib.import_module(f"debate_tui.protocols.{name}")
        except Exception as exc:  # one broken protocol must not hide the others
            problems.append(f"protocol {name} unavailable: {type(exc).__name__}: {exc}")
    criteria = {f"{set_name}/{c.name}": c for set_name, items in criteria_sets().items() for c in items}
    descriptions = {name: PROTOCOLS[name] for name in protocols}
    return Catalog(protocols, descriptions, criteria, dict(all_personas()), problems)


def configured_model() -> str:
    """The default model outside the form: DEBATE_TUI_MODEL, else config.toml's default_model, else none."""
    return load_config().default_model or ""


def default_model(choices: SetupChoices) -> str:
    return choices.model.strip() or configured_model() or DEMO_MODEL


def _options_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "options"
    return f"option {where.replace('_', ' ')}: {error['msg']}"


def validate_options(module: ModuleType, options: dict[str, Any]) -> BaseModel:
    """The protocol's Options, or InputError naming the first bad field."""
    try:
        return module.Options.model_validate({k: v for k, v in options.items() if v not in ("", None)})
    except ValidationError as exc:
        raise InputError(_options_error(exc)) from None


def build_agents(catalog: Catalog, choices: SetupChoices) -> list[AgentSpec]:
    """The protocol's agents for these options, with the per-agent models and personas applied."""
    module = catalog.protocols[choices.protocol]
    options = validate_options(module, choices.options)
    config = load_config()
    model = default_model(choices)
    params = {"api_base": choices.api_base.strip()} if choices.api_base.strip() else {}
    per_role = {} if model == DEMO_MODEL else config.role_models()  # as `run --demo`: the demo for every agent
    agents: list[AgentSpec] = module.build_agents(
        options, ModelChoice(default=model, per_agent=dict(choices.agent_models), per_role=per_role, params=params))
    with_model_params(agents, config, generation_of(choices))  # each model's api_base, key variable, cap
    for agent in agents:
        persona = choices.agent_personas.get(agent.name)
        if persona:
            if persona not in catalog.personas:
                raise InputError(f"agent {agent.name}: unknown persona {persona!r}")
            agent.persona = catalog.personas[persona]
    return agents


def generation_of(choices: SetupChoices) -> Generation:
    """config.toml's `[generation]` with the form's reply cap and temperature over it."""
    generation = load_config().generation_for_run()
    typed = {"max_reply_tokens": choices.max_reply_tokens.strip(), "temperature": choices.temperature.strip(),
             "structured": choices.structured}
    try:
        return Generation.model_validate({**generation.model_dump(), **{k: v for k, v in typed.items() if v}})
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(f"{str(error['loc'][0]).replace('_', ' ')}: {error['msg']}") from None


def chosen_criteria(catalog: Catalog, choices: SetupChoices) -> list[Criterion]:
    custom = {c.name: c for c in choices.custom_criteria}
    picked: list[Criterion] = []
    for name in choices.criteria:
        if name in custom:
            picked.append(custom[name])
        elif name in catalog.criteria:
            picked.append(catalog.criteria[name])
        else:
            raise InputError(f"unknown criterion {name!r}")
    if not picked:
        raise InputError("pick at least one criterion")
    return picked


def build_task(catalog: Catalog, protocol: str, texts: dict[str, str]) -> Task:
    """The texts typed or loaded, checked; inputs the protocol does not read are left out."""
    wanted = ("text", *catalog.inputs(protocol))
    values: dict[str, str | None] = {}
    for key in wanted:
        raw = texts.get(key, "")
        if not raw.strip():
            if key == "text" or key in catalog.required(protocol):
                raise InputError(f"{INPUT_LABELS[key]} is empty")
            values[key] = None
            continue
        values[key] = check_text(raw.replace("\r\n", "\n"), INPUT_LABELS[key])
    return Task(**values)


def build_session(catalog: Catalog, choices: SetupChoices, texts: dict[str, str]) -> tuple[Session, bool]:
    """A ready-to-run session and whether any agent is on the demo model; InputError otherwise."""
    if choices.protocol not in catalog.protocols:
        raise InputError(f"unknown protocol {choices.protocol!r}")
    module = catalog.protocols[choices.protocol]
    task = build_task(catalog, choices.protocol, texts)
    criteria = chosen_criteria(catalog, choices)
    chosen = dict(choices.options)
    if "seed" in module.Options.model_fields and chosen.get("seed") in (None, ""):
        chosen["seed"] = random.SystemRandom().randrange(2**31)  # as `run` does; stored, so replays match
    options = validate_options(module, chosen).model_dump()
    agents = build_agents(catalog, choices)
    session = Session(protocol=choices.protocol, options=options, criteria=criteria, agents=agents, task=task)
    generation_of(choices).record(session.options)
    return session, any(a.model == DEMO_MODEL for a in agents)
