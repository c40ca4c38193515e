"""Criteria prompt variants for robustness runs (ScaleEval, Chern et al. 2024, Table 7).

The paper perturbs the rubric a judge reads and watches whether its verdicts
hold: *shortened* drops the guiding label of each level ("Not Helpful - "),
*gibberish* swaps letters for symbols, *shuffled* scrambles the word order,
*flipped* writes every word backwards, *masked* blanks out letters. Any rubric
can be perturbed: the level descriptions (`Criterion.steps`, "N: text") and the
description. Random choices come from a generator seeded with the run's seed,
the variant and the criterion's name, so the same run always shows the same
text, and drawing it never disturbs the protocol's own random draws.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from debate_tui.domain import Criterion

Variant = Literal["general", "shortened", "gibberish", "shuffled", "flipped", "masked"]
VARIANTS: tuple[Variant, ...] = ("general", "shortened", "gibberish", "shuffled", "flipped", "masked")

_LEVEL = re.compile(r'^\s*"?(-?\d+)"?\s*[:.)]\s*"?(.*?)"?\s*$', re.S)
_LABEL = re.compile(r"^(?:[A-Z][\w’']*\s+){0,3}[A-Z][\w’']*\s+[-–]\s+")
"""A level's guiding label: up to four capitalised words and a dash, as in "Highly Helpful - "."""
_TRAILING = re.compile(r"^(.*?)([.,;:!?\"”)]*)$", re.S)
_SYMBOLS = "$#%*&@!?/+=()€0123456789"
GIBBERISH_RATE = 0.35
MASK_RATE = 0.3


def levels(criterion: Criterion) -> list[tuple[str, str]]:
    """The rubric as (level, description) pairs; unnumbered steps are numbered up from the scale's low end."""
    pairs = []
    for number, step in enumerate(criterion.steps, start=int(criterion.low)):
        m = _LEVEL.match(step)
        pairs.append((m.group(1), m.group(2)) if m else (str(number), step.strip()))
    return pairs


def _shortened(text: str, rng: random.Random) -> str:
    return _LABEL.sub("", text, count=1)


def _per_letter(rate: float, replacement: Callable[[random.Random], str]) -> Callable[[str, random.Random], str]:
    """A perturbation that replaces each letter, with probability `rate`, by `replacement(rng)`."""

    def perturb(text: str, rng: random.Random) -> str:
        return "".join(replacement(rng) if ch.isalpha() and rng.random() < rate else ch for ch in text)

    return perturb


def _shuffled(text: str, rng: random.Random) -> str:
    words = text.split()
    rng.shuffle(words)
    return " ".join(words)


def _flip_word(word: str) -> str:
    core, trailing = _TRAILING.match(word).groups()  # type: ignore[union-attr]
    return core[::-1] + trailing


def _flipped(text: str, rng: random.Random) -> str:
    return " ".join(_flip_word(word) for word in text.split())


PERTURB: dict[Variant, Callable[[str, random.Random], str]] = {
    "general": lambda text, rng: text,
    "shortened": _shortened,
    "gibberish": _per_letter(GIBBERISH_RATE, lambda rng: rng.choice(_SYMBOLS)),
    "shuffled": _shuffled,
    "flipped": _flipped,
    "masked": _per_letter(MASK_RATE, lambda rng: "_"),
}


def vary(criterion: Criterion, variant: Variant, seed: int) -> Criterion:
    """The criterion as the judges will read it under `variant`; "general" returns it unchanged."""
    if variant == "general":
        return criterion
    perturb = PERTURB[variant]
    rng = random.Random(f"{seed}/{variant}/{criterion.name}")
    description = criterion.description if variant == "shortened" else perturb(criterion.description, rng)
    steps = [f"{level}: {perturb(text, rng)}" for level, text in levels(criterion)]
    return criterion.model_copy(update={"description": description, "steps": steps})


def rubric(criterion: Criterion) -> str:
    """The rubric in the paper's format: the description, then one `"N": "text"` line per level."""
    lines = [criterion.description]
    lines += [f'"{level}": "{text}"' for level, text in levels(criterion)]
    return "\n".join(line for line in lines if line)
