"""The task options shared by `debate-tui run` and the TUI: what to judge, how, and with which models."""

from __future__ import annotations

import argparse
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from debate_tui.catalog import CatalogError, resolve_criteria, resolve_personas
from debate_tui.domain import Criterion, Persona, Session, Task
from debate_tui.inputs import InputError, read_text
from debate_tui.llm.demo import DEMO_MODEL
from debate_tui.protocols import PROTOCOLS, get_protocol
from debate_tui.protocols.common import ModelChoice

DEFAULT_CRITERIA = {"debate": "coherence"}
DEMO_HINT = (
    "no model configured: using the offline demo model (its judgments are not real). "
    "To use a provider, pass --model (e.g. gpt-4o-mini with OPENAI_API_KEY set) or set DEBATE_TUI_MODEL."
)

# Generic option name -> protocol option key: each protocol reads the keys it knows.
OPTION_KEYS = ("rounds", "critic_persona", "seed")


def add_task_arguments(parser: argparse.ArgumentParser, *, text_required: bool) -> None:
    task = parser.add_argument_group("what to judge")
    task.add_argument("--text", required=text_required, metavar="PATH|-", help="the text to evaluate ('-' reads stdin)")
    task.add_argument("--text-b", metavar="PATH", help="a second text, for pairwise comparison")
    task.add_argument("--source", metavar="PATH", help="the article, dialogue or question the text answers")
    task.add_argument("--context", metavar="PATH", help="extra facts the text should use (e.g. a knowledge snippet)")
    how = parser.add_argument_group("how to judge")
    how.add_argument("--protocol", default="debate", choices=sorted(PROTOCOLS), help="evaluation protocol (default: debate)")
    how.add_argument("--criteria", metavar="NAME[,NAME]|FILE.toml",
                     help="criteria to judge, built-in names or a TOML file (default depends on the protocol)")
    how.add_argument("--rounds", type=int, metavar="N", help="DEBATE: maximum Critic iterations (default 4)")
    how.add_argument("--critic-persona", metavar="NAME",
                     help="DEBATE critic: strictly-negative (default), moderately-negative, weakly-negative, plain, sophisticated")
    how.add_argument("--tie-breaker", action="store_true", help="DEBATE: a Tie-Breaker agent decides when no agreement")
    how.add_argument("--seed", type=int, metavar="N", help="seed for every random draw (stored in the session)")
    models = parser.add_argument_group("models")
    models.add_argument("--model", metavar="MODEL", help="any litellm model string, e.g. gpt-4o-mini, anthropic/claude-3-5-haiku-latest, ollama/llama3.1")
    models.add_argument("--api-base", metavar="URL", help="base URL of an OpenAI-compatible server or proxy")
    models.add_argument("--demo", action="store_true", help="use the offline demo model (no provider, not a real judgment)")


@dataclass
class TaskChoice:
    """Everything needed to start a run, built from arguments."""

    session: Session
    demo: bool


def _read_optional(ref: str | None, what: str, warn) -> str | None:
    return None if ref is None else read_text(ref, what, warn)


def choose_model(args: argparse.Namespace) -> tuple[str, bool]:
    """The model to use and whether it is the demo, with the demo as the offline fallback."""
    if args.demo:
        return DEMO_MODEL, True
    model = args.model or os.environ.get("DEBATE_TUI_MODEL")
    return (model, False) if model else (DEMO_MODEL, True)


def protocol_options(args: argparse.Namespace) -> dict:
    options = {key: getattr(args, key) for key in OPTION_KEYS if getattr(args, key, None) is not None}
    if getattr(args, "tie_breaker", False):
        options["tie_breaker"] = "agent"
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
    protocol = get_protocol(args.protocol)
    try:
        criteria: list[Criterion] = resolve_criteria(args.criteria or DEFAULT_CRITERIA.get(args.protocol, "coherence"))
        personas: list[Persona] | None = resolve_personas(args.personas) if getattr(args, "personas", None) else None
        options = protocol.Options.model_validate(protocol_options(args))
        model, demo = choose_model(args)
        params = {"api_base": args.api_base} if args.api_base and not demo else {}
        agents = protocol.build_agents(options, ModelChoice(default=model, params=params), personas)
    except CatalogError as exc:
        raise InputError(str(exc)) from None
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(f"--{str(error['loc'][0]).replace('_', '-')}: {error['msg']}") from None
    if demo and not args.demo:
        warn(DEMO_HINT)
    session = Session(protocol=args.protocol, options=options.model_dump(), criteria=criteria, agents=agents, task=task)
    return TaskChoice(session=session, demo=demo)


def warn_stderr(message: str) -> None:
    print(f"debate-tui: warning: {message}", file=sys.stderr)


def sessions_dir(args: argparse.Namespace) -> Path | None:
    return Path(args.sessions_dir).expanduser() if getattr(args, "sessions_dir", None) else None
