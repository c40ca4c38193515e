"""The evaluation protocols, one module each, registered by name.

A protocol module provides:
- `Options`: a pydantic model of its settings (validated from `session.options`);
- `build_agents(options, models, personas) -> list[AgentSpec]`;
- `async run(ctx) -> Outcome`: the paper's algorithm, calling `await ctx.turn(...)`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

PROTOCOLS: dict[str, str] = {
    "debate": "DEBATE: a Scorer and a devil's-advocate Critic argue until the Critic says NO ISSUE",
    "chateval": "ChatEval: 2-5 referees with distinct personas discuss for T turns, then average or vote",
    "single": "Single judge: one G-Eval-style call per criterion (optionally N samples averaged), the baseline",
    "mateval": "MATEval: evaluators discuss one error type per round with feedback; a summarizer locates the errors",
    "scaleeval": "ScaleEval: three speakers judge a pair, discuss until unanimous, else a person decides",
}
"""Name -> one-line description; the module is `debate_tui.protocols.<name>`."""


def get_protocol(name: str) -> ModuleType:
    if name not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; valid: {', '.join(PROTOCOLS)}")
    return importlib.import_module(f"{__name__}.{name}")
