"""The configuration's schema: the tables of config.toml as pydantic models, each value checked.

Unknown keys are errors (a typo is not silently ignored); the bounds of every setting declared in
`debate_tui.settings` come from there (`Setting.field`), and the reply settings (`max_reply_tokens`,
`temperature`) have one schema at every layer (`generation.ReplySettings`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import platformdirs
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, create_model

from debate_tui.choices import CONNECTION, DEFAULT_PROTOCOL
from debate_tui.generation import GenerationSettings, ReplySettings
from debate_tui.inputs import check_api_base
from debate_tui.llm import DEFAULT_TIMEOUT_S
from debate_tui.llm.keys import KeySource, key_source
from debate_tui.locations import APP_NAME
from debate_tui.registry import PROTOCOLS
from debate_tui.registry import ROLES as REGISTERED_ROLES
from debate_tui.settings import DEFAULT_CONCURRENCY, SETTINGS
from debate_tui.store import SessionStore

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


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


class ModelSettings(ReplySettings):
    """A `[models."<model>"]` table: how to reach one model, and its own reply settings (over `[generation]` and
    the role's; under what a person types)."""

    api_base: Annotated[str, AfterValidator(_url)] | None = None
    """Base URL of an OpenAI-compatible server or proxy, e.g. http://127.0.0.1:8000/v1; unset: the provider's own."""
    api_key_env: Annotated[str, AfterValidator(_env_name)] | None = None
    """NAME of the environment variable holding this model's key, read at call time; never the key itself.
    Unset: the variable litellm reads for the provider (OPENAI_API_KEY for gpt-4o-mini, ...)."""
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


class Limits(Section):
    """The `[limits]` table: what one run may spend, and how calls are timed and retried (`settings.LIMITS`)."""

    max_cost: float | None = SETTINGS["max_cost"].field()
    max_tokens: int | None = SETTINGS["max_tokens"].field()
    timeout: float = SETTINGS["timeout"].field(DEFAULT_TIMEOUT_S)
    retries: int = SETTINGS["retries"].field(4)
    retry_delay: float = SETTINGS["retry_delay"].field(1.0)
    concurrency: int = SETTINGS["concurrency"].field(DEFAULT_CONCURRENCY)


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
    export_dir: UserPath | None = None
    """Where the TUI's export dialog offers to write (the path stays editable); unset: the current directory."""
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


