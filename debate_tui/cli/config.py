"""`debate-tui config path|show|init`: where the configuration lives, what it resolves to, a starter file."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from debate_tui import envfile
from debate_tui.choices import Choices
from debate_tui.config import (
    OVERRIDES,
    Resolved,
    config_path,
    flag,
    flag_values,
    resolve_current,
    setting_name,
    toml_key,
)
from debate_tui.factory import option_defaults
from debate_tui.protocols import get_protocol
from debate_tui.resolver import resolve_choices
from debate_tui.safefile import write_problem
from debate_tui.store import write_atomic
from debate_tui.textsafe import inert, inert_json

STARTER = """\
# debate-tui configuration. `debate-tui config show` prints what is in effect;
# `debate-tui models --check` tries each model once.
#
# Each setting may also come from a DEBATE_TUI_* environment variable or a
# command-line flag: flag > environment > this file > built-in default.
# API keys never go in this file: name the environment variable holding each
# key with api_key_env, in a [models."<model>"] table.

# The litellm model every agent uses unless its role has its own
# (DEBATE_TUI_MODEL, --model). Unset: the offline demo model.
# default_model = "gpt-4o-mini"

# The protocol used when none is given (DEBATE_TUI_PROTOCOL, --protocol):
# debate, chateval, mateval, scaleeval or single.
# protocol = "debate"

# Where sessions are saved (DEBATE_TUI_SESSIONS_DIR, --sessions-dir).
# sessions_dir = "~/debates"

# Where the TUI's export dialog offers to write (DEBATE_TUI_EXPORT_DIR); unset: the current directory.
# export_dir = "~/debate-reports"

# Where the response cache lives (DEBATE_TUI_CACHE_DIR).
# cache_dir = "~/.cache/debate-tui"

# Directories of your own persona and criteria TOML files
# (DEBATE_TUI_PERSONAS_DIR, DEBATE_TUI_CRITERIA_DIR).
# personas_dir = "~/debate-tui/personas"
# criteria_dir = "~/debate-tui/criteria"

# The TUI theme by name (DEBATE_TUI_THEME); over the one last picked in the TUI.
# theme = "textual-dark"

[roles]
# A model per agent role, instead of default_model for that role
# (DEBATE_TUI_<ROLE>_MODEL, e.g. DEBATE_TUI_CRITIC_MODEL).
# scorer = "gpt-4o-mini"
# critic = "anthropic/claude-3-5-haiku-latest"
# tie_breaker = "gpt-4o"
# referee = "gpt-4o-mini"
# summarizer = "gpt-4o-mini"
# evaluator = "gpt-4o-mini"
# feedback = "gpt-4o-mini"
# speaker = "gemini/gemini-1.5-flash"
# judge = "gpt-4o-mini"

[models]
# How to reach each model: one table per model string.
# api_base: an OpenAI-compatible server or proxy (unset: the provider's own).
# api_key_env: the NAME of the variable holding the key, read at call time
# (unset: litellm's usual one, e.g. OPENAI_API_KEY, ANTHROPIC_API_KEY).
#
# [models."openai/llama3.1"]
# api_base = "http://127.0.0.1:8000/v1"
# api_key_env = "LOCAL_LLM_KEY"
# A model's own reply cap and temperature (over [generation]), and its whole
# window in tokens for a model litellm does not know (a local server's n_ctx).
# max_reply_tokens = 400
# temperature = 0.0
# context_window = 8192

[deployments]
# Several deployments of one model group (replicas, keys, regions), used through
# litellm's Router with their rate limits: `--model judge` spreads the calls,
# keeps each one's requests/tokens per minute, and cools a failing one down.
#
# [[deployments.judge]]
# model = "openai/llama3.1"
# api_base = "http://10.0.0.1:8000/v1"
# api_key_env = "LOCAL_LLM_KEY"
# rpm = 600
# tpm = 200000
# [[deployments.judge]]
# model = "openai/llama3.1"
# api_base = "http://10.0.0.2:8000/v1"
# rpm = 600

