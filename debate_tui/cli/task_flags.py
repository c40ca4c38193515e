"""The task options shared by `debate-tui run`, `batch` and the TUI: their flags, and the `Choices` they make.

The flags of protocol options take their help from the protocols' specs when
help is shown (`SpecHelpFormatter`), so building the TUI's parser imports no
protocol module and no pydantic before its first frame.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from debate_tui.choices import STRUCTURED, Choices
from debate_tui.inputs import InputError
from debate_tui.llm import DEMO_MODEL
from debate_tui.protocols import PROTOCOLS
from debate_tui.protocols.criteria_variants import VARIANTS
from debate_tui.settings import GENERATION, LIMITS, Setting

TEXT_FLAGS = {"text": "--text", "text_b": "--text-b", "source": "--source", "context": "--context"}
GENERATION_FLAGS = tuple(setting.name for setting in GENERATION)
"""argparse destinations of the generation flags, named as `Generation`'s fields."""


@dataclass(frozen=True)
class OptionFlag:
    """A flag that sets a protocol option: `key` gets the flag's value, or `value` for a switch.

    `bare` is the value of a flag given without one (`--tie-breaker` alone: agent, as when it was a switch)."""

    key: str
    value: Any = None
    bare: str | None = None


OPTION_FLAGS: dict[str, OptionFlag] = {
    "rounds": OptionFlag("rounds"), "critic_persona": OptionFlag("critic_persona"),
    "tie_breaker": OptionFlag("tie_breaker", bare="agent"), "seed": OptionFlag("seed"),
    "strategy": OptionFlag("strategy"), "agents": OptionFlag("agents"), "turns": OptionFlag("turns"),
    "swap": OptionFlag("swap", True), "samples": OptionFlag("samples"), "logprobs": OptionFlag("logprobs", True),
    "evaluators": OptionFlag("evaluators"), "no_feedback": OptionFlag("feedback", False),
    "count_unlocated": OptionFlag("count_unlocated", True), "prompt_language": OptionFlag("prompt_language"),
    "on_no_consensus": OptionFlag("on_no_consensus"), "criteria_variant": OptionFlag("criteria_variant"),
    "jury": OptionFlag("jury"), "jury_aggregate": OptionFlag("jury_aggregate"),
}
"""argparse destination -> the protocol option it sets; each protocol reads the keys its spec has."""


TIE_BREAKERS = ("none", "agent", "human")
BARE_VALUES = {"--tie-breaker": (OPTION_FLAGS["tie_breaker"].bare, TIE_BREAKERS), "--structured": ("on", STRUCTURED)}
"""Flags whose value may be left out -> (the value then, the values they take)."""


def spelled_out(argv: list[str]) -> list[str]:
    """A flag of BARE_VALUES alone right before a positional (`batch --tie-breaker in.jsonl`) takes its bare
    value: argparse would take the file for the flag's value, so the flag is spelled out (`--tie-breaker=agent`)."""
    fixed = list(argv)
    for i, following in enumerate(argv[1:], start=1):
        positional = following == "-" or not following.startswith("-")  # "-": batch's standard input
        if (bare := BARE_VALUES.get(argv[i - 1])) and positional and following not in bare[1]:
            fixed[i - 1] = f"{argv[i - 1]}={bare[0]}"
    return fixed


def structured_value(value: str) -> bool | str:
    """`--structured VALUE` as `Generation.structured`."""
    if value not in STRUCTURED:
        raise argparse.ArgumentTypeError(f"invalid choice: {value!r} (choose from {', '.join(STRUCTURED)})")
    return STRUCTURED[value]


