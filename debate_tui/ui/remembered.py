"""What the setup form took from the last setup, said in one line, so it is seen and can be reset.

The remembered setup (`ui-state.json`, see `ui.state`) fills whatever the
command line and the configuration leave open; `Choices.origins` records
which values it gave. A tooltip alone hid it: a person saw MATEval and three
criteria without knowing why.
"""

from __future__ import annotations

from debate_tui.choices import REMEMBERED, Choices

NAMES = {"api_base": "API base", "agent_models": "agents' models", "agent_personas": "agents' personas",
         "generation": "reply settings", "inputs": "text file", "custom_criteria": "your criteria"}
"""How the line names a field; any other by its name, spaced."""


def remembered_fields(choices: Choices) -> list[str]:
    """The fields (a table once, whichever of its keys) whose value came from the last setup, in form order."""
    return list(dict.fromkeys(key.partition(".")[0] for key, where in choices.origins.items() if where == REMEMBERED))


def remembered_line(choices: Choices, key: str) -> str | None:
    """"From your last setup (ctrl+o: defaults): protocol mateval, criteria, options", `key` the reset key,
    first so a narrow screen cuts the list, not the key; None when nothing came from it."""
    fields = remembered_fields(choices)
    if not fields:
        return None
    shown = [f"{name} {value}" if name in ("protocol", "model") and (value := getattr(choices, name))
             else NAMES.get(name, name.replace("_", " ")) for name in fields]
    return f"From your last setup ({key}: defaults): " + ", ".join(shown)
