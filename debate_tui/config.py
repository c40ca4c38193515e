"""The user's configuration: config.toml, DEBATE_TUI_* environment variables and flags, merged.

One TOML file in the user config directory holds what a person wants every
time: the models (a default, one per role, and for each its server and the
*name* of the environment variable that holds its key), the default protocol
and its options, directories, theme, key map and limits. Each setting is
resolved on its own, the first that is set winning:

    command-line flag  >  DEBATE_TUI_* environment variable  >  config.toml  >  built-in default

`load_config()` reads the file with tomllib and validates it with pydantic; it
never imports litellm and is cached for as long as the file and the DEBATE_TUI_*
variables stay the same. A bad value raises ConfigError naming the setting and
where it came from (the file, the variable or the flag). Keys never live here:
a setting that looks like a key is refused before anything else is read.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import platformdirs
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, create_model

from debate_tui.choices import CONNECTION, DEFAULT_PROTOCOL
from debate_tui.inputs import ConfigError, InputError, check_api_base
from debate_tui.llm import DEFAULT_TIMEOUT_S
from debate_tui.llm.keys import KeySource, key_source
from debate_tui.locations import APP_NAME, config_path
from debate_tui.readfile import MissingFile, decode, parse_toml, read_bytes
from debate_tui.redact import redact
from debate_tui.registry import PROTOCOLS
from debate_tui.registry import ROLES as REGISTERED_ROLES
from debate_tui.store import SessionStore

if TYPE_CHECKING:
    import argparse

ROLES = tuple(REGISTERED_ROLES)
"""The agent roles a `[roles]` table may give a model of their own: those the protocols register."""

OVERRIDES: dict[str, tuple[str, ...]] = {
    "model": ("default_model",),
    **{f"{role}_model": ("roles", role) for role in ROLES},
    "protocol": ("protocol",),
    "personas_dir": ("personas_dir",),
    "criteria_dir": ("criteria_dir",),
    "sessions_dir": ("sessions_dir",),
    "cache_dir": ("cache_dir",),
    "theme": ("theme",),
    "max_cost": ("limits", "max_cost"),
    "max_tokens": ("limits", "max_tokens"),
    "timeout": ("limits", "timeout"),
    "retries": ("limits", "retries"),
    "retry_delay": ("limits", "retry_delay"),
    "concurrency": ("limits", "concurrency"),
    "max_reply_tokens": ("generation", "max_reply_tokens"),
    "temperature": ("generation", "temperature"),
    "structured": ("generation", "structured"),
}
"""The settings that can be given outside the file: name -> where it goes. The environment variable
DEBATE_TUI_<NAME> sets it (an empty one counts as unset), and so does a command's flag --<name>
(argparse destination <name>), for the commands that have one: DEBATE_TUI_TIMEOUT, --timeout."""


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_SECRET_NAME = re.compile(r"(?i)(^|_)(api_?key|key|token|secret|password|passwd|credentials?)$")


def setting_name(loc: tuple[str, ...]) -> str:
    """A setting as it is written in TOML: `limits.timeout`, `models."openai/x".api_base`."""
    return ".".join(toml_key(part) for part in loc)


def toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)


# ----- value checks ------------------------------------------------------------------


def _model_name(value: str) -> str:
    if not value or any(ch.isspace() for ch in value):
        raise ValueError("expected a litellm model string such as gpt-4o-mini or ollama/llama3.1 (no spaces)")
    return value


def _url(value: str) -> str:
    if not re.match(r"^https?://[^\s/]+\S*$", value):
        raise ValueError("expected an http:// or https:// URL, e.g. http://127.0.0.1:8000/v1")
    return check_api_base(value, "api_base")  # its InputError is a ValueError: reported like the others


def _env_name(value: str) -> str:
    if not _ENV_NAME.match(value):
        raise ValueError("expected the NAME of an environment variable, e.g. OPENAI_API_KEY (never the key itself)")
    return value


def _protocol(value: str) -> str:
    if value not in PROTOCOLS:
        raise ValueError(f"unknown protocol {value!r}; valid: {', '.join(PROTOCOLS)}")
    return value


def _existing_dir(path: Path) -> Path:
    if not path.is_dir():
        raise ValueError(f"{path} is not a directory")
    return path


ModelName = Annotated[str, AfterValidator(_model_name)]
RoleModel = Annotated[ModelName | None, Field(examples=["gpt-4o-mini"])]
ProtocolName = Annotated[str, AfterValidator(_protocol)]
UserPath = Annotated[Path, AfterValidator(Path.expanduser)]
InputDir = Annotated[Path, AfterValidator(Path.expanduser), AfterValidator(_existing_dir)]
Text = Annotated[str, Field(min_length=1)]


class Section(BaseModel):
    """A table of the file: unknown keys are errors, not silently ignored typos."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelSettings(Section):
    """A `[models."<model>"]` table: how to reach one model."""

    api_base: Annotated[str, AfterValidator(_url)] | None = None
    """Base URL of an OpenAI-compatible server or proxy, e.g. http://127.0.0.1:8000/v1; unset: the provider's own."""
    api_key_env: Annotated[str, AfterValidator(_env_name)] | None = None
    """NAME of the environment variable holding this model's key, read at call time; never the key itself.
    Unset: the variable litellm reads for the provider (OPENAI_API_KEY for gpt-4o-mini, ...)."""
    max_reply_tokens: Annotated[int, Field(gt=0)] | None = None
    """Tokens one reply of this model may have, over `[generation]` and the role's default."""
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    """This model's sampling temperature, over `[generation]`."""
    context_window: Annotated[int, Field(gt=0)] | None = None
    """The model's whole window in tokens (prompt and reply), for a model litellm does not know, e.g. a local
    server's `--n_ctx`; unset: litellm's model table, else unknown (no check before the call)."""

    def connection(self) -> dict[str, str]:
        """What an agent's call needs to reach the model: api_base and api_key_env."""
        return self.model_dump(include=set(CONNECTION), exclude_none=True)


