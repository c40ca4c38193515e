"""`debate-tui models [--check]`: the configured models, how each is reached, and whether it answers.

With --check, each model gets one tiny call (max_tokens=5) through the same
client a debate uses; the result is ok, auth error, unreachable, model not
found, or another failure, each with what to do about it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import time
from dataclasses import dataclass
from typing import Any

from debate_tui.cli.exits import Exit
from debate_tui.config import Config, config_path, load_config
from debate_tui.factory import demo_hint
from debate_tui.llm import DEMO_MODEL
from debate_tui.llm.base import ChatRequest, LLMError
from debate_tui.llm.router import ModelRouter
from debate_tui.textsafe import inert_json

PROVIDERS_URL = "https://docs.litellm.ai/docs/providers"
PROBE = [{"role": "user", "content": "Reply with the single word OK."}]
STATUS = {
    "auth": "auth error",
    "connection": "unreachable",
    "timeout": "unreachable",
    "not_found": "model not found",
    "bad_request": "rejected",
    "rate_limit": "rate limited",
    "reply": "not a model's reply",
}
"""LLMError kind -> what the check reports; any other kind is a server error."""
NO_CREDENTIALS = re.compile(r"(?i)missing credentials|api[_ ]?key")
"""How a provider SDK says no key was given (litellm reports this as a server error)."""
NO_CONNECTION = re.compile(r"(?i)connection error|connection refused|connect(ion)? timed out|name or service not known")
"""How a provider SDK says the server could not be reached (litellm reports this as a server error too)."""


@dataclass(frozen=True)
class Check:
    """The outcome of one probe call."""

    status: str
    """"ok", or one of STATUS's values, or "server error"."""
    detail: str
    """The error message (already scrubbed of secrets), or the time the call took."""
    fix: str = ""
    """What the person can do about a failure."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("models", help="list the configured models; --check calls each once",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="make one tiny call to each model and report the result")
    parser.add_argument("--timeout", type=float, default=15.0, metavar="SECONDS",
                        help="how long each check call may take (default 15)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the listing")
    parser.set_defaults(handler=handle)


def kind_of(config: Config, model: str, error: LLMError) -> str:
    """The error's kind, read from its message where litellm's class says only "server error"."""
    if not config.key_source(model).is_set and NO_CREDENTIALS.search(str(error)):
        return "auth"
    if error.kind == "server" and NO_CONNECTION.search(str(error)):
        return "connection"
    return error.kind


def fix_for(config: Config, model: str, kind: str) -> str:
    key = config.key_source(model)
    api_base = config.model_params(model).get("api_base")
    if kind == "auth":
        if key.variable and not key.is_set:
            missing = [name for name in key.variables if not os.environ.get(name)]
            return f"set {' and '.join(missing)} (export {missing[0]}=...)" + (
                f", or {' and '.join(key.instead)}" if key.instead else "")
        if key.variable:
            return f"the key in {key.variable} was refused: check it is valid for this provider"
        return f'name the variable holding the key with api_key_env in [models."{model}"] of {config_path()}'
    if kind in ("connection", "timeout"):
        if api_base:
            return f"check the api_base URL {api_base}: is the server running?"
        return "check the network connection and the provider's status"
    if kind in ("not_found", "bad_request"):
        return f"check the model name and its provider prefix; litellm model list at {PROVIDERS_URL}"
    if kind == "rate_limit":
        return "the model answered but refused for rate or quota: wait, or check the plan's limits"
    if kind == "reply":
        where = f"the api_base URL {api_base}" if api_base else "the provider"
        return f"check {where}: is it an OpenAI-compatible endpoint (usually ending in /v1)?"
    return "the server failed: try again later, or check its logs"


async def probe(router: ModelRouter, config: Config, model: str, timeout_s: float) -> Check:
    request = ChatRequest(model=model, messages=PROBE, params={**config.model_params(model), "max_tokens": 5})
    started = time.monotonic()
    try:
        await asyncio.wait_for(router.complete(request), timeout_s)
    except LLMError as exc:
        kind = kind_of(config, model, exc)
        return Check(STATUS.get(kind, "server error"), str(exc), fix_for(config, model, kind))
    except TimeoutError:
        return Check("unreachable", f"no answer within {timeout_s:g} s", fix_for(config, model, "timeout"))
    return Check("ok", f"answered in {time.monotonic() - started:.2f} s")


async def probe_all(config: Config, models: list[str], timeout_s: float) -> list[Check]:
    """Probe every model at once; litellm is imported first so that its seconds of import count against no one."""
    if any(model != DEMO_MODEL for model in models):
        from debate_tui.llm.litellm_loader import load_litellm

        await asyncio.to_thread(load_litellm)
    router = ModelRouter(timeout_s=timeout_s)
    return list(await asyncio.gather(*(probe(router, config, model, timeout_s) for model in models)))


def handle(args: argparse.Namespace) -> int:
    config = load_config()
    users = config.used_models()
    checks = asyncio.run(probe_all(config, list(users), args.timeout)) if args.check and users else []
    failing = sum(check.status != "ok" for check in checks)
    code = Exit.FAILED if args.check and (failing or not users) else 0
    if args.json:
        print(inert_json(json.dumps(listing(config, users, checks))))
        return code
    print(f"config: {config_path()}")
    if not users:
        print(demo_hint())
        return code
    for number, (model, roles) in enumerate(users.items()):
        key = config.key_source(model)
        state = "" if key.variable is None else f"{key.shown} ({'set' if key.is_set else 'not set'}), "
        print(f"\n{model}  (used by: {', '.join(roles) or 'nothing: only listed in [models]'})")
        api_base = config.model_params(model).get("api_base", "the provider's own")
        print(f"  api_base  {api_base}")
        print(f"  key       {state}{key.origin}")
        if checks:
            check = checks[number]
            print(f"  check     {check.status}: {check.detail}")
            if check.fix:
                print(f"  fix       {check.fix}")
    if checks:
        print(f"\n{len(checks) - failing} of {len(checks)} models answered")
    return code


def listing(config: Config, users: dict[str, list[str]], checks: list[Check]) -> dict[str, Any]:
    """`models --json`: the config file, each model with its roles, api_base, key variable(s) and check."""
    models = []
    for number, (model, roles) in enumerate(users.items()):
        check = checks[number] if checks else None
        models.append({"model": model, "roles": roles, "api_base": config.model_params(model).get("api_base"),
                       "key": config.key_source(model).data(),
                       "check": None if check is None else {"status": check.status, "detail": check.detail,
                                                            "fix": check.fix}})
    return {"config": str(config_path()), "models": models, "demo": not users,
            "answered": None if not checks else sum(check.status == "ok" for check in checks)}
