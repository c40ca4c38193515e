"""`debate-tui config path|show|init`: where the configuration lives, what it resolves to, a starter file."""

from __future__ import annotations

import argparse
import json
from typing import Any

from debate_tui import envfile
from debate_tui.choices import Choices
from debate_tui.cli.outputs import fail
from debate_tui.cli.task_flags import GENERATION_FLAGS
from debate_tui.config import (
    Resolved,
    config_path,
    flag_values,
    resolve_current,
    setting_name,
    toml_key,
)
from debate_tui.config.starter import starter
from debate_tui.factory import option_defaults
from debate_tui.protocols import get_protocol
from debate_tui.resolver import resolve_choices
from debate_tui.safefile import write_problem
from debate_tui.settings import DEFAULT, SETTINGS, Origin
from debate_tui.store import write_atomic
from debate_tui.textsafe import inert_json

STARTER = starter()
"""What `config init` writes: every setting, commented out, with its environment variable."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("config", help="show or create the configuration file", description=__doc__)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("path", help="print the config file's path").set_defaults(handler=handle_path)
    show = actions.add_parser("show", help="print the effective configuration, with where each value comes from")
    for setting in SETTINGS.values():
        show.add_argument(setting.flag, metavar="VALUE",
                          help=f"as given to a command: sets {setting_name(setting.toml)}")
    show.add_argument("--json", action="store_true",
                      help="print one JSON object: the settings, where each came from, each model's key variables")
    show.set_defaults(handler=handle_show)
    init = actions.add_parser("init", help="write a commented starter config file")
    init.add_argument("--force", action="store_true", help="overwrite an existing config file")
    init.set_defaults(handler=handle_init)


def handle_path(args: argparse.Namespace) -> int:
    print(config_path())
    return 0


def handle_init(args: argparse.Namespace) -> int:
    path = config_path()
    if path.exists() and not args.force:
        return fail(f"{path} exists; not overwritten (use --force to replace it)")
    try:
        write_atomic(path, STARTER)
    except OSError as exc:  # a read-only home, a full disk
        message = write_problem(exc, path, "or point DEBATE_TUI_CONFIG_DIR at a writable directory")
        return fail(message)
    print(path)
    return 0


def handle_show(args: argparse.Namespace) -> int:
    flags = flag_values(args)
    resolved = resolve_current(flags)
    typed = {name: flags[name] for name in GENERATION_FLAGS if name in flags}
    choices = resolve_choices(Choices(protocol=flags.get("protocol"), model=flags.get("model"), generation=typed),
                              resolved)
    for name in choices.option_defaults:  # checked as the session factory checks them
        option_defaults(get_protocol(name), choices)
    if args.json:
        print(inert_json(json.dumps(as_json(resolved, choices))))
    else:
        print(render(resolved, choices), end="")
    return 0


RUN_CHOICES = ("protocol", "model", "api_base")
"""A run's choices the configuration gives, shown with where they come from (`Choices.origins`)."""
OWN_API_BASE = "(the model's own)"
"""How an empty API base shows: the configured model's own `[models]` api_base applies."""


def as_json(resolved: Resolved, choices: Choices) -> dict[str, Any]:
    """`config show --json`: what `render` shows, as data (key variables named, never a key's value)."""
    config = resolved.config
    return {"file": str(resolved.path), "exists": resolved.exists,
            "choices": {name: {"value": getattr(choices, name), "origin": choices.origins.get(name)}
                        for name in RUN_CHOICES},
            "env_file": str(envfile.loaded_from) if envfile.loaded_from else None,
            "models": [{"model": model, "roles": roles, "key": config.key_source(model).data()}
                       for model, roles in config.used_models().items()],
            "settings": config.model_dump(mode="json"),
            "origins": {setting_name(loc): str(origin) for loc, origin in resolved.origins.items()},
            "spec": choices.data()}


def render(resolved: Resolved, choices: Choices) -> str:
    """The configuration as TOML that loads back to the same settings, each value's origin beside it; first, a
    run's choices as the one rule resolves them (`choices.resolve`; the TUI puts its remembered setup in it)."""
    config = resolved.config
    state = "" if resolved.exists else " (not found: defaults apply)"
    lines = [
        "# debate-tui: effective configuration (flag > environment > file > default)",
        f"# file: {resolved.path}{state}",
        "# Keys are never shown: each model's key is read from an environment variable at call time.",
        f"# .env: {envfile.loaded_from or 'none in the working directory'}"
        + (" (read first; a variable already set wins)" if envfile.loaded_from else ""),
    ]
    users = config.used_models()
    if not users:
        lines.append("#   no model configured: the offline demo model is used")
    for model, roles in users.items():
        key = config.key_source(model)
        status = "" if key.variable is None else f"{key.shown} ({'set' if key.is_set else 'NOT SET'}), "
        lines.append(f"#   {model} [{', '.join(roles) or 'unused'}]: key {status}{key.origin}")
    lines.append("# a run's choices (flag > environment > config.toml > the TUI's remembered setup > default):")
    lines += [f"#   {name} = {getattr(choices, name) or OWN_API_BASE}  ({choices.origins[name]})"
              for name in RUN_CHOICES if name in choices.origins]
    lines.append("")
    lines += _table(config.model_dump(mode="json"), resolved.origins, ())
    return "\n".join(lines) + "\n"


def _table(data: dict[str, Any], origins: dict[tuple[str, ...], Origin], loc: tuple[str, ...]) -> list[str]:
    lines: list[str] = []
    tables: list[tuple[tuple[str, ...], dict[str, Any]]] = []
    for key, value in data.items():
        here = (*loc, key)
        if isinstance(value, dict):
            tables.append((here, value))
        elif value is None:
            lines.append(f"# {toml_key(key)}: not set")
        else:
            lines.append(f"{toml_key(key)} = {_value(value)}  # {origins.get(here, DEFAULT)}")
    for here, value in tables:
        lines += ["", f"[{setting_name(here)}]", *_table(value, origins, here)]
    return lines


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(_value, value)) + "]"
    return json.dumps(str(value), ensure_ascii=False).replace("\x7f", "\\u007f")
