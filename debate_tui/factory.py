"""The one way to build a session: (task, resolved run spec) -> a validated session, or one reason why not.

`run`, `batch`, `resume` and the TUI (its setup form and `--autostart`) all come
here, so the same choices and the same config.toml give the same protocol,
options, criteria and agents everywhere, and what one front end refuses every
front end refuses with the same one-line reason (an `InputError`). Free of
argparse and Textual, and of the configuration: the front ends turn their flags
or form into `Choices` and resolve them (`resolver.resolve_choices`: the
configuration's part rides in the spec with its origins); this module only
reads the spec it is handed (and a criteria or personas TOML file it names),
and the session keeps that spec (`Session.spec`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from debate_tui.catalog import Catalog, CatalogError, load_catalog, load_criteria_file
from debate_tui.choices import CONNECTION, DEFAULT_PROTOCOL, Choices
from debate_tui.domain import AgentSpec, Criterion, Persona, Session, Task, names_from_personas
from debate_tui.endpoints import seal
from debate_tui.engine.runner import Runner
from debate_tui.generation import Generation, ReplySettings
from debate_tui.inputs import ConfigError, InputError, check_api_base
from debate_tui.llm import DEMO_MODEL
from debate_tui.llm.base import LLMClient
from debate_tui.locations import config_path
from debate_tui.precedence import REPLY_ORDER, Layer, Scope, merged_tables
from debate_tui.protocols import get_protocol
from debate_tui.protocols.common import ModelChoice, name_key
from debate_tui.protocols.spec import INPUT_FLAGS, ProtocolSpec

DEMO_HINT = (
    "no model configured: using the offline demo model (its judgments are not real). To use a provider, "
    "add these two lines (or pass --model; `debate-tui config init` writes a starter file):\n"
    '    default_model = "gpt-4o-mini"    # in {config_path}\n'
    "    export OPENAI_API_KEY=...         # in your shell"
)
UNIVERSAL_OPTIONS = frozenset({"seed"})
"""Options any front end may give whatever the protocol: a protocol that draws nothing ignores a seed."""


class OptionError(InputError):
    """A protocol option that is not the protocol's, or whose value its spec refuses."""

    def __init__(self, protocol: str, key: str, reason: str, *, unknown: bool = False) -> None:
        super().__init__(f"{_flag(key)}: {reason}")
        self.protocol, self.key, self.reason, self.unknown = protocol, key, reason, unknown


@dataclass
class Built:
    """A session ready to run, and what the person should be told about it."""

    session: Session
    demo: bool
    """Whether any agent answers with the offline demo model."""
    warnings: list[str] = field(default_factory=list)


def demo_hint() -> str:
    return DEMO_HINT.format(config_path=config_path())


def build_session(task: Task, choices: Choices, catalog: Catalog | None = None, *, check_inputs: bool = True,
                  input_names: dict[str, str] | None = None) -> Built:
    """Validate every choice of a resolved spec against the protocol's spec; InputError says what is wrong.

    `check_inputs=False` leaves the texts to the caller (`check_task`): a batch checks every line, naming it.
    `input_names`: how the person gives each text, for the reason (default: the command line's flags)."""
    spec = protocol_spec(choices.protocol or DEFAULT_PROTOCOL)
    try:
        catalog = catalog or catalog_of(choices)
        criteria = chosen_criteria(spec, choices, catalog)
        options = validate_options(spec, choices)
        agents, generation = _agents(spec, options, choices, catalog)
    except CatalogError as exc:
        raise InputError(str(exc)) from None
    if check_inputs:
        spec.check_inputs(task, input_names or INPUT_FLAGS)
    spec.check_choices(task, criteria, options)
    demo_default = not (choices.demo or choices.model or choices.default_model or choices.role_models
                        or options.model_dump().get("jury"))
    chosen = options.model_dump()
    generation.record(chosen)
    session = Session(protocol=spec.name, options=chosen, criteria=criteria, agents=agents, task=task, spec=choices,
                      seal=seal(agents))
    return Built(session, any(a.model == DEMO_MODEL for a in agents), [demo_hint()] if demo_default else [])


def catalog_of(choices: Choices) -> Catalog:
    """The built-in criteria and personas with the spec's own directories over them."""
    return load_catalog(*(Path(d) if d else None for d in (choices.criteria_dir, choices.personas_dir)))


def agents_for(choices: Choices, catalog: Catalog) -> list[AgentSpec]:
    """The agents `build_session` would give these choices (a form shows them as it is filled in)."""
    spec = protocol_spec(choices.protocol or DEFAULT_PROTOCOL)
    try:
        return _agents(spec, validate_options(spec, choices), choices, catalog)[0]
    except CatalogError as exc:
        raise InputError(str(exc)) from None


