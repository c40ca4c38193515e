"""The evaluation protocols, one module each, registered here by name.

A protocol is one module `debate_tui.protocols.<name>` that defines `SPEC`, a
`ProtocolSpec` (see `spec`): the paper's algorithm as `async run(ctx)`, calling
`await ctx.turn(...)`, and everything the front ends need to know about it.
Adding a protocol is that module and its registration (`debate_tui.registry.REGISTRY`: its summary and roles).

This module imports nothing heavy: the TUI's first frame lists the protocols
from it before pydantic is imported.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from debate_tui.registry import PROTOCOLS, REGISTRY

if TYPE_CHECKING:
    from debate_tui.protocols.spec import ProtocolSpec

__all__ = ["PROTOCOLS", "all_protocols", "get_protocol"]


def get_protocol(name: str) -> ProtocolSpec:
    """The protocol's spec; ValueError names the valid ones."""
    if name not in REGISTRY:
        raise ValueError(f"unknown protocol {name!r}; valid: {', '.join(REGISTRY)}")
    spec: ProtocolSpec = importlib.import_module(f"{__name__}.{name}").SPEC
    return spec


def all_protocols() -> dict[str, ProtocolSpec]:
    """Every registered protocol's spec, in registration order."""
    return {name: get_protocol(name) for name in REGISTRY}
