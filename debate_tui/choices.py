"""What a person chose for a run, as given by any front end: flags, the setup form or a batch.

Nothing here is checked or resolved: the session factory (`debate_tui.factory`)
does that, once, for every front end. Plain data without pydantic, so the TUI
can carry the command line's choices to its first frame cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debate_tui.domain import Criterion


@dataclass
class Choices:
    protocol: str | None = None
    """None: `protocol` in the configuration."""
    criteria: list[str] | None = None
    """Criterion names as typed, bare or qualified (or names of `custom_criteria`); None: the protocol's."""
    criteria_file: str | None = None
    """A TOML file of criteria (`--criteria FILE.toml`), judged instead of `criteria`."""
    custom_criteria: list[Criterion] = field(default_factory=list)
    """Criteria written or loaded in the TUI, picked by name in `criteria`."""
    personas: str | None = None
    """`--personas`: names or a TOML file, cycled over the agents that take one."""
    options: dict[str, Any] = field(default_factory=dict)
    """Protocol options by key, only those given; over `[protocols.<name>]` in the configuration."""
    model: str | None = None
    """Every agent's model unless its name or role has one; None: `default_model`, else the demo."""
    api_base: str | None = None
    demo: bool = False
    """The offline demo model for every agent, whatever is configured."""
    agent_models: dict[str, str] = field(default_factory=dict)
    """Agent name (as a person may type it) -> model."""
    agent_personas: dict[str, str] = field(default_factory=dict)
    """Agent name -> persona name, over the protocol's default persona."""
    generation: dict[str, Any] = field(default_factory=dict)
    """Reply cap, temperature, structured answers (`Generation`'s fields), only those given; over `[generation]`."""
