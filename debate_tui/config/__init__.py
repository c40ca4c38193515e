"""The user's configuration: config.toml, DEBATE_TUI_* environment variables and flags, merged.

One TOML file in the user config directory holds what a person wants every
time: the models (a default, one per role, and for each its server and the
*name* of the environment variable that holds its key), the default protocol
and its options, directories, theme, key map and limits. Each setting is
declared once (`debate_tui.settings`) and resolved on its own, the first that
is set winning:

    command-line flag  >  DEBATE_TUI_* environment variable  >  config.toml  >  built-in default

A reply setting's flag also beats its more specific layers (`[models."M"]`,
`[generation.roles.R]`): what a person types wins (`generation.Generation`).

One job a module: `schema` (the tables as pydantic models), `secrets` (keys
never live here: refused before anything else is read), `files` (reading the
file and the variables), `merge` (the layers into one `Config`, each value's
origin kept as data), `current` (this process's configuration, cached).
"""

from debate_tui.config.current import effective_config, flag_values, load_config, resolve_current
from debate_tui.config.files import parse_file
from debate_tui.config.merge import Resolved, resolve
from debate_tui.config.schema import (
    DEFAULT_CONCURRENCY,
    Config,
    Deployment,
    Limits,
    ModelSettings,
    RoleModels,
    setting_name,
    toml_key,
)
from debate_tui.generation import GenerationSettings
from debate_tui.inputs import ConfigError
from debate_tui.locations import config_path
from debate_tui.settings import OVERRIDES, ROLES, env_var, flag

__all__ = [
    "DEFAULT_CONCURRENCY", "OVERRIDES", "ROLES", "Config", "ConfigError", "Deployment", "GenerationSettings",
    "Limits", "ModelSettings", "Resolved", "RoleModels", "config_path", "effective_config", "env_var", "flag",
    "flag_values", "load_config", "parse_file", "resolve", "resolve_current", "setting_name", "toml_key",
]