class Deployment(Section):
    """One `[[deployments."<group>"]]` entry: a server, key or region serving the model group <group>.

    A batch (and a run) asking for model <group> goes through litellm's Router over all of them:
    the load is spread, each one's rpm/tpm is kept, and one that fails is cooled down for a while."""

    model: ModelName
    """The litellm model string of this deployment, e.g. openai/llama3.1 or azure/gpt-4o-mini."""
    api_base: Annotated[str, AfterValidator(_url)] | None = None
    """Where it is served; unset: the provider's own."""
    api_key_env: Annotated[str, AfterValidator(_env_name)] | None = None
    """NAME of the environment variable holding its key (never the key); unset: litellm's usual one."""
    rpm: Annotated[int, Field(gt=0)] | None = None
    """Requests per minute it takes; the Router sends no more."""
    tpm: Annotated[int, Field(gt=0)] | None = None
    """Tokens per minute it takes; the Router sends no more."""


if TYPE_CHECKING:  # a model built from the registered roles: mypy knows it as the Section it is
    RoleModels = Section
else:
    RoleModels = create_model(
        "RoleModels", __base__=Section,
        __doc__="The `[roles]` table: a model per agent role, instead of default_model for that role.",
        **{role: (RoleModel, Field(None, description=f"{who}.")) for role, who in REGISTERED_ROLES.items()})


DEFAULT_CONCURRENCY = 8
"""Batch items in flight at once unless `--concurrency` or `[limits]` says otherwise."""


class Limits(Section):
    """The `[limits]` table: what one run may spend, and how calls are timed and retried."""

    max_cost: Annotated[float, Field(gt=0)] | None = None
    """Budget of one run in US dollars; unset: no limit."""
    max_tokens: Annotated[int, Field(gt=0)] | None = None
    """Budget of one run in tokens (prompt and completion); unset: no limit."""
    timeout: float = Field(DEFAULT_TIMEOUT_S, gt=0)
    """Seconds one model call may take, streaming included: at this deadline the reply so far is kept."""
    retries: int = Field(4, ge=1, le=20)
    """Attempts per model call, the first included."""
    retry_delay: float = Field(1.0, ge=0, le=60)
    """Seconds before the first retry, doubled for each next one (a server's Retry-After wins)."""
    concurrency: int = Field(DEFAULT_CONCURRENCY, ge=1, le=256)
    """Items in flight at once in batch runs (each item's calls follow one another, or run in parallel
    where a protocol's agents speak at once)."""


class RoleGeneration(Section):
    """A `[generation.roles.<role>]` table."""

    max_reply_tokens: Annotated[int, Field(gt=0)] | None = None
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None


def _known_roles(table: dict[str, RoleGeneration]) -> dict[str, RoleGeneration]:
    unknown = sorted(set(table) - set(ROLES))
    if unknown:
        raise ValueError(f"unknown role {unknown[0]!r}; valid: {', '.join(ROLES)}")
    return table


