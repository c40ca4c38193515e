"""The protocols' registration, below everything: each protocol's name, one line on what a run does, and its roles.

Plain data, read by the configuration (which checks a protocol name and a role,
and gives each role its `[roles]` entry) and by `debate_tui.protocols` (which
imports a protocol's module by its name and checks the roles its agents play)
alike, so neither reaches up to the other; nothing heavy is imported, since the
TUI's first frame lists the protocols from here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Registration:
    """One protocol as the layers below it know it."""

    summary: str
    """"TITLE: what a run does", in one line."""
    roles: dict[str, str]
    """The roles its agents play -> who plays it ("DEBATE's Scorer"); `[roles]` in config.toml may give each a
    model of its own."""


REGISTRY: dict[str, Registration] = {
    "debate": Registration(
        "DEBATE: a Scorer and a devil's-advocate Critic argue until the Critic says NO ISSUE",
        {"scorer": "DEBATE's Scorer", "critic": "DEBATE's Critic (the devil's advocate)",
         "tie_breaker": "DEBATE's Tie-Breaker"}),
    "chateval": Registration(
        "ChatEval: 2-5 referees with distinct personas discuss for T turns, then average or vote",
        {"referee": "ChatEval's referees", "summarizer": "ChatEval's summarizer"}),
    "single": Registration(
        "Single judge: one G-Eval-style call per criterion (optionally N samples averaged), the baseline",
        {"judge": "The single judge (the G-Eval style baseline)"}),
    "mateval": Registration(
        "MATEval: evaluators discuss one error type per round with feedback; a summarizer locates the errors",
        {"evaluator": "MATEval's evaluators", "feedback": "MATEval's feedback agent",
         "summarizer": "MATEval's summarizer"}),
    "scaleeval": Registration(
        "ScaleEval: three speakers judge a pair, discuss until unanimous, else a person decides",
        {"speaker": "ScaleEval's speakers"}),
}
"""Name -> its registration; the module is `debate_tui.protocols.<name>`. A new protocol: its module, an entry here."""

PROTOCOLS: dict[str, str] = {name: registered.summary for name, registered in REGISTRY.items()}
"""Name -> one line on what a run does."""


def _roles() -> dict[str, str]:
    players: dict[str, list[str]] = {}
    for registered in REGISTRY.values():
        for role, who in registered.roles.items():
            players.setdefault(role, []).append(who)
    return {role: " and ".join(said) for role, said in players.items()}


ROLES: dict[str, str] = _roles()
"""Every role some protocol's agents play -> who plays it, in registration order (a role two protocols share: both)."""
