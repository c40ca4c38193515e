"""Built-in and user criteria and personas, stored as TOML data files.

A criteria file holds `[[criterion]]` tables, a persona file `[[persona]]`
tables. Built-in sets live beside this module; users add their own files, or
whole directories named by `criteria_dir` and `personas_dir` in the config.
A bare name that several sets define resolves to the first set: the user's
directory ("user") first, then `CRITERIA_SETS` order; `set/name` picks one
explicitly. The configuration is not read here: `load_catalog` is given the
user's directories by the front end that read it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from debate_tui.domain import Criterion, Persona
from debate_tui.inputs import InputError
from debate_tui.readfile import read_toml

HERE = Path(__file__).resolve().parent
CRITERIA_SETS = ["summeval", "topical-chat", "scaleeval", "faireval", "mateval"]
PERSONA_SETS = ["debate_critics", "chateval"]


class CatalogError(ValueError):
    """A criteria or persona name or file the user gave cannot be used."""


def _read_toml(path: Path) -> dict:
    """Bounded and checked (`readfile`): never a device or FIFO, never past DEBATE_TUI_MAX_TOML_BYTES."""
    try:
        return read_toml(path, "toml")
    except InputError as exc:
        raise CatalogError(str(exc)) from None


def _load_items(path: Path, key: str, model: type[Criterion] | type[Persona]) -> list[tuple[Any, str]]:
    """Each `[[key]]` table as `model` with its one-line `description` (a chooser's; a persona does not keep it)."""
    data = _read_toml(path)
    tables = data.get(key)
    if not isinstance(tables, list) or not tables:
        raise CatalogError(f"{path}: no [[{key}]] table found")
    items = []
    for number, table in enumerate(tables, start=1):
        where = f"{path}: [[{key}]] number {number}"
        try:
            item = model.model_validate(table)
        except ValidationError as exc:
            problem = "; ".join(f"{'.'.join(map(str, e['loc'])) or key}: {e['msg']}" for e in exc.errors())
            raise CatalogError(f"{where}: {problem}") from exc
        description = table.get("description", "")  # a table: model_validate took it
        if not isinstance(description, str):
            raise CatalogError(f"{where}: description: Input should be a valid string")
        items.append((item, description))
    return items


def load_criteria_file(path: Path) -> list[Criterion]:
    return [criterion for criterion, _ in _load_items(path, "criterion", Criterion)]


def load_personas_file(path: Path) -> list[Persona]:
    return [persona for persona, _ in _described_personas(path)]


def _described_personas(path: Path) -> list[tuple[Persona, str]]:
    return _load_items(path, "persona", Persona)


@cache
def _builtin_criteria() -> dict[str, list[Criterion]]:
    return {name: load_criteria_file(HERE / "criteria" / f"{name.replace('-', '_')}.toml") for name in CRITERIA_SETS}


@cache
def _builtin_personas() -> dict[str, tuple[Persona, str]]:
    """Name -> (persona, its one-line description); a name two sets define is the first set's."""
    personas: dict[str, tuple[Persona, str]] = {}
    for name in PERSONA_SETS:
        for persona, description in _described_personas(HERE / "personas" / f"{name}.toml"):
            personas.setdefault(persona.name, (persona, description))
    return personas


T = TypeVar("T")


def _load_dir(directory: Path | None, loader: Callable[[Path], list[T]]) -> list[T]:
    if directory is None:
        return []
    return [item for path in sorted(directory.glob("*.toml")) for item in loader(path)]


@dataclass(frozen=True)
class Catalog:
    """The criteria and personas a run may name: the built-in sets, and the user's directories first.

    A value: built once at the edge (`load_catalog`, with the directories the configuration names)
    and passed down, so resolving a name never reads a file or the configuration.
    """

    sets: dict[str, list[Criterion]]
    """Set name -> its criteria; the user's directory ("user") first when there is one."""
    personas: dict[str, Persona]
    descriptions: dict[str, str] = field(default_factory=dict)
    """Persona name -> one line on who it is, for a chooser; kept here, not on the persona a session stores."""

    def described_personas(self) -> dict[str, str]:
        """Every persona's name, sorted -> its one-line description ("" where its file gives none)."""
        return {name: self.descriptions.get(name, "") for name in sorted(self.personas)}

    @property
    def criteria(self) -> dict[str, Criterion]:
        """Qualified name ("summeval/coherence") -> criterion, in catalog order."""
        return {f"{set_name}/{c.name}": c for set_name, items in self.sets.items() for c in items}

    def criterion_names(self) -> list[str]:
        """Every name a user can type: bare names first, then qualified ones."""
        bare = list(dict.fromkeys(c.name for items in self.sets.values() for c in items))
        return bare + list(self.criteria)

    def find_criterion(self, name: str) -> Criterion:
        """A bare name (the first set that has it) or a qualified one, any case."""
        set_name, _, bare = name.strip().rpartition("/")
        candidates = self.sets.get(set_name, []) if set_name else [c for items in self.sets.values() for c in items]
        for criterion in candidates:
            if criterion.name.lower() == bare.lower():
                return criterion
        raise CatalogError(f"unknown criterion {name!r}; valid: {', '.join(self.criterion_names())}")

    def resolve_criteria(self, names: Iterable[str], custom: Iterable[Criterion] = ()) -> list[Criterion]:
        """Names as typed, a person's own criteria (`custom`, by name) first; one criterion at least."""
        own = {c.name: c for c in custom}
        wanted = [name.strip() for name in names if name.strip()]
        if not wanted:
            raise CatalogError("no criterion given")
        return [own.get(name) or self.find_criterion(name) for name in wanted]

    def find_persona(self, name: str) -> Persona:
        key = name.strip().lower().replace(" ", "-").replace("_", "-")
        if key in self.personas:
            return self.personas[key]
        raise CatalogError(f"unknown persona {name!r}; valid: {', '.join(self.personas)}")

    def resolve_personas(self, spec: str) -> list[Persona]:
        """`--personas`: comma-separated names, or a .toml file of personas."""
        spec = spec.strip()
        if spec.endswith(".toml"):
            return load_personas_file(Path(spec).expanduser())
        return [self.find_persona(name) for name in spec.split(",") if name.strip()]


def load_catalog(criteria_dir: Path | None = None, personas_dir: Path | None = None) -> Catalog:
    """The built-in sets with the user's directories (as the configuration names them) over them."""
    user = _load_dir(criteria_dir, load_criteria_file)
    sets = {"user": user, **_builtin_criteria()} if user else dict(_builtin_criteria())
    users = _load_dir(personas_dir, _described_personas)
    described = {**_builtin_personas(), **{persona.name: (persona, line) for persona, line in users}}
    return Catalog(sets, {name: p for name, (p, _) in described.items()},
                   {name: line for name, (_, line) in described.items()})


def builtin() -> Catalog:
    """The built-in criteria and personas only: what a protocol's defaults name."""
    return load_catalog()


def split_criteria(spec: str) -> tuple[list[str], Path | None]:
    """`--criteria` as typed: names, or the path of a criteria TOML file."""
    spec = spec.strip()
    if spec.endswith(".toml"):
        return [], Path(spec).expanduser()
    return [part.strip() for part in spec.split(",") if part.strip()], None


def find_criterion(name: str) -> Criterion:
    """A built-in criterion by name (bare or qualified)."""
    return builtin().find_criterion(name)


def find_persona(name: str) -> Persona:
    """A built-in persona by name."""
    return builtin().find_persona(name)


def resolve_criteria(spec: str) -> list[Criterion]:
    """`--criteria` against the built-in sets: comma-separated names, or a .toml file."""
    names, path = split_criteria(spec)
    return load_criteria_file(path) if path else builtin().resolve_criteria(names)


def resolve_personas(spec: str) -> list[Persona]:
    """`--personas` against the built-in personas."""
    return builtin().resolve_personas(spec)
