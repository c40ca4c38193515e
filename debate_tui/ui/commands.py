"""Every key binding of the current screen is also a command in the palette (ctrl+p)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from textual.app import App, SystemCommand
from textual.screen import Screen


def binding_commands(app: App, screen: Screen) -> Iterable[SystemCommand]:
    """One command per described binding active on `screen`, named as in the footer."""
    seen: set[str] = set()
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if not binding.description or binding.system or binding.action in seen:
            continue
        seen.add(binding.action)
        shown = app.get_key_display(binding)
        yield SystemCommand(binding.description, f"{binding.tooltip} [{shown}]".strip(),
                            partial(app.run_action, binding.action, active.node))
