"""Every key binding of ours on the current screen is also a command in the palette (ctrl+p).

Ours are the bindings with an id (the ones `[keymap]` remaps): a focused text box's
own bindings (cursor, select, delete: about 35 of them) are keys, not commands.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache, partial
from typing import TYPE_CHECKING

from textual.app import App, SystemCommand
from textual.screen import Screen

if TYPE_CHECKING:
    from textual.system_commands import SystemCommandsProvider


def binding_commands(app: App, screen: Screen) -> Iterable[SystemCommand]:
    """One command per binding of ours active on `screen`, named as in the footer, the screen's before the app's."""
    seen: set[str] = set()
    found = [active for active in screen.active_bindings.values() if active.binding.id]
    for active in sorted(found, key=lambda active: str(active.binding.id).startswith("app.")):
        binding = active.binding
        if not binding.description or binding.system or binding.action in seen:
            continue
        seen.add(binding.action)
        shown = app.get_key_display(binding)
        yield SystemCommand(binding.description, f"{binding.tooltip} (key: {shown})".strip(),  # no [..]: markup
                            partial(app.run_action, binding.action, active.node))


@cache
def ordered_commands() -> type[SystemCommandsProvider]:
    """The palette's provider of the app's commands, in the app's order (`App.COMMANDS` takes this callable).

    Textual's own lists them by title when nothing is typed, which put this screen's among the app's.
    """
    from textual.command import DiscoveryHit, Hits
    from textual.system_commands import SystemCommandsProvider

    class OrderedSystemCommands(SystemCommandsProvider):
        async def discover(self) -> Hits:
            for name, help_text, callback, discover in self.app.get_system_commands(self.screen):
                if discover:
                    yield DiscoveryHit(name, callback, help=help_text)

    return OrderedSystemCommands
