"""From what the command line asks (`TuiRequest`) to what the app opens with.

The same task options as `run`, resolved by the same rule and built by the
same session factory: with `--autostart` the session is built exactly as `run`
builds it (the remembered choices play no part) and starts at once, or the
setup screen opens with the factory's reason on it; without it they fill the
setup screen over the remembered choices.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from debate_tui.choices import DEFAULT_PROTOCOL, Choices
from debate_tui.config import Config, load_config, resolve_current
from debate_tui.domain import HistorySettings, Session, Task
from debate_tui.engine.condense import history_state
from debate_tui.factory import build_session
from debate_tui.inputs import InputError
from debate_tui.registry import PROTOCOLS
from debate_tui.resolver import resolve_choices
from debate_tui.ui.locations import ui_state_path
from debate_tui.ui.opening import FORM_FIELDS, TuiRequest, config_is_newer, read_texts
from debate_tui.ui.state import UiState

if TYPE_CHECKING:
    from debate_tui.meta.ladder import Tier


@dataclass
class Launch:
    state: UiState = field(default_factory=UiState)
    choices: Choices = field(default_factory=lambda: resolve_choices(Choices(), resolve_current({})))
    """The run's spec, resolved (each value's origin in `choices.origins`): what the form shows and edits."""
    defaults: Choices | None = None
    """The same spec without the remembered setup: what the form's reset key (setup.reset) goes back to; None:
    nothing was remembered, or it played no part (--autostart)."""
    texts: dict[str, str] = field(default_factory=dict)
    session: Session | None = None
    """Set with --autostart: the session to run at once."""
    refusal: str | None = None
    """With --autostart: why the session factory refused the choices (shown on the setup screen)."""
    demo: bool = True
    step: bool = False
    sessions_dir: Path | None = None
    notes: list[str] = field(default_factory=list)
    theme: str | None = None
    """The theme the configuration names (config.toml, DEBATE_TUI_THEME): over the remembered one."""
    config: Config = field(default_factory=load_config)
    """The configuration the command line resolves to: read here, at the edge, and passed down."""
    history: HistorySettings = field(default_factory=HistorySettings)
    """What --max-history-tokens and --condense keep in each new session, as `run` keeps them."""
    ladder: list[Tier] = field(default_factory=list)
    """`--policy`: the tiers, the first of which is `session`."""
    policy: str | None = None

    @property
    def criteria_file(self) -> str | None:
        """`--criteria FILE.toml`: loaded into the form's own criteria once the catalog is there."""
        return self.choices.criteria_file

    @property
    def sources(self) -> dict[str, str]:
        """Where each choice came from, for the form's tooltips."""
        return dict(self.choices.origins)


def launch_from(request: TuiRequest, state: UiState, texts: dict[str, str] | None = None) -> Launch:
    """Raises InputError (one-line reason) when a given file or the configuration cannot be read.

    `texts`: the files already read for the first frame (`Opening`), not read twice (stdin cannot be).
    """
    from debate_tui.envfile import notice

    notes: list[str] = [read] if (read := notice()) is not None else []
    resolved = resolve_current(request.config_flags)
    config = resolved.config
    sessions_dir = Path(request.sessions_dir).expanduser() if request.sessions_dir else None
    launch = Launch(state=state, step=request.step, sessions_dir=sessions_dir, notes=notes, config=config,
                    theme=config.theme)
    launch.texts = read_texts(request.choices.inputs, notes.append) if texts is None else texts
    launch.history = history_state(**request.history) if request.history else HistorySettings()
    remembered = None if request.autostart else fitted(state.setup, launch.texts, notes)
    config_newer = config_is_newer(resolved.path, ui_state_path())
    launch.choices = resolve_choices(request.choices, resolved, remembered, config_newer=config_newer)
    if remembered is not None:
        launch.defaults = resolve_choices(request.choices, resolved, config_newer=config_newer)
    if request.policy:
        _ladder(launch, request.policy)
    elif request.autostart:
        try:
            built = build_session(task_of(launch.texts), launch.choices)
            launch.session, launch.demo = built.session, built.demo
            notes.extend(built.warnings)
        except InputError as exc:
            launch.refusal = str(exc)
    return launch


def fitted(remembered: Choices, texts: dict[str, str], notes: list[str]) -> Choices:
    """The remembered setup where it fits the texts given: a protocol that cannot judge them (ScaleEval, which
    compares two answers, remembered when one text is given) gives way to the default protocol, with its own
    criteria, options and agents, and a note says so. Without a text the form shows what was remembered.

    After one ScaleEval run, the README's first command (`--text examples/story.txt`, then ctrl+r) was refused
    with "give the second with --text-b"."""
    from debate_tui.factory import protocol_spec

    if not remembered.protocol or remembered.protocol not in PROTOCOLS or not texts.get("text"):
        return remembered
    spec = protocol_spec(remembered.protocol)
    try:
        spec.check_inputs(Task(**{key: value for key, value in texts.items() if value}), FORM_FIELDS)
    except InputError as exc:
        notes.append(f"The last setup used {spec.title}, which does not fit these texts ({exc}); this run starts "
                     f"from {protocol_spec(DEFAULT_PROTOCOL).title}'s defaults instead.")
        return replace(remembered, protocol=None, criteria=None, options={}, personas=None, agent_models={},
                       agent_personas={})
    return remembered


def _ladder(launch: Launch, policy: str) -> None:
    """The ladder's tiers and tier 1's session; InputError (one line) when the policy cannot be run live."""
    from debate_tui.meta.climb import tier_session
    from debate_tui.meta.ladder import LadderError, load_tiers

    try:
        launch.ladder = load_tiers(Path(policy).expanduser(), task_of(launch.texts), launch.config.model_params,
                                   launch.notes.append)
    except LadderError as exc:
        raise InputError(str(exc)) from None
    launch.session, launch.demo, launch.policy = tier_session(launch.ladder[0], task_of(launch.texts)), False, policy


def task_of(texts: dict[str, str]) -> Task:
    """The task of the texts the command line gave; the text itself is needed to start at once."""
    if not texts.get("text"):
        raise InputError("--text is needed to start at once (--autostart)")
    return Task(**texts)