class GenerationSettings(Section):
    """The `[generation]` table: how every reply is generated (per model: `[models."<model>"]`)."""

    max_reply_tokens: Annotated[int, Field(gt=0)] | None = None
    """Tokens one reply may have, sent as max_tokens and enforced on the stream; unset: per role, 512
    (a MATEval evaluator 768, a summarizer 1,536)."""
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    """Sampling temperature; unset: 0 for judging turns, 1 for the single judge's `--samples` above 1."""
    structured: bool | Literal["auto"] = False
    """Ask the answer line as a small JSON object: "auto" where the provider can constrain it to a schema
    (litellm says so, or your own server takes one), true also from a hosted model litellm does not know."""
    roles: Annotated[dict[str, RoleGeneration], AfterValidator(_known_roles)] = Field(default_factory=dict)
    """Per agent role, e.g. `[generation.roles.summarizer]` max_reply_tokens = 2048."""


class Config(Section):
    """The whole configuration, as resolved from flags, environment, file and defaults."""

    default_model: ModelName | None = Field(None, examples=["gpt-4o-mini"])
    """The litellm model every agent uses unless its role has one; unset: the offline demo model."""
    roles: RoleModels = Field(default_factory=RoleModels)
    """A model per agent role."""
    models: dict[ModelName, ModelSettings] = Field(default_factory=dict)
    """Per model string: its api_base and the environment variable holding its key."""
    deployments: dict[ModelName, list[Deployment]] = Field(default_factory=dict)
    """Model groups served by several deployments (replicas, keys, regions), each with its rate limits."""
    protocol: ProtocolName = DEFAULT_PROTOCOL
    """The evaluation protocol used when none is given."""
    protocols: dict[ProtocolName, dict[str, Any]] = Field(default_factory=dict)
    """Per protocol: default options (e.g. `[protocols.debate]` rounds = 4); flags override them."""
    personas_dir: InputDir | None = None
    """A directory of your own persona TOML files."""
    criteria_dir: InputDir | None = None
    """A directory of your own criteria TOML files."""
    sessions_dir: UserPath = Field(default_factory=lambda: platformdirs.user_data_path(APP_NAME) / "sessions")
    """Where session files (and their reports) are saved."""
    cache_dir: UserPath = Field(default_factory=lambda: platformdirs.user_cache_path(APP_NAME))
    """Where the response cache lives."""
    theme: Text | None = None
    """The TUI theme by name; unset: the TUI's default."""
    keymap: dict[str, Text] = Field(default_factory=dict)
    """TUI key bindings: binding id -> keys, e.g. "debate.pause" = "ctrl+space" (read by the TUI)."""
    limits: Limits = Field(default_factory=Limits)
    """Budgets, timeout, retries and concurrency."""
    generation: GenerationSettings = Field(default_factory=GenerationSettings)
    """Per-reply token cap, temperature and answer format."""

    def session_store(self, root: Path | None = None) -> SessionStore:
        """The sessions directory (`root`, else `sessions_dir`) with its listing's index in `cache_dir`."""
        return SessionStore(root or self.sessions_dir, self.cache_dir / "session-index")

    def role_models(self) -> dict[str, str]:
        """The roles that have a model of their own."""
        return {role: model for role, model in self.roles.model_dump().items() if model}

    def model_params(self, model: str) -> dict[str, str]:
        """The agent params configured for `model`: `api_base` and `api_key_env` (a variable name, never a key)."""
        settings = self.models.get(model)
        return settings.connection() if settings else {}

    def used_models(self) -> dict[str, list[str]]:
        """Every configured model -> what uses it ("default", role names); `[models]` entries too, maybe unused."""
        users: dict[str, list[str]] = {}
        if self.default_model:
            users[self.default_model] = ["default"]
        for role, model in self.role_models().items():
            users.setdefault(model, []).append(role)
        for model in self.models:
            users.setdefault(model, [])
        return users

    def key_source(self, model: str) -> KeySource:
        """Which environment variable `model`'s key is read from, and why that one."""
        named = self.models.get(model)
        return key_source(model, named.api_key_env if named else None, f"api_key_env of models.{toml_key(model)}")


@dataclass(frozen=True)
class Resolved:
    """A configuration with where each of its values came from, for `config show` and error messages."""

    config: Config
    path: Path
    """The config file, whether or not it exists."""
    exists: bool
    origins: dict[tuple[str, ...], str]
    """Setting path -> "file", "environment variable NAME" or "flag --name"; absent: the default."""


# ----- resolution --------------------------------------------------------------------


def _read_bytes(path: Path) -> bytes | None:
    """The file's bytes, None when there is none; bounded and checked (`readfile`: DEBATE_TUI_MAX_TOML_BYTES,
    never a device or FIFO)."""
    try:
        return read_bytes(path, "toml")
    except MissingFile:
        return None
    except InputError as exc:
        raise ConfigError(str(exc)) from None


