"""A run's choices resolved from every source, for every front end: flags, the environment, config.toml,
the remembered setup and the defaults (the order itself is `choices.resolve`'s, and only there).

The configuration's part of a run (its protocol, model and that model's API base) is read here from a
`Resolved` configuration, which knows whether each value came from an environment variable, the file or
a flag; the flags' own part is the front end's `Choices` (`COMMAND_LINE`).
"""

from __future__ import annotations

from typing import Any

from debate_tui.choices import COMMAND_LINE, DEFAULT, DEFAULT_PROTOCOL, REMEMBERED, Choices, Source, resolve
from debate_tui.config import Resolved

CONFIGURED = {"protocol": ("protocol",), "model": ("default_model",)}
"""The choices the configuration also gives: field -> setting."""


def config_sources(resolved: Resolved) -> tuple[Source, Source, Source]:
    """The environment's and config.toml's choices, and the defaults. A model chosen there comes with its
    own API base (`[models]`), not one remembered for another model."""
    environment: dict[str, Any] = {}
    file: dict[str, Any] = {}
    variables: dict[str, str] = {}
    for name, setting in CONFIGURED.items():
        origin = resolved.origins.get(setting, "")
        chosen = file if origin == "file" else environment if origin.startswith("environment") else None
        if chosen is not None:
            chosen[name] = getattr(resolved.config, setting[0])
        if chosen is environment:
            variables[name] = origin
    if any(loc[0] == "models" and loc[-1] == "api_base" for loc in resolved.origins):
        for chosen in (environment, file):
            if "model" in chosen:
                chosen["api_base"] = ""
        if "model" in variables:
            variables["api_base"] = variables["model"]
    return (Source("environment", environment, variables), Source(f"config.toml ({resolved.path})", file),
            Source(DEFAULT, {"protocol": DEFAULT_PROTOCOL}))


def resolve_choices(given: Choices, resolved: Resolved, remembered: Choices | None = None, *,
                    config_newer: bool = False) -> Choices:
    """The run's choices: `given` (the command line) over the configuration over `remembered` (a setup form's
    last choices; config.toml goes above them when `config_newer`) over the defaults."""
    environment, config_file, default = config_sources(resolved)
    return resolve(Source.of(COMMAND_LINE, given), environment, config_file,
                   Source.of(REMEMBERED, remembered or Choices()), default, config_newer=config_newer)