def _agents(spec: ProtocolSpec, options: Any, choices: Choices, catalog: Catalog) -> tuple[list[AgentSpec], Generation]:
    """The protocol's agents with the models and personas chosen, and each model's settings from the spec; and
    the generation settings they were given (the session records them)."""
    demo = choices.demo or choices.model == DEMO_MODEL
    model = DEMO_MODEL if demo else (choices.model or choices.default_model or DEMO_MODEL)
    if choices.api_base:  # refused even for the demo: the TUI would remember it in its settings
        check_api_base(choices.api_base, "--api-base (API base)")
    named = bool(getattr(options, "jury", ""))  # a jury names its judges' models itself
    params = {"api_base": choices.api_base} if choices.api_base and (model != DEMO_MODEL or named) else {}
    models = ModelChoice(default=model, per_agent=dict(choices.agent_models),
                         per_role={} if demo else dict(choices.role_models), params=params, demo=demo)
    agents = spec.build_agents(options, models, chosen_personas(spec, choices, options, catalog))
    check_agent_names(choices.agent_models, agents)
    with_personas(agents, choices.agent_personas, catalog)
    generation = generation_of(choices)
    with_model_params(agents, choices, generation)
    if _own_servers_only(agents) and "structured" not in run_wide(choices):
        generation = generation.model_copy(update={"structured": "auto"})
    return agents, generation


def _own_servers_only(agents: list[AgentSpec]) -> bool:
    """Whether every agent calls a server of the user's own (an `api_base`): there `--structured auto` is the
    default, since a small local model's free text is misread where its JSON answers are not (issue 45);
    a hosted provider keeps free text unless asked."""
    called = [agent for agent in agents if agent.model != DEMO_MODEL]
    return bool(called) and all(agent.params.get("api_base") for agent in called)


def run_wide(choices: Choices) -> dict[str, Any]:
    """The generation settings typed (flag or form) over `[generation]`'s, by the one order (`precedence`)."""
    return merged_tables({Layer.TYPED: choices.generation, Scope.GENERATION: choices.generation_defaults},
                         REPLY_ORDER)


def generation_of(choices: Choices) -> Generation:
    """The generation defaults (`[generation]` with its variables, each model's own settings), the choices
    typed over all of them (`Generation.typed`: a flag or the form beats even a model's own setting)."""
    models = {model: {key: settings[key] for key in ReplySettings.model_fields if key in settings}
              for model, settings in choices.model_settings.items()}
    typed = {key: value for key, value in choices.generation.items() if key in ReplySettings.model_fields}
    try:
        return Generation.model_validate({**run_wide(choices), "models": models, "typed": typed})
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(f"{_flag(str(error['loc'][0]))}: {error['msg']}") from None


def protocol_spec(name: str) -> ProtocolSpec:
    try:
        return get_protocol(name)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def chosen_criteria(spec: ProtocolSpec, choices: Choices, catalog: Catalog) -> list[Criterion]:
    """A criteria file, else the names chosen, else the protocol's defaults."""
    if choices.criteria_file:
        return load_criteria_file(Path(choices.criteria_file).expanduser())
    if choices.criteria is not None and not any(name.strip() for name in choices.criteria):
        raise InputError("pick at least one criterion")
    names = spec.criteria.default if choices.criteria is None else choices.criteria
    return catalog.resolve_criteria(names, choices.custom_criteria)


def chosen_personas(spec: ProtocolSpec, choices: Choices, options: Any, catalog: Catalog) -> list[Persona] | None:
    """`--personas`, else the persona an option names (`--critic-persona`), from the same catalog."""
    if not choices.personas:
        named = getattr(options, spec.persona_option) if spec.persona_option else None
        return catalog.resolve_personas(named) if named else None
    if not spec.personas:
        raise InputError(f"--personas: {spec.title} gives its agents no persona")
    return catalog.resolve_personas(choices.personas)


def validate_options(spec: ProtocolSpec, choices: Choices) -> Any:
    """The protocol's options: its spec's defaults, under `[protocols.<name>]`, under the choices given."""
    fields = spec.options.model_fields
    chosen = {key: value for key, value in choices.options.items() if value is not None and value != ""}
    foreign = sorted(key for key in chosen if key not in fields and key not in UNIVERSAL_OPTIONS)
    if foreign:
        readers = [name for name, other in _specs().items() if foreign[0] in other.options.model_fields]
        read_by = f" (it is read by {', '.join(readers)})" if readers else ""
        raise OptionError(spec.name, foreign[0], f"{spec.name} has no such option{read_by}", unknown=True)
    values = {**option_defaults(spec, choices), **{key: value for key, value in chosen.items() if key in fields}}
    if "seed" in fields and values.get("seed") is None:
        values["seed"] = random.SystemRandom().randrange(2**31)  # stored, so a replay draws the same
    return options_of(spec, values)