def parse_file(path: Path, raw: bytes | None) -> dict[str, Any] | None:
    """The file's tables, or None when there is no file."""
    if raw is None:
        return None
    try:
        return parse_toml(decode(raw, str(path)), str(path))
    except InputError as exc:
        raise ConfigError(str(exc)) from None


def _secrets(table: Mapping[str, Any], loc: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """Settings whose name or value looks like a key, with the reason (never the value)."""
    for key, value in table.items():
        here = (*loc, str(key))
        values = value if isinstance(value, list) else [value]
        if redact(str(key)) != str(key):
            yield here, "this name looks like a key"
        elif isinstance(value, dict):
            yield from _secrets(value, here)
        elif loc[:1] != ("keymap",) and _SECRET_NAME.search(str(key)):
            yield here, "a key setting is not allowed"
        elif any(isinstance(item, str) and redact(item) != item for item in values):
            yield here, "the value looks like a key"


def _leaves(table: Mapping[str, Any], loc: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _leaves(value, (*loc, key))
        else:
            yield (*loc, key), value


def _put(data: dict[str, Any], loc: tuple[str, ...], value: Any) -> bool:
    """Set a nested value; False when the file made a parent something other than a table (its error wins)."""
    node = data
    for key in loc[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            return False
    node[loc[-1]] = value
    return True


def _problem(path: Path, error: Mapping[str, Any], origins: Mapping[tuple[str, ...], str]) -> str:
    loc = tuple(str(part) for part in error["loc"] if part != "[key]")
    origin = origins.get(loc) or next((o for p, o in origins.items() if p[: len(loc)] == loc), "file")
    message = "unknown setting" if error["type"] == "extra_forbidden" else error["msg"].removeprefix("Value error, ")
    return f"{path if origin == 'file' else origin}: {setting_name(loc)}: {message}"


def resolve(path: Path, file_data: Mapping[str, Any] | None, env: Mapping[str, str],
            flags: Mapping[str, Any]) -> Resolved:
    """Merge the layers, highest last, and validate the result; ConfigError lists every problem."""
    found = sorted(_secrets(file_data or {}))
    if found:
        raise ConfigError("\n".join(
            f"{path}: {redact(setting_name(loc))}: {why}. Keys never go in the config file: keep the key in an "
            f"environment variable and name that variable, e.g. api_key_env = \"OPENAI_API_KEY\" "
            f"in a [models.\"<model>\"] table" for loc, why in found))
    data: dict[str, Any] = copy.deepcopy(dict(file_data or {}))
    origins = {loc: "file" for loc, _ in _leaves(data)}
    layers = [(f"environment variable {env_var(name)}", setting, env.get(env_var(name)) or None)
              for name, setting in OVERRIDES.items()]
    layers += [(f"flag {flag(name)}", setting, flags.get(name)) for name, setting in OVERRIDES.items()]
    for origin, setting, value in layers:
        if value is not None and _put(data, setting, value):
            origins[setting] = origin
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError("\n".join(_problem(path, error, origins) for error in exc.errors())) from None
    return Resolved(config, path, file_data is not None, origins)


def _env() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name.startswith("DEBATE_TUI_")}


def resolve_current(flags: Mapping[str, Any]) -> Resolved:
    """The configuration of this process: its config file, its environment and the given flags."""
    path = config_path()
    return resolve(path, parse_file(path, _read_bytes(path)), _env(), flags)


_last: tuple[tuple[Any, ...], Config] | None = None


def load_config() -> Config:
    """File, environment and defaults (no flags); parsed again only when the file or a DEBATE_TUI_* variable changed."""
    global _last
    path = config_path()
    raw = _read_bytes(path)
    env = _env()
    key = (path, raw, tuple(sorted(env.items())))
    if _last is None or _last[0] != key:
        _last = (key, resolve(path, parse_file(path, raw), env, {}).config)
    return _last[1]


def env_var(name: str) -> str:
    return f"DEBATE_TUI_{name.upper()}"


def flag(name: str) -> str:
    return f"--{name.replace('_', '-')}"


def flag_values(args: argparse.Namespace) -> dict[str, Any]:
    """The configuration flags a command was given (those it has and that were used)."""
    return {name: value for name in OVERRIDES if (value := getattr(args, name, None)) is not None}


def effective_config(args: argparse.Namespace) -> Config:
    """Flags over environment over file over defaults, for one command's arguments."""
    flags = flag_values(args)
    return resolve_current(flags).config if flags else load_config()
