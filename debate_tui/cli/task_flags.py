"""The task options shared by `debate-tui run`, `batch` and the TUI: their flags, and the `Choices` they make.

The flags of protocol options are generated from the protocols' specs (`option_flags`): each option field is a
flag, its name, type, choices, default and help the field's, as the TUI's option form builds its fields. The
specs import pydantic, so the TUI reads a command line without them first (`cli.tui.quick_parse`).
"""

from __future__ import annotations

import argparse
import functools
import types
import typing
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from debate_tui.choices import STRUCTURED, Choices
from debate_tui.inputs import InputError
from debate_tui.llm import DEMO_MODEL
from debate_tui.registry import PROTOCOLS
from debate_tui.settings import GENERATION, LIMITS, Setting

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

TEXT_FLAGS = {"text": "--text", "text_b": "--text-b", "source": "--source", "context": "--context"}
GENERATION_FLAGS = tuple(setting.name for setting in GENERATION)
"""argparse destinations of the generation flags, named as `Generation`'s fields."""


@dataclass(frozen=True)
class OptionFlag:
    """The flag of a protocol option, as the specs that have the option declare it.

    A switch (a bool option) sets `value`: `--swap` true, `--no-feedback` false for an option that defaults to
    true. `bare` is the value of a flag given alone (`--tie-breaker`: agent)."""

    key: str
    dest: str
    kind: type
    value: bool | None = None
    choices: tuple[Any, ...] | None = None
    metavar: str | None = None
    bare: str | None = None

    @property
    def name(self) -> str:
        return f"--{self.dest.replace('_', '-')}"

    def merged(self, other: OptionFlag) -> OptionFlag:
        """One flag for an option two protocols have: the same flag; choices only where they have the same (the
        strategies of ChatEval and MATEval differ: the protocol's own check then names the one it takes)."""
        if replace(other, choices=self.choices) != self:
            raise ValueError(f"protocols declare {self.name} differently: give the option another name in one")
        return self if other.choices == self.choices else replace(self, choices=None)

    def argument(self) -> dict[str, Any]:
        """`add_argument`'s keywords; a switch keeps True when given, its option value is `value`."""
        if self.value is not None:
            return {"action": "store_true", "default": None}
        spelled: dict[str, Any] = {"type": self.kind, "choices": self.choices, "metavar": self.metavar}
        return {**spelled, "nargs": "?", "const": self.bare} if self.bare is not None else spelled


def flag_of(key: str, info: FieldInfo) -> OptionFlag:
    """The flag of one option field: its type (None allowed) and `Flag` metadata (see `protocols.spec.Flag`)."""
    from debate_tui.protocols.spec import Flag

    declared = next((m for m in info.metadata if isinstance(m, Flag)), Flag())
    kind: Any = info.annotation
    if typing.get_origin(kind) in (typing.Union, types.UnionType):  # `int | None`: the flag takes an int
        kind = next(t for t in typing.get_args(kind) if t is not type(None))
    choices = typing.get_args(kind) if typing.get_origin(kind) is typing.Literal else None
    kind = type(choices[0]) if choices else kind
    if kind is bool:
        return OptionFlag(key, key if not info.default else f"no_{key}", bool, value=not info.default)
    metavar = declared.metavar or (None if choices else "N" if kind in (int, float) else "NAME")
    return OptionFlag(key, key, kind, choices=choices, metavar=metavar, bare=declared.bare)


@functools.cache
def option_flags() -> dict[str, OptionFlag]:
    """argparse destination -> the protocol option flag, for every option of every registered protocol."""
    from debate_tui.protocols import all_protocols

    flags: dict[str, OptionFlag] = {}
    for spec in all_protocols().values():
        for key, info in spec.options.model_fields.items():
            made = flag_of(key, info)
            flags[made.dest] = flags[made.dest].merged(made) if made.dest in flags else made
    return flags


def spelled_out(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """A flag whose value may be left out, alone right before a positional (`batch --tie-breaker in.jsonl`), takes
    its value for the flag alone: argparse would take the file for the flag's value, so the flag is spelled out
    (`--tie-breaker=agent`). Which flags those are, the command's parser says."""
    optional = {name: action for action in _actions(parser) if action.nargs == "?" and action.const is not None
                for name in action.option_strings}
    fixed = list(argv)
    for i, following in enumerate(argv[1:], start=1):
        positional = following == "-" or not following.startswith("-")  # "-": batch's standard input
        if (action := optional.get(argv[i - 1])) and positional and not _takes(action, following):
            fixed[i - 1] = f"{argv[i - 1]}={action.const}"
    return fixed


def _actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """Every action of the parser and of its sub-commands (argparse offers no public way to list them)."""
    found = []
    for action in parser._actions:
        found.append(action)
        if isinstance(action, argparse._SubParsersAction):
            found += [nested for sub in action.choices.values() for nested in _actions(sub)]
    return found


def _takes(action: argparse.Action, value: str) -> bool:
    """Whether `value` is one the flag takes (its type reads it and it is one of its choices)."""
    try:
        read = action.type(value) if callable(action.type) else value
    except (argparse.ArgumentTypeError, TypeError, ValueError):
        return False
    return action.choices is None or read in action.choices


def structured_value(value: str) -> bool | str:
    """`--structured VALUE` as `Generation.structured`."""
    if value not in STRUCTURED:
        raise argparse.ArgumentTypeError(f"invalid choice: {value!r} (choose from {', '.join(STRUCTURED)})")
    return STRUCTURED[value]


def option_help(dest: str) -> str:
    """A protocol option flag's help, from every spec that has the option (their help, default and range)."""
    from annotated_types import Ge, Le

    from debate_tui.protocols import all_protocols

    flag = option_flags()[dest]
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


def add_option_arguments(group: argparse._ArgumentGroup) -> None:
    """A flag for every protocol option, generated from the specs (`option_flags`)."""
    for flag in option_flags().values():
        group.add_argument(flag.name, dest=flag.dest, help=option_help(flag.dest).replace("%", "%%"), **flag.argument())


CONDENSE_MODES = ("summary", "digest")
"""engine.condense.CondenseMode's values (not imported: the TUI's parser stays light before its first frame)."""

def add_task_arguments(parser: argparse.ArgumentParser, *, text_required: bool, protocol_options: bool = True) -> None:
    """What to judge, how (`protocol_options`: with every protocol option's flag), the generation and the models."""
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
    how.add_argument("--personas", metavar="NAME[,NAME]|FILE.toml",
                     help="personas cycled over the agents that take one (DEBATE's Critic, ChatEval's referees, "
                          "MATEval's evaluators, the single judge); default: the protocol's")
    if protocol_options:
        add_option_arguments(how)
    else:  # `choices_from_args` then reads no option flag, and needs no spec to know there is none
        parser.set_defaults(protocol_options=False)
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
        if setting.help is not None and setting.elsewhere is None:  # batch takes --concurrency alone
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
    flags = option_flags() if getattr(args, "protocol_options", True) else {}  # False: read without them
    options = {flag.key: flag.value if flag.value is not None else value
               for dest, flag in flags.items() if (value := getattr(args, dest, None)) is not None
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
