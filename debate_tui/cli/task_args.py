"""The task options shared by `debate-tui run` and the TUI: what to judge, how, and with which models."""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from debate_tui.catalog import CatalogError, resolve_criteria, resolve_personas
from debate_tui.config import Config, config_path, effective_config
from debate_tui.domain import AgentSpec, Criterion, Persona, Session, Task
from debate_tui.inputs import InputError, read_text
from debate_tui.llm.demo import DEMO_MODEL
from debate_tui.protocols import PROTOCOLS, get_protocol
from debate_tui.protocols.common import ModelChoice, name_key
from debate_tui.protocols.criteria_variants import VARIANTS
from debate_tui.textsafe import inert

DEFAULT_CRITERIA = {"debate": "coherence", "mateval": "REP,LINC,DCONT,ILC,FER", "scaleeval": "helpfulness",
                    "chateval": "coherence", "single": "coherence"}
DEMO_HINT = (
    "no model configured: using the offline demo model (its judgments are not real). To use a provider, "
    "add these two lines (or pass --model; `debate-tui config init` writes a starter file):\n"
    '    default_model = "gpt-4o-mini"    # in {config_path}\n'
    "    export OPENAI_API_KEY=...         # in your shell"
)

# Generic option name -> protocol option key: each protocol reads the keys it knows.
OPTION_KEYS = ("rounds", "critic_persona", "seed", "strategy", "evaluators", "on_no_consensus", "criteria_variant",
               "agents", "turns", "swap", "samples", "logprobs")


def add_task_arguments(parser: argparse.ArgumentParser, *, text_required: bool) -> None:
    task = parser.add_argument_group("what to judge")
    task.add_argument("--text", required=text_required, metavar="PATH|-", help="the text to evaluate ('-' reads stdin)")
    task.add_argument("--text-b", metavar="PATH", help="a second text, for pairwise comparison")
    task.add_argument("--source", metavar="PATH", help="the article, dialogue or question the text answers")
    task.add_argument("--context", metavar="PATH", help="extra facts the text should use (e.g. a knowledge snippet)")
    how = parser.add_argument_group("how to judge")
    how.add_argument("--protocol", choices=sorted(PROTOCOLS),
                     help="evaluation protocol (default: `protocol` in config.toml, else debate)")
    how.add_argument("--criteria", metavar="NAME[,NAME]|FILE.toml",
                     help="criteria to judge, built-in names or a TOML file (default depends on the protocol)")
    how.add_argument("--rounds", type=int, metavar="N",
                     help="DEBATE: maximum Critic iterations (default 4); ScaleEval: discussion rounds after the "
                          "initial verdicts (default 2); MATEval O_b_O/SR: rounds (default one per error type)")
    how.add_argument("--critic-persona", metavar="NAME",
                     help="DEBATE critic: strictly-negative (default), moderately-negative, weakly-negative, plain, sophisticated")
    how.add_argument("--tie-breaker", action="store_true", help="DEBATE: a Tie-Breaker agent decides when no agreement")
    how.add_argument("--seed", type=int, metavar="N", help="seed for every random draw (stored in the session)")
    how.add_argument("--strategy", metavar="NAME",
                     help="MATEval discussion strategy: SR+CoT (default), CoT, SR, O_b_O, SA (single agent); "
                          "ChatEval communication strategy: one-by-one (default), simultaneous-talk, "
                          "simultaneous-talk-with-summarizer")
    how.add_argument("--agents", type=int, metavar="N",
                     help="ChatEval: referees, 2 to 5 (default 3); ScaleEval: speakers, 2 to 5 (default 3)")
    how.add_argument("--turns", type=int, metavar="T", help="ChatEval: discussion turns (default 2)")
    how.add_argument("--personas", metavar="NAME[,NAME]|FILE.toml",
                     help="ChatEval referees' personas, cycled over the agents (default: general-public, critic, "
                          "news-author, psychologist, scientist); single: the judge's persona")
    how.add_argument("--swap", action="store_true",
                     help="ChatEval, single: judge a pair again with the texts exchanged (position bias check)")
    how.add_argument("--samples", type=int, metavar="N", help="single: replies drawn per criterion and averaged (default 1)")
    how.add_argument("--logprobs", action="store_true", default=None,
                     help="single: also report G-Eval's probability-weighted score, where the provider returns "
                          "log-probabilities (asks for the top 5 per token)")
    how.add_argument("--evaluators", type=int, metavar="N", help="MATEval: evaluator agents (default 2)")
    how.add_argument("--no-feedback", action="store_true",
                     help="MATEval: no feedback agent after each round (the paper's MATEval-FB ablation)")
    how.add_argument("--on-no-consensus", choices=("human", "majority", "tie", "undecided"),
                     help="ScaleEval, when the speakers still disagree after the last round: ask a person "
                          "(default; headless: exit code 5, resume with --decide), the majority, a tie, or no verdict")
    how.add_argument("--criteria-variant", choices=VARIANTS,
                     help="ScaleEval robustness runs: the rubric as written (general, default) or perturbed "
                          "from the seed (the paper's Table 7)")
    models = parser.add_argument_group("models")
    models.add_argument("--model", metavar="MODEL", help="any litellm model string, e.g. gpt-4o-mini, anthropic/claude-3-5-haiku-latest, ollama/llama3.1")
    models.add_argument("--api-base", metavar="URL", help="base URL of an OpenAI-compatible server or proxy")
    models.add_argument("--demo", action="store_true", help="use the offline demo model (no provider, not a real judgment)")
    models.add_argument("--agent-model", action="append", metavar="NAME=MODEL", default=[],
                        help="a model for one agent, e.g. 'Speaker 2=claude-3-5-haiku-latest' (repeatable; "
                             "the others use --model)")


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


def with_model_params(agents: list[AgentSpec], config: Config) -> None:
    """Each agent gets its model's api_base and api_key_env from the config, under what the flags set."""
    for agent in agents:
        agent.params = {} if agent.model == DEMO_MODEL else {**config.model_params(agent.model), **agent.params}


def protocol_options(args: argparse.Namespace, defaults: dict) -> dict:
    """The config's options for the protocol, overridden by the flags given."""
    options = dict(defaults)
    options.update((key, getattr(args, key)) for key in OPTION_KEYS if getattr(args, key, None) is not None)
    if getattr(args, "tie_breaker", False):
        options["tie_breaker"] = "agent"
    if getattr(args, "no_feedback", False):
        options["feedback"] = False
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
        with_model_params(agents, config)
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