[protocols]
# Default options per protocol; command-line flags override them.
#
# [protocols.debate]
# rounds = 4
# critic_persona = "strictly-negative"

[limits]
# Budget of one run in US dollars and in tokens; unset: no limit
# (DEBATE_TUI_MAX_COST, DEBATE_TUI_MAX_TOKENS).
# max_cost = 1.0
# max_tokens = 200000
# Seconds one model call may take, streaming included: at this deadline the
# connection is closed and the reply so far kept (DEBATE_TUI_TIMEOUT, --timeout).
# timeout = 120.0
# Attempts per call, the first included, and the first backoff in seconds
# (DEBATE_TUI_RETRIES, DEBATE_TUI_RETRY_DELAY).
# retries = 4
# retry_delay = 1.0
# Items in flight at once in batch runs (DEBATE_TUI_CONCURRENCY, --concurrency).
# concurrency = 8

[generation]
# Tokens one reply may have: sent as max_tokens and enforced on the stream
# (DEBATE_TUI_MAX_REPLY_TOKENS, --max-reply-tokens). Unset: per role, 512
# (a MATEval evaluator 768, a summarizer 1536).
# max_reply_tokens = 512
# Sampling temperature (DEBATE_TUI_TEMPERATURE, --temperature). Unset: 0 for
# judging turns; the single judge with samples above 1 keeps 1.
# temperature = 0.0
# Ask the answer again as JSON under a schema (DEBATE_TUI_STRUCTURED, --structured):
# "auto" where the free text gives none, true on every answer (a small local model:
# every answer read, none misread, about as many calls; docs/REAL_MODELS.md),
# false never. Unset: "auto" where every model is served from your own api_base,
# else false.
# structured = false
# Per role, over the values above (a [models."<model>"] table wins over both):
# [generation.roles.summarizer]
# max_reply_tokens = 2048

[keymap]
# TUI key bindings, one per binding id: keys, comma-separated alternatives.
# "debate.pause" = "ctrl+space"
"""
"""What `config init` writes: every setting, commented out, with its environment variable."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("config", help="show or create the configuration file", description=__doc__)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("path", help="print the config file's path").set_defaults(handler=handle_path)
    show = actions.add_parser("show", help="print the effective configuration, with where each value comes from")
    for name, setting in OVERRIDES.items():
        show.add_argument(flag(name), metavar="VALUE", help=f"as given to a command: sets {setting_name(setting)}")
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
        print(f"debate-tui: error: {path} exists; not overwritten (use --force to replace it)", file=sys.stderr)
        return 2
    try:
        write_atomic(path, STARTER)
    except OSError as exc:  # a read-only home, a full disk
        message = write_problem(exc, path, "or point DEBATE_TUI_CONFIG_DIR at a writable directory")
        print(f"debate-tui: error: {inert(message)}", file=sys.stderr)
        return 2
    print(path)
    return 0


def handle_show(args: argparse.Namespace) -> int:
    flags = flag_values(args)
    resolved = resolve_current(flags)
    choices = resolve_choices(Choices(protocol=flags.get("protocol"), model=flags.get("model")), resolved)
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
            "origins": {setting_name(loc): origin for loc, origin in resolved.origins.items()},
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


def _table(data: dict[str, Any], origins: dict[tuple[str, ...], str], loc: tuple[str, ...]) -> list[str]:
    lines: list[str] = []
    tables: list[tuple[tuple[str, ...], dict[str, Any]]] = []
    for key, value in data.items():
        here = (*loc, key)
        if isinstance(value, dict):
            tables.append((here, value))
        elif value is None:
            lines.append(f"# {toml_key(key)}: not set")
        else:
            lines.append(f"{toml_key(key)} = {_value(value)}  # {origins.get(here, 'default')}")
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
