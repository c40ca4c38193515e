"""How replies are generated: the per-reply token cap, the temperature and the answer format.

One `Generation` holds what the person asked for (flags over DEBATE_TUI_*
variables over config.toml); `apply` turns it into each agent's call
parameters (`max_tokens`, `temperature`), and `record` keeps it in the
session's options, so a report and a resume say how the replies were made.

Which value an agent gets is `precedence.REPLY_ORDER`'s: what a person typed
(`--max-reply-tokens`, `--temperature`, the setup form), then the most
specific configured place, then the built-in default.

The built-in cap fits each role's longest legitimate reply: a MATEval
summarizer writes a report per error type (1,536 tokens), an evaluator lists
located errors (768), everyone else argues and gives one answer line (512).
The built-in temperature is 0 for judging turns; a protocol that samples
(the single judge with `--samples` above 1) keeps its documented temperature.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from debate_tui.domain import AgentSpec
from debate_tui.precedence import REPLY_ORDER, Layer, Scope, first, ranked
from debate_tui.settings import ROLES, SETTINGS

DEFAULT_REPLY_TOKENS = 512
"""The cap of a role not in ROLE_REPLY_TOKENS: an argument and one answer line."""
ROLE_REPLY_TOKENS: dict[str, int] = {"evaluator": 768, "summarizer": 1536}
"""Roles whose legitimate replies run longer: MATEval's located error lists and its final report."""
JUDGING_TEMPERATURE = 0.0
RECORDED = ("max_reply_tokens", "temperature", "structured")
"""The fields kept in `session.options` (their effect per agent is in each agent's params)."""


class ReplySettings(BaseModel):
    """One layer of reply settings: `[models."<model>"]`, `[generation.roles.<role>]`, `[generation]`, or what
    a person typed. The one schema of every layer, its fields declared in `settings.REPLY`. None: not set here."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_reply_tokens: int | None = SETTINGS["max_reply_tokens"].field()
    temperature: float | None = SETTINGS["temperature"].field()


def _known_roles(table: dict[str, ReplySettings]) -> dict[str, ReplySettings]:
    unknown = sorted(set(table) - set(ROLES))
    if unknown:
        raise ValueError(f"unknown role {unknown[0]!r}; valid: {', '.join(ROLES)}")
    return table


class GenerationSettings(ReplySettings):
    """The `[generation]` table: how every reply is generated (per model: `[models."<model>"]`)."""

    structured: bool | Literal["auto"] = SETTINGS["structured"].field(False)
    roles: Annotated[dict[str, ReplySettings], AfterValidator(_known_roles)] = Field(default_factory=dict)
    """Per agent role, e.g. `[generation.roles.summarizer]` max_reply_tokens = 2048."""


class Generation(GenerationSettings):
    """The generation settings of a run, recorded in the session's options."""

    models: dict[str, ReplySettings] = Field(default_factory=dict)
    """Per model string (`[models."<model>"]` max_reply_tokens, temperature)."""
    typed: ReplySettings = Field(default_factory=ReplySettings)
    """What a person typed (a flag, the setup form): over every configured layer, the model's own included."""

    def reply_tokens(self, agent: AgentSpec) -> int:
        """The cap of `agent`'s replies."""
        return self._pick(agent, "max_reply_tokens") or ROLE_REPLY_TOKENS.get(agent.role, DEFAULT_REPLY_TOKENS)

    def temperature_for(self, agent: AgentSpec) -> float:
        """`agent`'s temperature: a set one, else the protocol's own (sampling), else 0."""
        chosen = self._pick(agent, "temperature")
        if chosen is not None:
            return chosen
        return float(agent.params.get("temperature", JUDGING_TEMPERATURE))

    def _pick(self, agent: AgentSpec, name: str) -> Any:
        by_layer = {Layer.TYPED: self.typed, Scope.MODELS: self.models.get(agent.model),
                    Scope.ROLES: self.roles.get(agent.role), Scope.GENERATION: self}
        return first(getattr(layer, name) for layer in ranked(by_layer, REPLY_ORDER) if layer is not None)

    def apply(self, agents: list[AgentSpec]) -> None:
        """Put each agent's cap and temperature in its call parameters."""
        for agent in agents:
            agent.params["max_tokens"] = self.reply_tokens(agent)
            agent.params["temperature"] = self.temperature_for(agent)

    def record(self, options: dict[str, Any]) -> None:
        """Keep the run-wide settings in a session's options."""
        options.update(self.model_dump(include=set(RECORDED)))

    @classmethod
    def recorded(cls, options: dict[str, Any]) -> Generation:
        """The settings a session was started with (defaults for a session from before they were kept)."""
        return cls.model_validate({key: options[key] for key in RECORDED if key in options})
