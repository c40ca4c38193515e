"""A run's choices resolved from every source, for every front end: flags, the environment, config.toml,
the remembered setup and the defaults (the order itself is `choices.resolve`'s, and only there).

The configuration's part of a run (its protocol, models, option and generation defaults, each model's
settings, the catalog's directories) is read here, once, from a `Resolved` configuration, which knows
whether each value came from an environment variable, the file or a flag; the flags' own part is the
front end's `Choices` (`COMMAND_LINE`). The result is the whole run spec: the session factory reads
nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from debate_tui.choices import COMMAND_LINE, DEFAULT, DEFAULT_PROTOCOL, REMEMBERED, Choices, Source, resolve
from debate_tui.config import Config, Resolved
from debate_tui.precedence import Layer, first

Place = tuple[str, str | None, Any]
"""Where a setting goes in the spec: field, key of a table (None: the whole field), value."""


def config_sources(resolved: Resolved) -> tuple[Source, Source, Source, Source]:
    """The configuration's flags', environment's and config.toml's choices, and the defaults. A model chosen
    there comes with its own API base (`[models]`), not one remembered for another model."""
    values: dict[Layer, dict[str, Any]] = {Layer.TYPED: {}, Layer.ENVIRONMENT: {}, Layer.CONFIG_FILE: {}}
    variables: dict[str, str] = {}
    for loc, origin in resolved.origins.items():
        bucket = origin.layer
        if bucket is Layer.TYPED and loc[0] == "generation":
            continue  # a typed generation flag enters the spec once, as the person's choice (`Choices.generation`)
        for name, key, value in places(loc, resolved.config):
            if key is None:
                values[bucket][name] = value
            else:
                values[bucket].setdefault(name, {})[key] = value
            if bucket is Layer.ENVIRONMENT:
                variables[name if key is None else f"{name}.{key}"] = str(origin)
    if any(loc[0] == "models" and loc[-1] == "api_base" for loc in resolved.origins):
        for chosen in values.values():
            if "model" in chosen:
                chosen["api_base"] = ""
        if "model" in variables:
            variables["api_base"] = variables["model"]
    return (Source(COMMAND_LINE, values[Layer.TYPED]), Source(Layer.ENVIRONMENT, values[Layer.ENVIRONMENT], variables),
            Source(f"{Layer.CONFIG_FILE} ({resolved.path})", values[Layer.CONFIG_FILE]),
            Source(DEFAULT, {"protocol": DEFAULT_PROTOCOL}))


def places(loc: tuple[str, ...], config: Config) -> Iterator[Place]:
    """The spec's fields a configured setting fills (the model: the run's, and the one a cleared form falls
    back to); none for what is no part of a run (limits, theme, directories of sessions and cache)."""
    head, *rest = loc
    if head == "protocol":
        yield "protocol", None, config.protocol
    elif head == "default_model":
        yield from (("model", None, config.default_model), ("default_model", None, config.default_model))
    elif head in ("criteria_dir", "personas_dir") and (path := getattr(config, head)) is not None:
        yield head, None, str(path)
    elif head == "roles" and (model := getattr(config.roles, rest[0])):
        yield "role_models", rest[0], model
    elif head == "models":
        yield "model_settings", rest[0], config.models[rest[0]].model_dump(exclude_none=True)
    elif head == "protocols":
        yield "option_defaults", rest[0], dict(config.protocols[rest[0]])
    elif head == "generation" and rest[0] == "roles":
        yield "generation_defaults", "roles", {role: settings.model_dump(exclude_none=True)
                                               for role, settings in config.generation.roles.items()}
    elif head == "generation":
        yield "generation_defaults", rest[0], getattr(config.generation, rest[0])


def _joined(task: Mapping[str, Any], configuration: Mapping[str, Any]) -> dict[str, Any]:
    """The command line's two halves, one layer: the task's own flag where it gives a value, else the flag the
    configuration reads too (`config.resolve`'s), else what the task left."""
    return {key: first((task.get(key), configuration.get(key)), is_set=bool) or configuration.get(key, task.get(key))
            for key in {**configuration, **task}}


def resolve_choices(given: Choices, resolved: Resolved, remembered: Choices | None = None, *,
                    config_newer: bool = False) -> Choices:
    """The run's spec: `given` (the command line) over the configuration over `remembered` (a setup form's
    last choices; config.toml goes above them when `config_newer`) over the defaults."""
    flags, environment, config_file, default = config_sources(resolved)
    command_line = Source(COMMAND_LINE, _joined(Source.of(COMMAND_LINE, given).values, flags.values))
    return resolve(command_line, environment, config_file,
                   Source.of(REMEMBERED, remembered or Choices()), default, config_newer=config_newer)
