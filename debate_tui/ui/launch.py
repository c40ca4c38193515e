"""From what the command line asks (`TuiRequest`) to what the app opens with.

The same task options as `run`, built by the same session factory: with
`--autostart` the session is built exactly as `run` builds it (the remembered
choices play no part) and starts at once, or the setup screen opens with the
factory's reason on it; without it they prefill the setup screen over the
remembered choices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from debate_tui.config import Config, Resolved, load_config, resolve_current
from debate_tui.domain import Session, Task
from debate_tui.engine.condense import history_state
from debate_tui.factory import build_session
from debate_tui.inputs import InputError
from debate_tui.llm import DEMO_MODEL
from debate_tui.ui.locations import ui_state_path
from debate_tui.ui.opening import TuiRequest, read_texts, top_of_form
from debate_tui.ui.state import SetupChoices, UiState

if TYPE_CHECKING:
    from debate_tui.batch.ladder import Tier


@dataclass
class Launch:
    state: UiState = field(default_factory=UiState)
    choices: SetupChoices = field(default_factory=SetupChoices)
    texts: dict[str, str] = field(default_factory=dict)
    criteria_file: str | None = None
    """`--criteria FILE.toml`: loaded into the form's own criteria once the catalog is there."""
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
    sources: dict[str, str] = field(default_factory=dict)
    """Where the form's protocol, model and API base came from, for their tooltips (see `prefill`)."""
    session_state: dict[str, object] = field(default_factory=dict)
    """What --max-history-tokens and --condense keep in each new session, as `run` keeps them."""
    ladder: list[Tier] = field(default_factory=list)
    """`--policy`: the tiers, the first of which is `session`."""
    policy: str | None = None


def launch_from(request: TuiRequest, state: UiState, texts: dict[str, str] | None = None) -> Launch:
    """Raises InputError (one-line reason) when a given file or the configuration cannot be read.

    `texts`: the files already read for the first frame (`Opening`), not read twice (stdin cannot be).
    """
    notes: list[str] = []
    resolved = resolve_current(request.config_flags)
    config = resolved.config
    sessions_dir = Path(request.sessions_dir).expanduser() if request.sessions_dir else None
    launch = Launch(state=state, step=request.step, sessions_dir=sessions_dir, notes=notes, config=config,
                    criteria_file=request.choices.criteria_file, theme=config.theme)
    launch.texts = read_texts(request.texts, notes.append) if texts is None else texts
    launch.session_state = history_state(**request.history) if request.history else {}
    if request.policy:
        _ladder(launch, request.policy)
    elif request.autostart:
        try:
            built = build_session(task_of(launch.texts), request.choices, config)
            launch.session, launch.demo = built.session, built.demo
            notes.extend(built.warnings)
        except InputError as exc:
            launch.refusal = str(exc)
    launch.choices = prefill(SetupChoices() if request.autostart else state.setup, request, config, resolved=resolved,
                             config_newer=config_is_newer(resolved.path, ui_state_path()), sources=launch.sources)
    return launch


def _ladder(launch: Launch, policy: str) -> None:
    """The ladder's tiers and tier 1's session; InputError (one line) when the policy cannot be run live."""
    from debate_tui.batch.ladder import LadderError, load_tiers, tier_session

    try:
        launch.ladder = load_tiers(Path(policy).expanduser(), task_of(launch.texts))
    except LadderError as exc:
        raise InputError(str(exc)) from None
    launch.session, launch.demo, launch.policy = tier_session(launch.ladder[0], task_of(launch.texts)), False, policy


def config_is_newer(config_file: Path, state_file: Path) -> bool:
    """Whether config.toml was saved after the remembered setup: what the person set there last then wins."""
    try:
        written = config_file.stat().st_mtime
    except OSError:
        return False
    try:
        return written > state_file.stat().st_mtime
    except OSError:
        return True


def task_of(texts: dict[str, str]) -> Task:
    """The task of the texts the command line gave; the text itself is needed to start at once."""
    if not texts.get("text"):
        raise InputError("--text is needed to start at once (--autostart)")
    return Task(**texts)


def prefill(remembered: SetupChoices, request: TuiRequest, config: Config, *, resolved: Resolved | None = None,
            config_newer: bool = False, sources: dict[str, str] | None = None) -> SetupChoices:
    """The command line wins over everything; then an environment variable, and config.toml when it was saved
    after the remembered setup (`config_newer`); then the remembered choices; then config.toml's other values
    and the defaults. `resolved` tells where config values came from; `sources` is filled with where the
    protocol, model and API base came from."""
    origins = resolved.origins if resolved is not None else {}
    path = resolved.path if resolved is not None else "config.toml"
    choices = remembered.model_copy(deep=True)
    sources = {} if sources is None else sources
    sources.update({key: "remembered from your last setup" for key in ("protocol", "model", "api_base")
                    if getattr(choices, key)})

    def configured(*setting: str) -> str | None:
        """Where a setting of config.toml or the environment comes from, when it should beat the remembered one."""
        origin = origins.get(setting)
        if origin == "file":
            return f"config.toml ({path})" if config_newer else None
        return origin if origin and not origin.startswith("flag") else None

    remembered_protocol = choices.protocol
    if origin := configured("protocol"):
        remembered_protocol, sources["protocol"] = config.protocol, origin
    if origin := configured("default_model"):
        choices.model, sources["model"] = config.default_model or "", origin
        if any(loc[0] == "models" and loc[-1] == "api_base" for loc in origins) and choices.api_base:
            choices.api_base, sources["api_base"] = "", origin  # the configured model's own api_base applies
    given = request.choices
    top = top_of_form(request, remembered_protocol, choices.text_path)
    protocol = given.protocol or remembered_protocol or config.protocol
    sources.setdefault("protocol", f"config.toml ({path})" if ("protocol",) in origins else "default")
    if given.protocol:
        sources["protocol"] = "command line"
    if protocol != choices.protocol:
        choices.options, choices.agent_models, choices.agent_personas, choices.criteria = {}, {}, {}, None
    choices.protocol, choices.text_path = protocol, top.text_path
    choices.options.update(given.options)
    if given.criteria is not None:
        choices.criteria = list(given.criteria)
    if given.personas:
        choices.personas = given.personas
    choices.agent_models.update(given.agent_models)
    if given.demo:
        choices.model, sources["model"] = DEMO_MODEL, "command line (--demo)"
    elif given.model:
        choices.model, sources["model"] = given.model, "command line"
    if given.api_base:
        choices.api_base, sources["api_base"] = given.api_base, "command line"
    for name in ("max_reply_tokens", "temperature"):
        if given.generation.get(name) is not None:
            setattr(choices, name, str(given.generation[name]))
    if given.generation.get("structured"):
        choices.structured = True
    return choices
