"""From the task options shared by `debate-tui run` and the TUI (defined in `task_flags`) to a session."""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from debate_tui.catalog import CatalogError, resolve_criteria, resolve_personas
from debate_tui.cli.task_flags import OPTION_KEYS
from debate_tui.config import Config, config_path, effective_config
from debate_tui.domain import AgentSpec, Criterion, Persona, Session, Task
from debate_tui.generation import Generation
from debate_tui.inputs import InputError, read_text
from debate_tui.llm import DEMO_MODEL
from debate_tui.protocols import get_protocol
from debate_tui.protocols.common import ModelChoice, name_key
from debate_tui.textsafe import inert

DEFAULT_CRITERIA = {"debate": "coherence", "mateval": "REP,LINC,DCONT,ILC,FER", "scaleeval": "helpfulness",
                    "chateval": "coherence", "single": "coherence"}
DEMO_HINT = (
    "no model configured: using the offline demo model (its judgments are not real). To use a provider, "
    "add these two lines (or pass --model; `debate-tui config init` writes a starter file):\n"
    '    default_model = "gpt-4o-mini"    # in {config_path}\n'
    "    export OPENAI_API_KEY=...         # in your shell"
)

@dataclass
class TaskChoice:
    """Everything needed to start a run, built from arguments."""

    session: Session
    demo: bool


def _read_optional(ref: str | None, what: str, warn) -> str | None:
    return None if ref is None else read_text(ref, what, warn)


def demo_hint() -> str:
    return DEMO_HINT.format(config_path=config_path())


def choose_model(args: argparse.Namespace, config: Config) -> tuple[str, bool]:
    """The default model (--model > DEBATE_TUI_MODEL > config.toml) and whether it is the offline demo fallback."""
    if args.demo:
        return DEMO_MODEL, True
    return (config.default_model, False) if config.default_model else (DEMO_MODEL, True)


def with_model_params(agents: list[AgentSpec], config: Config, generation: Generation) -> None:
    """Each agent gets its model's api_base, api_key_env and window from the config, under what the flags set;
    then its reply cap and temperature (`Generation.apply`)."""
    for agent in agents:
        agent.params = {} if agent.model == DEMO_MODEL else {**config.model_params(agent.model), **agent.params}
        agent.context_window = config.context_window(agent.model)
    generation.apply(agents)


def protocol_options(args: argparse.Namespace, defaults: dict) -> dict:
    """The config's options for the protocol, overridden by the flags given."""
    options = dict(defaults)
    options.update((key, getattr(args, key)) for key in OPTION_KEYS if getattr(args, key, None) is not None)
    if getattr(args, "tie_breaker", False):
        options["tie_breaker"] = "agent"
    if getattr(args, "no_feedback", False):
        options["feedback"] = False
    if getattr(args, "count_unlocated", False):
        options["count_unlocated"] = True
    options.setdefault("seed", random.SystemRandom().randrange(2**31))
    return options


def build_task(args: argparse.Namespace, warn) -> Task:
    return Task(
        text=read_text(args.text, "--text", warn),
        text_b=_read_optional(args.text_b, "--text-b", warn),
        source=_read_optional(args.source, "--source", warn),
        context=_read_optional(args.context, "--context", warn),
    )


def build_session(args: argparse.Namespace, task: Task, warn) -> TaskChoice:
    """Validate the choices and assemble a fresh session; raises InputError with a one-line reason."""
    config = effective_config(args)
    protocol = get_protocol(config.protocol)
    try:
        criteria: list[Criterion] = resolve_criteria(args.criteria or DEFAULT_CRITERIA.get(config.protocol, "coherence"))
        personas: list[Persona] | None = resolve_personas(args.personas) if getattr(args, "personas", None) else None
        defaults = config.protocol_defaults(config.protocol, protocol.Options)
        options = protocol.Options.model_validate(protocol_options(args, defaults))
        model, demo = choose_model(args, config)
        params = {"api_base": args.api_base} if args.api_base and not demo else {}
        per_agent = agent_models(getattr(args, "agent_model", None) or [])
        per_role = {} if args.demo else config.role_models()
        agents = protocol.build_agents(
            options, ModelChoice(default=model, per_agent=per_agent, per_role=per_role, params=params), personas)
        generation = config.generation_for_run()
        with_model_params(agents, config, generation)
        check_agent_names(per_agent, agents)
        if hasattr(protocol, "check_task"):
            protocol.check_task(task, criteria)
    except CatalogError as exc:
        raise InputError(str(exc)) from None
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(f"--{str(error['loc'][0]).replace('_', '-')}: {error['msg']}") from None
    if demo and not args.demo and not per_role:
        warn(demo_hint())
    session = Session(protocol=config.protocol, options=options.model_dump(), criteria=criteria, agents=agents, task=task)
    generation.record(session.options)
    return TaskChoice(session=session, demo=demo)


def agent_models(pairs: list[str]) -> dict[str, str]:
    """`--agent-model NAME=MODEL` values as a name -> model map."""
    chosen = {}
    for pair in pairs:
        name, sep, model = pair.partition("=")
        if not sep or not name.strip() or not model.strip():
            raise InputError(f"--agent-model: expected NAME=MODEL, got {pair!r}")
        chosen[name.strip()] = model.strip()
    return chosen


def check_agent_names(per_agent: dict[str, str], agents: list[AgentSpec]) -> None:
    """A model given for an agent the protocol does not have is a typo, not something to ignore."""
    known = {name_key(a.name) for a in agents}
    unknown = [name for name in per_agent if name_key(name) not in known]
    if unknown:
        raise InputError(f"--agent-model: no agent named {', '.join(map(repr, unknown))}; "
                         f"agents: {', '.join(a.name for a in agents)}")


def warn_stderr(message: str) -> None:
    print(f"debate-tui: warning: {inert(message)}", file=sys.stderr)


def sessions_dir(args: argparse.Namespace) -> Path | None:
    return Path(args.sessions_dir).expanduser() if getattr(args, "sessions_dir", None) else None
