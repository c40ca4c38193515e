"""The starter config `debate-tui config init` writes: every setting commented out, each setting of
`settings.SETTINGS` with its meaning, its variable and flag and a value, made from the table (the tables only a
file has, `[roles]`, `[models]`, `[deployments]`, `[protocols]`, `[keymap]`, are written here)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from debate_tui.precedence import ORDER, SCOPES, described
from debate_tui.settings import GENERATION, LIMITS, SCOPE_TABLES, TOP, Setting

HEAD = f"""\
# debate-tui configuration. `debate-tui config show` prints what is in effect;
# `debate-tui models --check` tries each model once.
#
# Each setting may also come from a DEBATE_TUI_* environment variable or a
# command-line flag, the first that sets it winning:
# {described(ORDER, SCOPE_TABLES)}.
# What you type (a flag, the setup form) wins over every table of this file.
# API keys never go in this file: name the environment variable holding each
# key with api_key_env, in a [models."<model>"] table.

"""

FILE_TABLES = """[roles]
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

"""
"""What only a file gives: a model per role, how to reach each model, deployments, protocol options."""

PER_ROLE = f"""# Per role and per model, the most specific first:
# {described(SCOPES, SCOPE_TABLES)}; a flag wins over all of them.
# [generation.roles.summarizer]
# max_reply_tokens = 2048

"""

KEYMAP = """[keymap]
# TUI key bindings, one per binding id: keys, comma-separated alternatives.
# "debate.pause" = "ctrl+space"
"""


def commented(setting: Setting) -> str:
    """One setting as the starter shows it: its meaning, where else it comes from, its key commented out."""
    given = ", ".join(where for where in (setting.env, setting.flags) if where)
    lines = textwrap.wrap(f"{setting.doc} ({given})", width=78, break_on_hyphens=False, break_long_words=False)
    return "".join(f"# {line}\n" for line in lines) + f"# {setting.toml[-1]} = {setting.example}\n"


def _block(settings: Iterable[Setting]) -> str:
    return "\n".join(commented(setting) for setting in settings)


def starter() -> str:
    """The whole starter file."""
    top = [setting for setting in TOP if setting.toml[0] != "roles"]
    return (HEAD + _block(top) + "\n" + FILE_TABLES + "[limits]\n" + _block(LIMITS) + "\n[generation]\n"
            + _block(GENERATION) + PER_ROLE + KEYMAP)
