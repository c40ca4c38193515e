"""What a person chose for a run, and the one rule that decides which source a choice comes from.

`Choices` is the run's specification as every front end gives it (flags, the
setup form, a batch): immutable, so a form edits a copy with one field changed
(`dataclasses.replace`). `resolve` builds it from its sources in the one
precedence order, recording where each value came from (`Choices.origins`, read
by the setup form's hover and `config show`). Resolved, it also carries what the
configuration gives a run beyond a person's choices (`CONFIGURED`: option and
generation defaults, role models, each model's settings, the catalog's
directories), so the session factory builds from it alone and a session keeps
it (`Session.spec`) for a resume, a replay or a trust policy's tier. Plain data
without pydantic, so the TUI can resolve its first frame before anything heavy
is imported; the session factory checks the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from debate_tui.precedence import Layer, first, order, ranked

if TYPE_CHECKING:
    from debate_tui.domain import Criterion

DEFAULT_PROTOCOL = "debate"
COMMAND_LINE = Layer.TYPED
REMEMBERED = Layer.REMEMBERED
DEFAULT = Layer.DEFAULT

CONNECTION = ("api_base", "api_key_env")
"""The settings of a model (`model_settings`) an agent's call needs to reach it (a key variable's NAME, never a key)."""
STRUCTURED: dict[str, bool | str] = {"auto": "auto", "on": True, "off": False}
"""How a person names `generation.structured` (`--structured`, the setup form) -> its value."""

PROTOCOL_BOUND = frozenset({"options", "criteria", "agent_models", "agent_personas"})
"""What a source chose for its own protocol: not carried over to another protocol."""
CONFIGURED = frozenset({"default_model", "option_defaults", "generation_defaults", "role_models", "model_settings",
                        "criteria_dir", "personas_dir"})
"""What only the configuration gives (config.toml, DEBATE_TUI_* variables, their flags): never remembered, since
the configuration gives it again."""
TABLES = frozenset({"options", "agent_models", "agent_personas", "generation", "inputs", "option_defaults",
                    "generation_defaults", "role_models", "model_settings"})
"""Choices made key by key: a higher source's key wins, the others' keys stay."""


@dataclass(frozen=True)
class Choices:
    protocol: str | None = None
    """None: `protocol` in the configuration."""
    criteria: Sequence[str] | None = None
    """Criterion names as typed, bare or qualified (or names of `custom_criteria`); None: the protocol's."""
    criteria_file: str | None = None
    """A TOML file of criteria (`--criteria FILE.toml`), judged instead of `criteria`."""
    custom_criteria: Sequence[Criterion] = ()
    """Criteria written or loaded in the TUI, picked by name in `criteria`."""
    personas: str | None = None
    """`--personas`: names or a TOML file, cycled over the agents that take one."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Protocol options by key, only those given; over `[protocols.<name>]` in the configuration."""
    model: str | None = None
    """Every agent's model unless its name or role has one; None: `default_model`, else the demo."""
    api_base: str | None = None
    demo: bool = False
    """The offline demo model for every agent, whatever is configured (`--demo`; a form sets `model`)."""
    agent_models: Mapping[str, str] = field(default_factory=dict)
    """Agent name (as a person may type it) -> model."""
    agent_personas: Mapping[str, str] = field(default_factory=dict)
    """Agent name -> persona name, over the protocol's default persona."""
    generation: Mapping[str, Any] = field(default_factory=dict)
    """Reply cap, temperature, structured answers (`Generation`'s fields), only those given (a flag, the form): over
    every configured layer, a model's own `[models."<model>"]` included (`Generation.typed`)."""
    inputs: Mapping[str, str] = field(default_factory=dict)
    """Input name (text, text_b, source, context) -> the file it is read from ('-': stdin)."""
    default_model: str | None = None
    """`default_model`: the model when `model` is left empty (a form's cleared box); None: the demo."""
    option_defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Protocol -> its options in config.toml (`[protocols.<name>]`), under `options`."""
    generation_defaults: Mapping[str, Any] = field(default_factory=dict)
    """`[generation]` with its variables and flags (`Generation`'s fields and `roles`), under `generation`."""
    role_models: Mapping[str, str] = field(default_factory=dict)
    """Agent role -> model (`[roles]`), under `agent_models`."""
    model_settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Model -> its `[models."<model>"]` table: api_base, api_key_env (a variable's NAME, never a key),
    context_window, max_reply_tokens, temperature."""
    criteria_dir: str | None = None
    """A directory of the person's own criteria files."""
    personas_dir: str | None = None
    """A directory of the person's own persona files."""
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)
    """Where each value came from, by field (and `field.key` for a table's keys): "command line",
    "environment variable DEBATE_TUI_MODEL", "config.toml (PATH)", `REMEMBERED` or `DEFAULT`."""

    def __post_init__(self) -> None:
        for name in ("criteria", "custom_criteria"):  # lists given become tuples: nothing shared is changed
            if isinstance(value := getattr(self, name), list):
                object.__setattr__(self, name, tuple(value))

    @property
    def text_path(self) -> str:
        """The file the text to judge was read from, as a form offers it again (stdin is no file)."""
        path = self.inputs.get("text", "")
        return "" if path == "-" else path

    def saved(self) -> dict[str, Any]:
        """The choices as a person would have them again (`ui-state.json`): set values only, no origins, nothing
        only the configuration gives."""
        return {name: value for name, value in self.data().items() if name not in CONFIGURED and name != "origins"}

    def configured_changes(self, now: Choices) -> list[str]:
        """What the configuration gives differently `now` than it gave this spec (a session's, resumed later);
        what the command line gave either is no change of the configuration."""
        return sorted(name for name in CONFIGURED if self._configured(name) != now._configured(name))

    def _configured(self, name: str) -> Any:
        """A field as the configuration gave it: without what came from the command line."""
        value = getattr(self, name)
        if name not in TABLES:
            return None if self.origins.get(name) == COMMAND_LINE else value
        return {key: item for key, item in value.items() if self.origins.get(f"{name}.{key}") != COMMAND_LINE}

    def data(self) -> dict[str, Any]:
        """The whole resolved spec as a session keeps it: set values and their origins (key NAMES, never keys).

        Worked out once (read it, do not change it): a batch's every item session holds the same spec.
        """
        return self._data

    @cached_property
    def _data(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if value not in (None, False, "", (), {}):
                data[name] = dict(value) if isinstance(value, Mapping) else value
        return data


@dataclass(frozen=True)
class Source:
    """One place choices come from: where (told on the form's hover) and the fields it sets (None: not set)."""

    origin: str
    values: Mapping[str, Any] = field(default_factory=dict)
    named: Mapping[str, str] = field(default_factory=dict)
    """Field (or `field.key` of a table) -> its own origin where it differs from `origin` (each environment
    variable is named)."""

    @classmethod
    def of(cls, origin: str, choices: Choices) -> Source:
        """A whole `Choices` as a source: what it leaves at its default sets nothing."""
        return cls(origin, {name: getattr(choices, name) for name in choices.__dataclass_fields__ if name != "origins"})


def resolve(command_line: Source, environment: Source, config_file: Source, remembered: Source, default: Source, *,
            config_newer: bool) -> Choices:
    """The sources merged in `precedence.order` (config.toml under the remembered setup when it was saved before
    it, `config_newer` False: what a person set last wins)."""
    by_layer = {Layer.TYPED: command_line, Layer.ENVIRONMENT: environment, Layer.CONFIG_FILE: config_file,
                Layer.REMEMBERED: remembered, Layer.DEFAULT: default}
    return merged(ranked(by_layer, order(config_newer=config_newer)))


def merged(sources: Sequence[Source]) -> Choices:
    """The first source that sets a field wins it (a table: key by key); a source's protocol-bound choices
    count only for the protocol chosen."""
    protocol = first((source.values.get("protocol") for source in sources), is_set=bool)
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for name in dict.fromkeys(name for source in sources for name in source.values):
        offering = [source for source in sources if _offers(source, name, protocol)]
        if name in TABLES:
            keys = dict.fromkeys(key for source in offering for key in source.values[name])
            winners = {key: won for key in keys
                       if (won := first(source for source in offering if key in source.values[name])) is not None}
            values[name] = {key: won.values[name][key] for key, won in winners.items()}
            origins.update({f"{name}.{key}": won.named.get(f"{name}.{key}") or won.named.get(name, won.origin)
                            for key, won in winners.items()})
            if (holder := first(source for source in offering if source.values[name])) is not None:
                origins[name] = holder.named.get(name, holder.origin)
        elif (won := first(offering)) is not None:
            values[name], origins[name] = won.values[name], won.named.get(name, won.origin)
    return Choices(**values, origins=origins)


def _offers(source: Source, name: str, protocol: str | None) -> bool:
    """Whether `source` sets `name`: a value that sets something, for the protocol chosen if it is bound to one."""
    own = source.values.get("protocol")
    return not _unset(source.values.get(name)) and not (name in PROTOCOL_BOUND and own and own != protocol)


def _unset(value: Any) -> bool:
    """A source's value that sets nothing (an empty string does: config.toml's model brings its own API base)."""
    return value is None or value is False or (isinstance(value, tuple | list) and not value)
