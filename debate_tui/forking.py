"""A fork: what if a person had stepped in after turn N. A copy of a session cut at N, plus a change, resumed.

The fork is an ordinary new session whose first N completed turns are the
original's, copied verbatim, and which records where it came from
(`Session.forked_from`). The change is made as the TUI makes it during a run:
a remark is a `HumanAction` "inject" recorded after turn N (the runner puts it
into every prompt from turn N+1 on), and another model is the agents' model
for the calls still to come. Running it is a resume: the runner replays the
copied turns (no call is made for them) so the protocol rebuilds the state it
had after turn N, and asks the models from there on, to the protocol's end.

What a person did after turn N in the original (a remark, an override, a
decision) is not copied: the fork starts from the moment just after turn N.
Its usage counts the calls the fork makes itself, not the copied turns'.

The CLI (`debate-tui fork`) and the TUI (the debate screen's fork key) both
come here; neither builds a fork its own way.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from debate_tui.choices import CONNECTION
from debate_tui.domain import AgentSpec, ForkOrigin, HumanAction, Session, Turn, Usage
from debate_tui.inputs import InputError, check_api_base
from debate_tui.llm import DEMO_MODEL
from debate_tui.protocols.common import name_key
from debate_tui.textsafe import one_line


class ForkError(InputError):
    """A fork that cannot be made; the message says why in one line."""


@dataclass(frozen=True)
class ForkChange:
    """What the fork does differently from turn N+1 on: all empty is a plain copy cut at N, resumed."""

    remark: str | None = None
    """Injected before turn N+1, as the TUI's inject key does."""
    model: str | None = None
    """Every agent's model for the turns still to come (`--model`)."""
    agent_models: Mapping[str, str] = field(default_factory=dict)
    """Agent name or role -> its model (`--agent-model ROLE=M`), over `model`."""
    api_base: str | None = None
    """Where the new models are served (`--api-base`); a changed agent keeps no server of its old model."""
    model_settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Each model's configured settings (`Choices.model_settings`): a new model's api_base, key variable and window."""


def completed_turns(session: Session) -> int:
    """The turns a fork can be cut after: those that completed (failed tries are not counted)."""
    return sum(1 for turn in session.turns if turn.error is None)


def cut_turns(turns: list[Turn], at: int) -> list[Turn]:
    """The recorded turns up to the `at`-th completed one, in the order they were recorded (the failed tries
    among them included, as the original has them); none for 0."""
    if at == 0:
        return []
    done = 0
    for index, turn in enumerate(turns):
        done += turn.error is None
        if done == at:
            return [t.model_copy(deep=True) for t in turns[:index + 1]]
    raise ForkError(f"the session has only {done} completed turns")


def check_cut(session: Session, at: int) -> None:
    """N must lie in 0..the session's completed turns."""
    total = completed_turns(session)
    if not 0 <= at <= total:
        raise ForkError(f"--at {at}: session {session.id} has {total} completed turn{'s' if total != 1 else ''}; "
                        f"fork at 0..{total}")


def check_not_running(session: Session, locked: bool) -> None:
    """The original must be over or stopped: a run still going (or one whose process died without saying so:
    resume it first) would go on changing what the fork copies."""
    if locked:
        raise ForkError(f"session {session.id} is running (its lock is held): fork it when it has stopped")
    if session.status == "running":
        raise ForkError(f"session {session.id} is saved as running (interrupted?): resume it, or wait for it to end, "
                        "before forking it")


def fork_session(original: Session, at: int, change: ForkChange, *, who: str = "user") -> Session:
    """A new session: `original` cut after its `at`-th completed turn, with `change` made; ForkError (an
    InputError) when the cut or a model cannot be used. The original is not touched."""
    check_cut(original, at)
    agents = changed_agents(original.agents, change)
    actions = [action.model_copy(deep=True) for action in original.actions if action.after_turn < at]
    if change.remark and change.remark.strip():
        actions.append(HumanAction(kind="inject", after_turn=at, text=change.remark.strip(), who=who))
    return Session(
        protocol=original.protocol, options=copy.deepcopy(original.options),
        criteria=[c.model_copy() for c in original.criteria], agents=agents, task=original.task.model_copy(),
        turns=cut_turns(original.turns, at), actions=actions, state=copy.deepcopy(original.state), usage=Usage(),
        spec=original.spec, forked_from=ForkOrigin(session=original.id, turns=at),
    )


def changed_agents(agents: list[AgentSpec], change: ForkChange) -> list[AgentSpec]:
    """Copies of `agents`, each with the model `change` gives it (by name, by role, then for all)."""
    if change.api_base:
        check_api_base(change.api_base, "--api-base (API base)")
    wanted = _models_by_agent(agents, change)
    copies = []
    for agent in agents:
        mine = agent.model_copy(deep=True)
        model = wanted.get(agent.name)
        if model is not None and model != agent.model:
            _use_model(mine, model, change)
        copies.append(mine)
    return copies


def _models_by_agent(agents: list[AgentSpec], change: ForkChange) -> dict[str, str]:
    """Agent name -> its new model; an `agent_models` key names an agent, else a role (all its agents)."""
    chosen = {agent.name: change.model for agent in agents if change.model and agent.role != "human"}
    by_role: dict[str, str] = {}
    by_name: dict[str, str] = {}
    roles = {agent.role for agent in agents}
    for key, model in change.agent_models.items():
        named = [agent.name for agent in agents if name_key(agent.name) == name_key(key)]
        role = name_key(key).replace("-", "_")
        if named:
            by_name.update(dict.fromkeys(named, model))
        elif role in roles:
            by_role[role] = model
        else:
            raise ForkError(f"--agent-model: no agent or role named {key!r}; agents: "
                            f"{', '.join(a.name for a in agents)}; roles: {', '.join(sorted(roles))}")
    chosen |= {agent.name: by_role[agent.role] for agent in agents if agent.role in by_role}
    chosen |= by_name
    for model in chosen.values():
        _check_model(model)
    return chosen


def _check_model(model: str) -> None:
    if not model.strip():
        raise ForkError("a model for the fork cannot be empty")
    try:
        one_line(model)
    except ValueError as exc:
        raise ForkError(f"model {exc}") from None


def _use_model(agent: AgentSpec, model: str, change: ForkChange) -> None:
    """`agent` answers with `model` from now on: its reply cap and temperature stay, its old model's server
    and key variable go, the new model's configured ones (and `--api-base`) come."""
    settings = change.model_settings.get(model, {})
    params = {key: value for key, value in agent.params.items() if key not in CONNECTION}
    if model != DEMO_MODEL:
        params |= {key: settings[key] for key in CONNECTION if key in settings}
        if change.api_base:
            params["api_base"] = change.api_base
    agent.model, agent.params, agent.context_window = model, params, settings.get("context_window")

