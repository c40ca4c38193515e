"""Scaling out: a litellm Router behind the LLMClient interface (`debate-tui batch --router FILE`).

A Router spreads one model name over several deployments (keys, regions,
servers), honours per-deployment `rpm`/`tpm` limits, cools down a deployment
that fails and falls back to other model groups. The file is the `model_list`
(+ `router_settings`) part of a litellm proxy `config.yaml`, in YAML, JSON or
TOML, so one configuration serves both; keys are written `os.environ/NAME`
and resolved by litellm, never stored. Other proxy sections are ignored.

Requests whose model is one of the Router's model names go through it; any
other model (the demo, say) goes to the ordinary client. The Router's own
retries and fallbacks act first; what reaches the batch is a failure of the
whole group, which then meets the global backoff and the runner's retries.
Batch calls are not streamed; a streaming caller gets the reply in one delta.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from debate_tui.domain import Usage
from debate_tui.inputs import InputError
from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback, LLMClient
from debate_tui.llm.guard import plausible_usage
from debate_tui.llm.litellm_client import classify, finish_reason, first_choice, load_litellm
from debate_tui.readfile import read_text

ROUTER_SECTIONS = ("model_list", "router_settings")
COOLDOWN_S = 30.0
"""How long a deployment of config.toml's [deployments] rests after failing."""
PER_DEPLOYMENT = frozenset({"api_base", "api_key_env"})
"""Request parameters a deployment sets for itself; a request must not override them."""


class RouterConfigError(ValueError):
    """The router file cannot be used; the message names the file and the problem."""


def load_config(path: Path) -> dict[str, Any]:
    """The Router's keyword arguments from a YAML, JSON or TOML file."""
    try:
        text = read_text(path, "toml")  # bounded, never a device or FIFO
    except InputError as exc:
        raise RouterConfigError(str(exc)) from None
    try:
        if path.suffix in (".yaml", ".yml"):
            data = _yaml_without_aliases(text, path)
        elif path.suffix == ".toml":
            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except RouterConfigError:
        raise
    except RecursionError:
        raise RouterConfigError(f"{path}: not readable (nested too deeply)") from None
    except Exception as exc:  # each parser has its own error type; all mean the same here
        raise RouterConfigError(f"{path}: not valid {path.suffix.lstrip('.') or 'JSON'} ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("model_list"), list) or not data["model_list"]:
        raise RouterConfigError(f"{path}: needs a non-empty 'model_list' (as in a litellm proxy config.yaml)")
    settings = data.get("router_settings") or {}
    if not isinstance(settings, dict):
        raise RouterConfigError(f"{path}: 'router_settings' must be a table of Router options")
    return {"model_list": data["model_list"], **settings}


def _yaml_without_aliases(text: str, path: Path) -> Any:
    """YAML with no `*alias`: safe_load shares an alias's node, but litellm's Router copies the model list, so
    nine nested aliases in 565 bytes became 1.86 GB and 50 s of copying. A router file has no use for them."""
    import yaml

    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            mark = event.start_mark
            raise RouterConfigError(f"{path}: YAML aliases are not accepted (*{event.anchor} on line "
                                    f"{mark.line + 1 if mark else '?'}): write each deployment out")
    return yaml.safe_load(text)


class RouterClient:
    def __init__(self, router: Any, fallback: LLMClient):
        self.router = router
        self.fallback = fallback
        # registry() since litellm 1.110, which deprecates get_model_names(); older ones (>= 1.50) lack it
        self.names = frozenset(router.registry().names() if hasattr(router, "registry") else router.get_model_names())

    @classmethod
    def from_file(cls, path: Path, fallback: LLMClient) -> RouterClient:
        return cls.from_settings(load_config(path), fallback, origin=str(path))

    @classmethod
    def from_settings(cls, kwargs: dict[str, Any], fallback: LLMClient, *, origin: str) -> RouterClient:
        try:
            router = load_litellm().Router(**kwargs)
        except Exception as exc:
            raise RouterConfigError(f"{origin}: litellm refused the configuration "
                                    f"({type(exc).__name__}{f': {exc}' if str(exc) else ''})") from None
        return cls(router, fallback)


    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        if request.model not in self.names:
            return await self.fallback.complete(request, on_delta)
        params = {k: v for k, v in request.params.items() if k not in PER_DEPLOYMENT}
        try:
            response = await self.router.acompletion(model=request.model, messages=request.messages, **params)
        except Exception as exc:
            raise classify(exc) from None
        choice = first_choice(response)
        text = choice.message.content or ""
        if on_delta is not None and text:
            on_delta(text)
        usage = plausible_usage(_usage(response), request, text)
        return Completion(text=text, usage=usage, finish_reason=finish_reason(choice.finish_reason))


def _usage(response: Any) -> Usage:
    """Tokens as reported; the cost litellm worked out for the deployment that answered."""
    raw = getattr(response, "usage", None)
    hidden = getattr(response, "_hidden_params", None) or {}
    return Usage(calls=1, prompt_tokens=getattr(raw, "prompt_tokens", 0) or 0,
                 completion_tokens=getattr(raw, "completion_tokens", 0) or 0,
                 cost_usd=float(hidden.get("response_cost") or 0.0))


def deployment_settings(groups: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Router arguments for config.toml's `[[deployments.<group>]]` (model, api_base, api_key_env, rpm, tpm).

    With any rpm/tpm the Router routes by usage (a deployment at its limit gets nothing until the minute
    turns; all at their limits is a 429, which meets the batch's shared pause); otherwise it shuffles.
    A deployment that fails twice in a minute is left alone for COOLDOWN_S.
    """
    model_list = []
    for group, deployments in groups.items():
        for entry in deployments:
            params: dict[str, Any] = {"model": entry["model"]}
            if entry.get("api_base"):
                params["api_base"] = entry["api_base"]
            if entry.get("api_key_env"):
                params["api_key"] = f"os.environ/{entry['api_key_env']}"
            params |= {k: entry[k] for k in ("rpm", "tpm") if entry.get(k)}
            model_list.append({"model_name": group, "litellm_params": params})
    limited = any("rpm" in d["litellm_params"] or "tpm" in d["litellm_params"] for d in model_list)
    return {"model_list": model_list, "routing_strategy": "usage-based-routing-v2" if limited else "simple-shuffle",
            "allowed_fails": 1, "cooldown_time": COOLDOWN_S, "num_retries": 2}
