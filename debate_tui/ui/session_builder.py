"""The setup form's side of the session factory: what the form offers, and its choices handed to the factory.

The catalog (protocol specs, criteria and personas) is loaded once, in a
thread, by `load_catalog`; after that nothing here imports or reads a file, so
validating and starting never block a key press. Sessions are built by
`debate_tui.factory`, as for `run`: the same choices give the same session,
and what `run` refuses the form refuses with the same reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from debate_tui.catalog import Catalog
from debate_tui.choices import Choices
from debate_tui.domain import AgentSpec, Criterion, Persona, Task
from debate_tui.factory import Built, agents_for, build_session
from debate_tui.inputs import InputError, check_text, unify_line_endings
from debate_tui.llm import DEMO_MODEL
from debate_tui.protocols.spec import ProtocolSpec
from debate_tui.ui.opening import FORM_FIELDS, INPUT_LABELS


@dataclass
class SetupCatalog:
    """What the setup screen offers, loaded once off the event loop."""

    catalog: Catalog
    protocols: dict[str, ProtocolSpec]
    problems: list[str] = field(default_factory=list)

    @property
    def criteria(self) -> dict[str, Criterion]:
        """Qualified name ("summeval/coherence") -> criterion, in catalog order."""
        return self.catalog.criteria

    @property
    def personas(self) -> dict[str, Persona]:
        return self.catalog.personas

    def inputs(self, protocol: str) -> tuple[str, ...]:
        spec = self.protocols.get(protocol)
        return spec.inputs if spec else ()

    def qualify(self, name: str) -> str | None:
        """A criterion name as typed (bare or qualified, any case) -> its qualified catalog name."""
        try:
            found = self.catalog.find_criterion(name)
        except ValueError:
            return None
        return next(qualified for qualified, criterion in self.criteria.items() if criterion is found)

    def judges(self, protocol: str, criterion: Criterion) -> bool:
        """Whether `protocol` can judge `criterion` (MATEval only error types, the others only scores)."""
        spec = self.protocols.get(protocol)
        return spec is None or criterion.kind == spec.criteria.kind

    def default_criteria(self, protocol: str) -> list[str]:
        """The criteria the protocol judges when none are picked, as the form ticks them."""
        spec = self.protocols.get(protocol)
        return [q for name in (spec.criteria.default if spec else ()) if (q := self.qualify(name))]


def load_catalog(choices: Choices) -> SetupCatalog:
    """Every protocol's spec, the built-in criteria and personas and the user's (the directories the run spec
    names); meant for a thread worker."""
    from debate_tui.factory import catalog_of
    from debate_tui.protocols import PROTOCOLS, get_protocol

    protocols: dict[str, ProtocolSpec] = {}
    problems: list[str] = []
    for name in PROTOCOLS:
        try:
            protocols[name] = get_protocol(name)
        except Exception as exc:  # one broken protocol must not hide the others
            problems.append(f"protocol {name} unavailable: {type(exc).__name__}: {exc}")
    return SetupCatalog(catalog_of(choices), protocols, problems)


def default_model(choices: Choices) -> str:
    """The model of every agent the form does not give one: the form's, else default_model, else the demo."""
    return choices.model or choices.default_model or DEMO_MODEL


def build_agents(catalog: SetupCatalog, choices: Choices) -> list[AgentSpec]:
    """The agents the factory would give these choices, for the form's agent rows; InputError otherwise."""
    return agents_for(choices, catalog.catalog)


def build_task(texts: dict[str, str]) -> Task:
    """The texts typed or loaded, checked; an empty box is no input (the factory says if one is needed)."""
    values: dict[str, str] = {}
    for key, raw in texts.items():
        if raw.strip():
            values[key] = check_text(unify_line_endings(raw), INPUT_LABELS[key])
        elif key == "text":
            raise InputError(f"{INPUT_LABELS[key]} is empty")
    return Task(**values)


def build(catalog: SetupCatalog, choices: Choices, texts: dict[str, str]) -> Built:
    """A ready-to-run session from the factory; InputError with its one-line reason otherwise."""
    return build_session(build_task(texts), choices, catalog.catalog, input_names=FORM_FIELDS)
