"""The protocols' names, each with one line on what a run does: the registration, below everything.

Plain data, read by the configuration (which checks a protocol name) and by
`debate_tui.protocols` (which imports a protocol's module by its name) alike,
so neither reaches up to the other; nothing heavy is imported, since the TUI's
first frame lists the protocols from here.
"""

from __future__ import annotations

PROTOCOLS: dict[str, str] = {
    "debate": "DEBATE: a Scorer and a devil's-advocate Critic argue until the Critic says NO ISSUE",
    "chateval": "ChatEval: 2-5 referees with distinct personas discuss for T turns, then average or vote",
    "single": "Single judge: one G-Eval-style call per criterion (optionally N samples averaged), the baseline",
    "mateval": "MATEval: evaluators discuss one error type per round with feedback; a summarizer locates the errors",
    "scaleeval": "ScaleEval: three speakers judge a pair, discuss until unanimous, else a person decides",
}
"""Name -> one line on what a run does; the module is `debate_tui.protocols.<name>`."""