def option_help(dest: str) -> str:
    """A protocol option flag's help, from every spec that has the option (their help, default and range)."""
    from annotated_types import Ge, Le

    from debate_tui.protocols import all_protocols

    flag = OPTION_FLAGS[dest]
    readers: dict[str, list[str]] = {}
    for spec in all_protocols().values():
        info = spec.options.model_fields.get(flag.key)
        if info is None:
            continue
        about = " ".join((info.description or flag.key).split()).rstrip(".")
        about = about[:1].lower() + about[1:]
        if flag.value is not None:
            about = f"sets {flag.key} = {str(flag.value).lower()}: {about}"
        else:
            bounds = [f"at least {m.ge}" if isinstance(m, Ge) else f"at most {m.le}"
                      for m in info.metadata if isinstance(m, Ge | Le)]
            shown = info.default not in (None, "") and flag.key != "seed"
            facts = ([f"default {info.default}"] if shown else []) + bounds
            about += f" ({', '.join(facts)})" if facts else ""
        if flag.bare is not None:
            about += f"; the flag alone: {flag.bare}"
        readers.setdefault(about, []).append(spec.title)
    return "; ".join(f"{', '.join(titles)}: {about}" for about, titles in readers.items())


CONDENSE_MODES = ("summary", "digest")
"""engine.condense.CondenseMode's values (not imported: the TUI's parser stays light before its first frame)."""

SPEC_HELP = "(the protocols' specs say)"
"""A protocol option flag's help until shown: argparse lists only flags with some help text."""


class SpecHelpFormatter(argparse.HelpFormatter):
    """Fills a protocol option flag's help from the specs, only when help is shown."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        return option_help(action.dest) if action.dest in OPTION_FLAGS else action.help


class RawSpecHelpFormatter(SpecHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """The same, for a command whose description keeps its own line breaks (`batch`)."""


def add_task_arguments(parser: argparse.ArgumentParser, *, text_required: bool) -> None:
    parser.formatter_class = SpecHelpFormatter
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
    how.add_argument("--rounds", type=int, metavar="N", help=SPEC_HELP)
    how.add_argument("--critic-persona", metavar="NAME|FILE.toml", help=SPEC_HELP)
    how.add_argument("--tie-breaker", nargs="?", const=OPTION_FLAGS["tie_breaker"].bare,
                     choices=TIE_BREAKERS, help=SPEC_HELP)
    how.add_argument("--seed", type=int, metavar="N", help=SPEC_HELP)
    how.add_argument("--strategy", metavar="NAME", help=SPEC_HELP)
    how.add_argument("--agents", type=int, metavar="N", help=SPEC_HELP)
    how.add_argument("--turns", type=int, metavar="T", help=SPEC_HELP)
    how.add_argument("--personas", metavar="NAME[,NAME]|FILE.toml",
                     help="personas cycled over the agents that take one (DEBATE's Critic, ChatEval's referees, "
                          "MATEval's evaluators, the single judge); default: the protocol's")
    how.add_argument("--swap", action="store_true", help=SPEC_HELP)
    how.add_argument("--samples", type=int, metavar="N", help=SPEC_HELP)
    how.add_argument("--logprobs", action="store_true", default=None, help=SPEC_HELP)
    how.add_argument("--evaluators", type=int, metavar="N", help=SPEC_HELP)
    how.add_argument("--no-feedback", action="store_true", help=SPEC_HELP)
    how.add_argument("--count-unlocated", action="store_true", help=SPEC_HELP)
    how.add_argument("--prompt-language", choices=("auto", "en", "zh"), help=SPEC_HELP)
    how.add_argument("--on-no-consensus", choices=("human", "majority", "tie", "undecided"), help=SPEC_HELP)
    how.add_argument("--criteria-variant", choices=VARIANTS, help=SPEC_HELP)
    how.add_argument("--jury", metavar="MODEL,MODEL[,...]", help=SPEC_HELP)
    how.add_argument("--jury-aggregate", choices=("mean", "median", "majority"), help=SPEC_HELP)
    add_generation_arguments(parser)
    models = parser.add_argument_group("models")
    models.add_argument("--model", metavar="MODEL",
                        help="any litellm model string, e.g. gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
                             "ollama/llama3.1")
    models.add_argument("--api-base", metavar="URL", help="base URL of an OpenAI-compatible server or proxy")
    models.add_argument("--demo", action="store_true",
                        help="use the offline demo model (no provider, not a real judgment)")
    models.add_argument("--agent-model", action="append", metavar="NAME=MODEL", default=[],
                        help="a model for one agent, e.g. 'Speaker 2=claude-3-5-haiku-latest' (repeatable; "
                             "the others use --model)")


def add_limit_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """Budget, timeout and retries of one run; each overrides its DEBATE_TUI_* variable and config.toml."""
    limits = parser.add_argument_group("limits")
    for setting in LIMITS:
        if setting.help is not None:
            add_setting(limits, setting)
    return limits


def add_setting(group: argparse._ArgumentGroup, setting: Setting, **how: Any) -> None:
    """A declared setting's flag: its name, type, metavar and help from the declaration (`settings`)."""
    group.add_argument(setting.flag, **{"type": setting.kind, "metavar": setting.metavar, "help": setting.help, **how})


