"""Built-in and user criteria and personas, stored as TOML data files.

A criteria file holds `[[criterion]]` tables, a persona file `[[persona]]`
tables. Built-in sets live beside this module; users add their own files, or
whole directories named by `criteria_dir` and `personas_dir` in the config.
A bare name that several sets define resolves to the first set: the user's
directory ("user") first, then `CRITERIA_SETS` order; `set/name` picks one
explicitly.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

from pydantic import ValidationError

from debate_tui.domain import Criterion, Persona

HERE = Path(__file__).resolve().parent
CRITERIA_SETS = ["summeval", "topical-chat", "scaleeval", "faireval", "mateval"]
PERSONA_SETS = ["debate_critics", "chateval"]


class CatalogError(ValueError):
    """A criteria or persona name or file the user gave cannot be used."""


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{path}: not UTF-8 text") from exc
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{path}: {exc}") from exc


def _load_items(path: Path, key: str, model: type[Criterion] | type[Persona]) -> list:
    data = _read_toml(path)
    tables = data.get(key)
    if not isinstance(tables, list) or not tables:
        raise CatalogError(f"{path}: no [[{key}]] table found")
    items = []
    for number, table in enumerate(tables, start=1):
        try:
            items.append(model.model_validate(table))
        except ValidationError as exc:
            problem = "; ".join(f"{'.'.join(map(str, e['loc'])) or key}: {e['msg']}" for e in exc.errors())
            raise CatalogError(f"{path}: [[{key}]] number {number}: {problem}") from exc
    return items


def load_criteria_file(path: Path) -> list[Criterion]:
    return _load_items(path, "criterion", Criterion)


def load_personas_file(path: Path) -> list[Persona]:
    return _load_items(path, "persona", Persona)


@cache
def _builtin_criteria() -> dict[str, list[Criterion]]:
    return {name: load_criteria_file(HERE / "criteria" / f"{name.replace('-', '_')}.toml") for name in CRITERIA_SETS}


@cache
def _builtin_personas() -> dict[str, Persona]:
    personas: dict[str, Persona] = {}
    for name in PERSONA_SETS:
        for persona in load_personas_file(HERE / "personas" / f"{name}.toml"):
            personas.setdefault(persona.name, persona)
    return personas


def _user_dirs() -> tuple[Path | None, Path | None]:
    from debate_tui.config import load_config

    config = load_config()
    return config.criteria_dir, config.personas_dir


def _load_dir(directory: Path | None, loader) -> list:
    if directory is None:
        return []
    return [item for path in sorted(directory.glob("*.toml")) for item in loader(path)]


def criteria_sets() -> dict[str, list[Criterion]]:
    """Criteria per set: the user's directory first (if configured), then the built-in sets."""
    user = _load_dir(_user_dirs()[0], load_criteria_file)
    return {"user": user, **_builtin_criteria()} if user else _builtin_criteria()


def all_personas() -> dict[str, Persona]:
    """Personas by name; the user's directory (if configured) overrides built-ins of the same name."""
    user = {p.name: p for p in _load_dir(_user_dirs()[1], load_personas_file)}
    return {**_builtin_personas(), **user}


def criterion_names() -> list[str]:
    """Every name a user can type: bare names first, then qualified ones."""
    bare: list[str] = []
    qualified: list[str] = []
    for set_name, criteria in criteria_sets().items():
        for criterion in criteria:
            if criterion.name not in bare:
                bare.append(criterion.name)
            qualified.append(f"{set_name}/{criterion.name}")
    return bare + qualified


def find_criterion(name: str) -> Criterion:
    sets = criteria_sets()
    if "/" in name:
        set_name, _, bare = name.partition("/")
        candidates = sets.get(set_name, [])
    else:
        bare = name
        candidates = [c for criteria in sets.values() for c in criteria]
    for criterion in candidates:
        if criterion.name.lower() == bare.lower():
            return criterion
    raise CatalogError(f"unknown criterion {name!r}; valid: {', '.join(criterion_names())}")


def resolve_criteria(spec: str) -> list[Criterion]:
    """Turn `--criteria` (comma-separated names, or a .toml file) into criteria."""
    spec = spec.strip()
    if spec.endswith(".toml"):
        return load_criteria_file(Path(spec))
    names = [part.strip() for part in spec.split(",") if part.strip()]
    if not names:
        raise CatalogError("no criterion given")
    return [find_criterion(name) for name in names]


def find_persona(name: str, extra: dict[str, Persona] | None = None) -> Persona:
    personas = {**all_personas(), **(extra or {})}
    key = name.strip().lower().replace(" ", "-").replace("_", "-")
    if key in personas:
        return personas[key]
    raise CatalogError(f"unknown persona {name!r}; valid: {', '.join(personas)}")


def resolve_personas(spec: str) -> list[Persona]:
    """Turn `--personas` (comma-separated names, or a .toml file) into personas."""
    spec = spec.strip()
    if spec.endswith(".toml"):
        return load_personas_file(Path(spec))
    return [find_persona(name) for name in spec.split(",") if name.strip()]
