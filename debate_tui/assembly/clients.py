"""Which client calls the models: the ordinary one (the demo model or litellm), a litellm Router, or either in a
thread of its own for the TUI. Each call is bounded by the configured timeout whichever it is."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from debate_tui.inputs import InputError

if TYPE_CHECKING:
    from debate_tui.config import Config, Limits
    from debate_tui.llm.base import LLMClient
    from debate_tui.llm.router import ModelRouter
    from debate_tui.llm.threaded import ThreadedClient


def model_client(limits: Limits, *, demo_delay_s: float = 0.0) -> ModelRouter:
    """The demo model or litellm, chosen per call by the model's name; `demo_delay_s` paces the demo's chunks."""
    from debate_tui.llm.router import ModelRouter

    return ModelRouter(demo_delay_s=demo_delay_s, timeout_s=limits.timeout)


def threaded_client(limits: Limits, *, demo_delay_s: float) -> ThreadedClient:
    """The TUI's: the calls run in a thread of their own (`llm.threaded`), so streaming never holds the screen."""
    from debate_tui.llm.threaded import ThreadedClient

    return ThreadedClient(model_client(limits, demo_delay_s=demo_delay_s))


def routed_client(config: Config, router: Path | None, model: str | None) -> LLMClient:
    """--router FILE, else config.toml's [deployments] when it has any, else the ordinary client; InputError (one
    line) when the router's configuration cannot be used or `model` is none of its names."""
    base = model_client(config.limits)
    if router is None and not config.deployments:
        return base
    from debate_tui.llm.guard import GuardedClient
    from debate_tui.llm.litellm_router import RouterClient, RouterConfigError, deployment_settings

    try:
        if router is not None:
            client = RouterClient.from_file(router, fallback=base)
        else:
            groups = {name: [d.model_dump() for d in group] for name, group in config.deployments.items()}
            client = RouterClient.from_settings(deployment_settings(groups), base, origin="config.toml [deployments]")
    except RouterConfigError as exc:
        raise InputError(str(exc)) from None
    if router is not None and model and model not in client.names:
        known = ", ".join(sorted(client.names))
        raise InputError(f"--model {model!r} is not a model_name of the router; it has: {known}")
    return GuardedClient(client)