def add_history_arguments(limits: argparse._ArgumentGroup) -> None:
    """How a long debate's older rounds are condensed; kept in the session (see `history_state`)."""
    limits.add_argument(
        "--max-history-tokens", type=int, metavar="N",
        help="condense older rounds once an agent's prompt passes N tokens "
             "(default: the model's context window when litellm knows it)")
    limits.add_argument(
        "--condense", choices=CONDENSE_MODES, default="summary",
        help="how older rounds are condensed: summary (written by one more call) or digest (no call: each older "
             "message becomes its speaker, opening words and answer line, summarized only if that does not fit; "
             "ChatEval's history and DEBATE's log)")


def add_generation_arguments(parser: argparse.ArgumentParser) -> None:
    """How replies are generated; each overrides `[generation]` in config.toml and its DEBATE_TUI_* variable, and
    a reply setting also a model's and a role's own (what a person types wins)."""
    generation = parser.add_argument_group("generation")
    for setting in GENERATION:
        if setting.name == "structured":  # its value may be left out: `--structured` alone is on
            add_setting(generation, setting, nargs="?", const="on", type=structured_value)
        else:
            add_setting(generation, setting)


def choices_from_args(args: argparse.Namespace) -> Choices:
    """The task flags as `Choices` for the session factory; InputError for a malformed `--agent-model`."""
    options = {flag.key: flag.value if flag.value is not None else value
               for dest, flag in OPTION_FLAGS.items() if (value := getattr(args, dest, None)) is not None
               and value is not False}  # a switch not given is no choice (and 0 is a value, though 0 == False)
    criteria = (getattr(args, "criteria", None) or "").strip()
    from_file = criteria.endswith(".toml")
    demo = bool(getattr(args, "demo", False))
    return Choices(
        protocol=getattr(args, "protocol", None),
        criteria=None if not criteria or from_file else [n.strip() for n in criteria.split(",") if n.strip()],
        criteria_file=criteria if from_file else None,
        personas=getattr(args, "personas", None),
        options=options,
        model=DEMO_MODEL if demo else getattr(args, "model", None),
        api_base=getattr(args, "api_base", None),
        demo=demo,
        agent_models=agent_models(getattr(args, "agent_model", None) or []),
        generation={key: value for key in GENERATION_FLAGS if (value := getattr(args, key, None)) is not None},
        inputs=text_refs(args),
    )


def agent_models(pairs: list[str]) -> dict[str, str]:
    """`--agent-model NAME=MODEL` values as a name -> model map."""
    chosen = {}
    for pair in pairs:
        name, sep, model = pair.partition("=")
        if not sep or not name.strip() or not model.strip():
            raise InputError(f"--agent-model: expected NAME=MODEL, got {pair!r}")
        chosen[name.strip()] = model.strip()
    return chosen


def text_refs(args: argparse.Namespace) -> dict[str, str]:
    """The texts given, as files or '-' (stdin), by input name."""
    return {key: ref for key in TEXT_FLAGS if (ref := getattr(args, key, None))}
