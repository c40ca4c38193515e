"""The configuration of this process: its config file, its DEBATE_TUI_* variables and a command's flags.

`load_config()` never imports litellm and is cached for as long as the file and the variables stay the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from debate_tui.config.files import environment, parse_file, read_config_bytes
from debate_tui.config.merge import Resolved, resolve
from debate_tui.config.schema import Config
from debate_tui.locations import config_path
from debate_tui.settings import SETTINGS

if TYPE_CHECKING:
    import argparse


def resolve_current(flags: Mapping[str, Any]) -> Resolved:
    """The configuration of this process with the given flags (by argparse destination) over it."""
    path = config_path()
    return resolve(path, parse_file(path, read_config_bytes(path)), environment(), flags)


_last: tuple[tuple[Any, ...], Config] | None = None


def load_config() -> Config:
    """File, environment and defaults (no flags); parsed again only when the file or a DEBATE_TUI_* variable changed."""
    global _last
    path = config_path()
    raw = read_config_bytes(path)
    env = environment()
    key = (path, raw, tuple(sorted(env.items())))
    if _last is None or _last[0] != key:
        _last = (key, resolve(path, parse_file(path, raw), env, {}).config)
    return _last[1]


def flag_values(args: argparse.Namespace) -> dict[str, Any]:
    """The configuration flags a command was given (those it has and that were used)."""
    return {name: value for name in SETTINGS if (value := getattr(args, name, None)) is not None}


def effective_config(args: argparse.Namespace) -> Config:
    """Flags over environment over file over defaults, for one command's arguments."""
    flags = flag_values(args)
    return resolve_current(flags).config if flags else load_config()
