"""The one precedence order of every setting, declared once, and the one pick: the first layer that sets it wins.

    what a person types (a flag, the setup form) > environment > config.toml > remembered setup > built-in default

config.toml goes under the remembered setup when it was saved before it (`order(config_newer=False)`): what a
person set last wins. Inside the configured layers a reply setting has more specific places, the most specific
first (`SCOPES`): `[models."M"]` > `[generation.roles.R]` > `[generation]` (where its DEBATE_TUI_* variable
goes over the file's key, by the order above).

The configuration's merge (`config.merge`), a run's choices (`choices.resolve`, `resolver`) and each agent's reply
settings (`generation.Generation`) take their layers from here, so a reorder is one edit (and one failing test,
tests/test_precedence_order.py). Plain data: the TUI resolves its first frame with it before anything heavy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import StrEnum
from typing import TypeVar

Value = TypeVar("Value")
Key = TypeVar("Key")


class Layer(StrEnum):
    """Where a value may come from, the highest first; the value is how a person reads it (the form's hover)."""

    TYPED = "command line"
    """A flag, or what a person set on the setup form."""
    ENVIRONMENT = "environment"
    """A DEBATE_TUI_* variable."""
    CONFIG_FILE = "config.toml"
    REMEMBERED = "remembered from your last setup"
    DEFAULT = "default"


ORDER: tuple[Layer, ...] = tuple(Layer)
"""The layers, the highest first: the declaration order of `Layer`."""


class Scope(StrEnum):
    """The configured places of a reply setting, the most specific first (its TOML key is `[generation]`'s)."""

    MODELS = "models"
    ROLES = "roles"
    GENERATION = "generation"


SCOPES: tuple[Scope, ...] = tuple(Scope)
"""The configured places of a reply setting, the most specific first."""


REPLY_ORDER: tuple[Layer | Scope, ...] = tuple(
    place for layer in ORDER if layer not in (Layer.ENVIRONMENT, Layer.REMEMBERED)
    for place in (SCOPES if layer is Layer.CONFIG_FILE else (layer,)))
"""A reply setting's layers, the highest first: `ORDER` with config.toml as its scopes. Its variable sets
`[generation]`'s value (`config.merge`), and what the form remembers was typed there (`Choices.generation`, under
the command line by `ORDER`), so neither is a layer of its own here."""


def described(layers: Sequence[Layer | Scope], names: Mapping[Scope, str]) -> str:
    """An order as a person reads it: "command line > environment > ..." (a scope by its TOML table)."""
    return " > ".join(names[layer] if isinstance(layer, Scope) else str(layer) for layer in layers)


def order(*, config_newer: bool = True) -> tuple[Layer, ...]:
    """The layers, the highest first; config.toml under the remembered setup when it was saved before it."""
    if config_newer:
        return ORDER
    swapped = {Layer.CONFIG_FILE: Layer.REMEMBERED, Layer.REMEMBERED: Layer.CONFIG_FILE}
    return tuple(swapped.get(layer, layer) for layer in ORDER)


def ranked(by_layer: Mapping[Key, Value], layers: Sequence[Key]) -> list[Value]:
    """`by_layer`'s values the highest layer first (a layer it does not have is skipped)."""
    return [by_layer[layer] for layer in layers if layer in by_layer]


def is_given(value: object) -> bool:
    return value is not None


def first(values: Iterable[Value | None], is_set: Callable[[Value], bool] = is_given) -> Value | None:
    """The pick: the first value (of a ranked list) that sets it; None when none does."""
    return next((value for value in values if value is not None and is_set(value)), None)


def merged_tables(by_layer: Mapping[Key, Mapping[str, Value]], layers: Sequence[Key]) -> dict[str, Value]:
    """Tables of settings merged key by key: each key from the highest layer that sets it."""
    ranked_tables = ranked(by_layer, layers)
    keys = dict.fromkeys(key for table in reversed(ranked_tables) for key in table)
    return {key: value for key in keys if (value := first(table.get(key) for table in ranked_tables)) is not None}