def option_defaults(spec: ProtocolSpec, choices: Choices) -> dict[str, Any]:
    """The protocol's `[protocols.<name>]` table in the spec, checked against its options; ConfigError names
    the file (from the table's origin) and each setting refused."""
    table = dict(choices.option_defaults.get(spec.name, {}))
    origin = choices.origins.get(f"option_defaults.{spec.name}", "config.toml")
    where = f"{origin.removeprefix('config.toml (').removesuffix(')')}: protocols.{spec.name}"
    unknown = sorted(set(table) - set(spec.options.model_fields))
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown option for {spec.name} "
                          f"(valid: {', '.join(spec.options.model_fields)})")
    try:
        spec.options.model_validate(table)
    except ValidationError as exc:
        raise ConfigError("\n".join(f"{where}.{'.'.join(map(str, error['loc']))}: {error['msg']}"
                                     for error in exc.errors())) from None
    return table


def options_of(spec: ProtocolSpec, values: dict[str, Any]) -> Any:
    """The spec's options model for these values; OptionError names the first one refused."""
    try:
        return spec.options.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = str(error["loc"][0]) if error["loc"] else "options"
        raise OptionError(spec.name, where, error["msg"].removeprefix("Value error, ")) from None


def check_task(session: Session, task: Task, names: dict[str, str] | None = None) -> None:
    """Whether the session's protocol, options and criteria can judge `task` (a batch item); InputError if not.

    `names` says how each input was given (default: by its flag)."""
    spec = protocol_spec(session.protocol)
    spec.check_task(task, session.criteria, options_of(spec, session.options), *([names] if names else []))


def check_session(session: Session) -> None:
    """A saved session still fits its protocol's spec (before a resume); InputError says what does not."""
    check_task(session, session.task)


def kept_settings_note(session: Session, now: Choices) -> str | None:
    """When the configuration changed since the session was made: that a resume keeps the session's own
    settings (its agents carry them, and its spec says which), so nothing it was made with is lost."""
    changed = session.spec.configured_changes(now) if session.spec is not None else []
    if not changed:
        return None
    return (f"the configuration changed since session {session.id} was made ({', '.join(changed)}); it resumes "
            "with the settings it was made with")


def _specs() -> dict[str, ProtocolSpec]:
    from debate_tui.protocols import all_protocols

    return all_protocols()


def _flag(key: str) -> str:
    return f"--{key.replace('_', '-')}"


def check_agent_names(per_agent: Mapping[str, str], agents: list[AgentSpec]) -> None:
    """A model given for an agent the protocol does not have is a typo, not something to ignore."""
    known = {name_key(a.name) for a in agents}
    unknown = [name for name in per_agent if name_key(name) not in known]
    if unknown:
        raise InputError(f"--agent-model: no agent named {', '.join(map(repr, unknown))}; "
                         f"agents: {', '.join(a.name for a in agents)}")


def with_personas(agents: list[AgentSpec], chosen: Mapping[str, str], catalog: Catalog) -> None:
    """Personas picked per agent (in the TUI) over the protocol's defaults. Agents named after their persona
    (ChatEval's referees) are named after the one they now have: a scientist is never labelled "News Author"."""
    by_name = {agent.name: agent for agent in agents}
    cast = [agent for agent in agents if agent.persona is not None]
    others = frozenset(agent.name for agent in agents if agent.persona is None)
    named = bool(cast) and _persona_names(cast, others) == [agent.name for agent in cast]
    for name, persona in chosen.items():
        if name not in by_name:
            raise InputError(f"no agent named {name!r} to give the persona {persona!r}")
        if persona not in catalog.personas:
            raise InputError(f"agent {name}: unknown persona {persona!r}")
        by_name[name].persona = catalog.personas[persona]
    if named and chosen:
        for agent, new_name in zip(cast, _persona_names(cast, others), strict=True):
            agent.name = new_name


def _persona_names(cast: list[AgentSpec], others: frozenset[str]) -> list[str]:
    return names_from_personas([agent.persona for agent in cast if agent.persona is not None], others)


def with_model_params(agents: list[AgentSpec], choices: Choices, generation: Generation) -> None:
    """Each agent gets its model's api_base, api_key_env and window from the spec, under what the choices set;
    then its reply cap and temperature (`Generation.apply`)."""
    for agent in agents:
        settings = choices.model_settings.get(agent.model, {})
        connection = {key: settings[key] for key in CONNECTION if key in settings}
        agent.params = {} if agent.model == DEMO_MODEL else {**connection, **agent.params}
        agent.context_window = settings.get("context_window")
    generation.apply(agents)



def runner_for(session: Session, client: LLMClient, **options: Any) -> Runner:
    """The engine's runner for a session, handed its protocol's algorithm and, for a run on the demo model, the
    parts the demo plays (the engine knows no protocol)."""
    spec = protocol_spec(session.protocol)
    demo = spec.demo_parts() if DEMO_MODEL in session.models else {}
    return Runner(session, client, play=spec.play, demo=demo, **options)
