"""The Textual app: wires screens to the engine, the store, themes, keymap and remembered state.

Start-up does only what the first frame needs (arguments, a quick read of the
remembered state, themes, keymap, the top of the setup screen: see
`ui.opening`); nothing imports pydantic before it. Right after the first frame
the remembered state and the config are read and validated (`Launch`), and
everything else is imported by a thread (`LATER`): the other screens, the
engine and, when a real model is configured, litellm. The methods that open
those screens import them where they are used; once warmed up that is a
dictionary lookup, never a file read on a key press.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.reactive import Reactive
from textual.screen import Screen

if TYPE_CHECKING:
    from debate_tui.choices import Choices
    from debate_tui.domain import Session
    from debate_tui.engine.events import Event
    from debate_tui.llm.base import LLMClient
    from debate_tui.llm.threaded import ThreadedClient
    from debate_tui.report.compare import SessionComparison
    from debate_tui.ui.launch import Launch
    from debate_tui.ui.screens.debate import DebateScreen
    from debate_tui.ui.screens.dialogs import ForkAnswer
    from debate_tui.ui.session_builder import SetupCatalog

from debate_tui.giving_way import giving_way
from debate_tui.inputs import InputError
from debate_tui.llm import DEMO_MODEL
from debate_tui.locations import examples_dir
from debate_tui.people import current_user
from debate_tui.textsafe import inert
from debate_tui.ui.commands import binding_commands, ordered_commands
from debate_tui.ui.keymap import load_keymap
from debate_tui.ui.locations import theme_dirs
from debate_tui.ui.opening import DEFAULT_THEME, Opening, TuiRequest, read_opening
from debate_tui.ui.screens.setup import SetupScreen
from debate_tui.ui.themes import load_themes

LATER = (
    "debate_tui.ui.screens.debate", "debate_tui.ui.screens.report", "debate_tui.ui.screens.sessions",
    "debate_tui.ui.screens.help", "debate_tui.ui.screens.compare", "debate_tui.report.compare",
    "debate_tui.ui.replay", "debate_tui.ui.saving", "debate_tui.engine.runner", "debate_tui.llm.router",
    "debate_tui.llm.threaded", "debate_tui.assembly.single", "debate_tui.assembly.clients",
)
"""Modules the first frame does not need, imported in a thread just after it."""
GC_THRESHOLDS = (10_000, 50, 1_000)
"""The cyclic garbage collector's thresholds once the first frame is drawn: see `tune_gc`."""
SETTLE_S = 1.0
"""The longest `exit` waits for a setup form to finish mounting its controls."""
DEMO_DELAY_S = 0.02
"""Seconds between the demo model's chunks in the TUI, so streaming is visible."""
REPLAY_DELAY_S = 0.01


def tune_gc() -> None:
    """Keep the cyclic garbage collector from freezing the UI while agents stream.

    With CPython's default thresholds, streaming three panes triggered a full
    (generation 2) collection about once a second, each pausing the event loop
    for 100-150 ms on our 2-core machine: the tail of the key latency. Freezing
    what start-up allocated takes it out of every later collection, and larger
    thresholds make collections of the young generation frequent but short
    (5-15 ms) and full ones rare. Measured with `gc.callbacks` while streaming.
    `debate-tui` turns the collector off before its imports, and this turns it
    back on: start-up allocates much and frees little, and collections took
    about 65 ms before the first frame with the default thresholds, 15 ms with these.
    """
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    gc.enable()


SCREENS_CSS = Path(__file__).with_name("screens.tcss")
"""The layout of every screen after the setup form. Parsed with the rest before the first frame, it cost 4 ms
of it; read when the first screen is pushed, only it is parsed (the stylesheet keeps what it parsed)."""


class DebateTUI(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "debate-tui"
    COMMANDS = {ordered_commands}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True,
                tooltip="Quit; a running debate is stopped and stays resumable"),
        Binding("f2", "sessions", "Sessions", id="app.sessions",
                tooltip="Past sessions and examples: read, replay, resume, delete"),
        Binding("f3", "setup", "New", id="app.setup", tooltip="Back to the setup screen for a new debate"),
    ]
    theme: Reactive[str] = Reactive(DEFAULT_THEME)
    """Ours from the start: setting `theme` in `__init__` instead queued a re-parse of the whole stylesheet
    before the first frame (about 25 ms on a pty, and the parse cache emptied), though nothing was parsed yet."""

    def __init__(self, launch: Launch | Opening | None = None, *, client: LLMClient | None = None,
                 clock: Callable[[], float] = time.monotonic, stamp: Callable[[Session], None] | None = None,
                 demo_delay_s: float = DEMO_DELAY_S, replay_delay_s: float = REPLAY_DELAY_S) -> None:
        """An `Opening` draws the first frame unvalidated and builds the `Launch` right after it.

        `client`, `clock` and `stamp` (fixes a new session's id and date) let tests make runs reproducible.
        """
        super().__init__()
        self.client = client
        self._own_client: ThreadedClient | None = None
        self._state_problem: str | None = None
        """Why ui-state.json could not be saved, once said (a full disk, a read-only home)."""
        self.clock = clock
        self.stamp = stamp
        self.demo_delay_s = demo_delay_s
        self.replay_delay_s = replay_delay_s
        self.user = current_user()
        self.catalog: SetupCatalog | None = None
        self.config_error: str | None = None
        """A config that cannot be used, found after the first frame; `run_app` reports it once the app is gone."""
        self.closing = False
        """Set by `exit`: a setup form still to mount its controls mounts none."""
        self.opening = launch if isinstance(launch, Opening) else None
        if isinstance(launch, Opening):
            self.notes, theme = launch.notes, launch.theme
        else:
            if launch is None:
                from debate_tui.ui.launch import Launch

                launch = Launch()
            self._adopt(launch)
            self.notes, theme = self.launch.notes, self.launch.theme or self.state.theme
        themes, problems = load_themes(theme_dirs())
        for each in themes:
            self.register_theme(each)
        self.notes.extend(problems)
        keymap, problem = load_keymap()
        if problem:
            self.notes.append(problem)
        self.set_keymap(keymap)
        self.stylesheet.set_variables(self.get_css_variables())  # App.__init__ read them before ours was registered
        self._use_theme(theme)  # another theme remembered: Textual's watcher applies it

    def _adopt(self, launch: Launch) -> None:
        """Raises ConfigError when the sessions directory comes from a config file that cannot be used."""
        self.launch = launch
        self.store = launch.config.session_store(launch.sessions_dir)
        self.state = launch.state

    def _use_theme(self, theme: str) -> None:
        self.theme = theme if theme in self.available_themes else DEFAULT_THEME

    # ----- start-up -------------------------------------------------------------------

    def get_default_screen(self) -> Screen:
        """The setup form at the bottom of the stack when the app opens on it, drawn in the first frame.

        Pushed over Textual's blank default screen instead, it waited for that screen's mount, layouts and a
        frame drawn and thrown away in the start-up batch: 14 ms of the 60 from `run` to the first frame.
        """
        if self.opening is not None:
            return SetupScreen(self.opening.choices, self.opening.texts, ready=False)
        if self.launch.session is None:
            return self._new_setup()
        return super().get_default_screen()  # a run opens first; the form is built when someone goes back

    def push_screen(self, screen: Screen[Any] | str, *args: Any, **kwargs: Any) -> Any:
        """Every screen pushed has the layout of `screens.tcss`."""
        if not self.stylesheet.has_source(str(SCREENS_CSS), ""):
            self.stylesheet.read(SCREENS_CSS)
        return super().push_screen(screen, *args, **kwargs)

    def on_mount(self) -> None:
        for note in self.notes:
            self.notify(note, severity="warning", markup=False)
        if self.opening is None and self.launch.session is not None:
            if self.launch.ladder:
                self.start_ladder(self.launch.session)
            else:
                self.start_run(self.launch.session, demo=self.launch.demo)
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        if self.opening is not None and not self._finish_opening(self.opening):
            return
        tune_gc()
        self._warm_up()

    def _finish_opening(self, opening: Opening) -> bool:
        """Read and validate what the first frame took unchecked; False when the config cannot be used.

        The form then shows the choices as validated: they differ from the quick read only when
        ui-state.json is partly invalid (its defaults are used then, as they always were).
        """
        from debate_tui.ui.launch import launch_from
        from debate_tui.ui.state import state_from

        self.opening = None
        try:
            self._adopt(launch_from(opening.request, state_from(opening.remembered), texts=opening.texts))
        except InputError as exc:  # a config file that cannot be used: reported as when it stopped the start
            self.config_error = str(exc)
            self.exit(return_code=2)
            return False
        self._use_theme(self.launch.theme or self.state.theme)
        for note in self.launch.notes:  # what the full read found (a remembered setup that does not fit the texts)
            self.notify(note, severity="warning", markup=False, timeout=10)
        for screen in self.screen_stack:
            if isinstance(screen, SetupScreen):
                screen.fill(self.launch.choices, self.launch.criteria_file)
        return True

    def _open_setup(self) -> None:
        self.push_screen(self._new_setup())

    def _new_setup(self) -> SetupScreen:
        launch = self.launch
        screen = SetupScreen(launch.choices, launch.texts, launch.criteria_file, refusal=launch.refusal)
        launch.refusal = None  # shown once: going back to the form later shows the form as it is
        return screen

    def _warm_up(self) -> None:
        """Import what the next screens need, and litellm when a real model is going to need it."""
        model = self.launch.choices.model or ""
        litellm = (self.launch.session is not None and not self.launch.demo) or model not in ("", DEMO_MODEL)

        def load() -> None:
            with giving_way():
                for name in LATER:
                    importlib.import_module(name)
            if litellm:
                from debate_tui.llm.litellm_loader import load_litellm

                load_litellm()

        self.run_worker(load, thread=True, group="warm-up", exit_on_error=False, description="warm up imports")

    # ----- what screens ask for ---------------------------------------------------------

    def _client(self) -> LLMClient:
        """Our own client runs the calls in a thread (`llm.threaded`); one given by a test runs on this loop."""
        if self.client is None:
            from debate_tui.assembly.clients import threaded_client

            self.client = self._own_client = threaded_client(self.launch.config.limits, demo_delay_s=self.demo_delay_s)
        return self.client

    def on_unmount(self) -> None:
        if self._own_client is not None:
            self._own_client.close()

    def start_run(self, session: Session, *, demo: bool) -> None:
        """A new debate: saved in the sessions directory after every turn."""
        if self.stamp is not None:
            self.stamp(session)
        session.keep_history(self.launch.history)
        self._run(session, self.store.path_for(session.id), kind="live" + (" (demo)" if demo else ""))

    def resume(self, session: Session, path: Path) -> None:
        """Carry on an interrupted session in its own file; completed turns are replayed, not re-asked.

        The session is checked against its protocol's spec first, as `debate-tui resume` checks it."""
        from debate_tui.factory import check_session, kept_settings_note

        try:
            check_session(session)
        except InputError as exc:
            self.notify(f"session {session.id} cannot be resumed: {exc}", title="Cannot resume", severity="error",
                        markup=False)
            return
        from debate_tui.endpoints import resumed_connections

        if (note := kept_settings_note(session, self.launch.choices)) is not None:
            self.notify(note, title="Resumed as made", markup=False)
        for note in resumed_connections(session, path, self.launch.config.model_params):
            self.notify(note, title="Not where the file asked", severity="warning", markup=False)
        self._run(session, path, kind="resumed")

    def _run(self, session: Session, path: Path, *, kind: str,
             after: Callable[[DebateScreen], None] | None = None, climb: str = "") -> None:
        from debate_tui.assembly.single import assemble_run
        from debate_tui.engine.control import RunControl
        from debate_tui.inputs import InputError
        from debate_tui.safefile import SessionLock
        from debate_tui.ui.saving import LockedRun, SessionSaver
        from debate_tui.ui.screens.debate import DebateScreen

        try:
            lock = SessionLock(path, session.id).acquire()
        except InputError as exc:  # another process runs it (or its directory cannot be written)
            self.notify(str(exc), severity="error", markup=False)
            return
        control = RunControl(mode="step" if self.launch.step else "auto")
        saver = SessionSaver(path, on_error=control.stop)
        client = self._client()
        limits = self.launch.config.limits  # --max-cost, --max-tokens, --retries as `run` applies them

        def make(emit: Callable[[Event], None]) -> LockedRun:
            return LockedRun(assemble_run(session, client, limits, emit=emit, save=saver, control=control,
                                          interactive=True), lock)

        self.push_screen(DebateScreen(session, control, make, kind=kind, clock=self.clock, after=after, climb=climb))

    def fork(self, original: Session, answer: ForkAnswer) -> None:
        """What if you had stepped in: `original` cut after `answer.at` turns with its change, played as a new
        session in its own debate screen over the original's (Escape on it goes back there). The fork is made
        by `forking`, as `debate-tui fork` makes it, and checked as a resume is."""
        from debate_tui.factory import check_session
        from debate_tui.forking import ForkChange, fork_session
        from debate_tui.ui.screens.dialogs import ALL_AGENTS

        for_all = answer.agent == ALL_AGENTS
        change = ForkChange(remark=answer.remark or None, model=answer.model if for_all else None,
                            agent_models={} if for_all or not answer.model else {answer.agent: answer.model},
                            model_settings=self.launch.choices.model_settings)
        try:
            fork = fork_session(original, answer.at, change, who=self.user)
            check_session(fork)
        except InputError as exc:
            self.notify(f"cannot fork: {exc}", title="Cannot fork", severity="error", markup=False)
            return
        self._run(fork, self.store.path_for(fork.id), kind=f"fork after turn {answer.at}")

    def start_ladder(self, session: Session) -> None:
        """`--policy`: tier 1 plays; `LadderPlay` takes each next step when a tier's run ends."""
        from debate_tui.ui.ladder_play import LadderPlay

        LadderPlay(self, self.launch.ladder, self.launch.policy or "").start(session)

    def run_tier(self, session: Session, kind: str, after: Callable[[DebateScreen], None], climb: str = "") -> None:
        """One tier of a ladder: a new debate screen over the earlier ones (Escape goes back to them), showing
        the `climb` that led to it."""
        if self.stamp is not None:
            self.stamp(session)
        self._run(session, self.store.path_for(session.id), kind=kind, after=after, climb=climb)

    def replay(self, session: Session) -> None:
        from debate_tui.engine.control import RunControl
        from debate_tui.ui.replay import Replayer
        from debate_tui.ui.screens.debate import DebateScreen
        from debate_tui.ui.trimmed import trimmed

        shown = trimmed(session)  # a replay only shows: a huge turn is cut, with the way to all of it
        control = RunControl(mode="step")

        def make(emit: Callable[[Event], None]) -> Replayer:
            return Replayer(shown, emit=emit, control=control, chunk_delay_s=self.replay_delay_s)

        self.push_screen(DebateScreen(shown, control, make, kind="replay", clock=self.clock, source=session))
        self.notify("Replay: space shows the next turn, a plays the rest.", timeout=4)

    def open_report(self, session: Session) -> None:
        from debate_tui.ui.screens.report import ReportScreen

        self.push_screen(ReportScreen(session))

    def compare(self, comparison: SessionComparison) -> None:
        """Two sessions side by side (from the sessions screen's two marks)."""
        from debate_tui.ui.screens.compare import CompareScreen

        self.push_screen(CompareScreen(comparison))

    def remember(self, choices: Choices) -> None:
        self.state.setup = choices
        self._save_state()

    def _save_state(self) -> None:
        from debate_tui.ui.state import save_state

        async def save() -> None:
            problem = await save_state(self.state.model_copy(deep=True))
            if problem is not None and problem != self._state_problem:  # said once, not at every change
                self._state_problem = problem
                self.notify(inert(problem), severity="warning", markup=False, timeout=8)

        self.run_worker(save(), group="state", description="save ui state")

    def watch_theme(self, theme: str) -> None:
        # No state to save before it is read (opening); a configured theme is not a pick. (App.is_mounted is a
        # method taking a widget, so the `self.is_mounted` that stood here was always true: mypy found it.)
        if self.opening is None and theme not in (self.state.theme, self.launch.theme):
            self.state.theme = theme
            self._save_state()

    # ----- actions ----------------------------------------------------------------------

    def go_back(self) -> None:
        """Leave the current screen; with nothing under it (an --autostart run), the setup screen."""
        self.pop_screen()
        if len(self.screen_stack) == 1 and not isinstance(self.screen, SetupScreen):  # the blank default screen
            self._open_setup()

    def action_sessions(self) -> None:
        from debate_tui.ui.screens.sessions import SessionsScreen

        if not isinstance(self.screen, SessionsScreen):
            self.push_screen(SessionsScreen(self.store, examples_dir()))

    def _live_debates(self) -> list[DebateScreen]:
        """Debate screens whose run is not over (found by duck typing: none exist before warm-up).

        Not named `_running`: that is the bool every Textual MessagePump keeps, which would shadow it.
        """
        return cast("list[DebateScreen]", [s for s in self.screen_stack if getattr(s, "finished", True) is False])

    def action_setup(self) -> None:
        if self._live_debates():
            self.notify("A debate is running: stop it first (escape on its screen).", severity="warning")
            return
        while len(self.screen_stack) > 1 and not isinstance(self.screen, SetupScreen):
            self.go_back()

    async def action_quit(self) -> None:
        """Stop live runs first so their last state is saved, then leave."""
        for screen in self._live_debates():
            screen.control.stop("the app was closed")
        workers = [w for w in self.workers if w.group == "debate" and w.is_running]
        if workers:
            await asyncio.wait([asyncio.ensure_future(w.wait()) for w in workers], timeout=3)
        self.exit(0)

    def exit(self, result: object = None, return_code: int = 0, message: object = None) -> None:
        """Close once no setup form is mounting its controls (at most SETTLE_S later): Textual's Select raised
        NoMatches or MountError when the app closed under its mount."""
        self.closing = True
        forms = [s.settled for s in self.screen_stack if isinstance(s, SetupScreen) and not s.settled.is_set()]
        if not forms:
            super().exit(result, return_code, message)  # type: ignore[arg-type]  # Textual's own types
            return

        async def settle_then_exit() -> None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SETTLE_S):
                    for settled in forms:
                        await settled.wait()
            super(DebateTUI, self).exit(result, return_code, message)  # type: ignore[arg-type]

        self.run_worker(settle_then_exit(), group="exit", exit_on_error=False, description="close after the form")

    def action_help(self) -> None:
        from debate_tui.ui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Ours first (the keys of this screen, then the app's), then the few of Textual's that apply here."""
        ours = list(binding_commands(self, screen))
        yield from ours
        yield SystemCommand("Switch theme", "Pick a colour theme (remembered)", self.action_change_theme)
        titles = {command.title.lower() for command in ours} | {"theme", "keys"}  # Help lists the keys
        yield from (c for c in super().get_system_commands(screen) if c.title.lower() not in titles)


def _autostart_launch(request: TuiRequest) -> Launch:
    """With --autostart the debate is the first screen: built before it by the session factory, as `run` builds it
    (the remembered choices play no part); refused, the setup screen shows the factory's reason instead."""
    from debate_tui.ui.launch import launch_from
    from debate_tui.ui.state import load_state

    return launch_from(request, load_state())


def run_app(request: TuiRequest) -> int:
    """The `tui` command's handler, once the command line is read."""
    try:
        app = DebateTUI(_autostart_launch(request) if request.autostart else read_opening(request))
    except InputError as exc:  # includes a config file that cannot be used
        print(f"debate-tui: error: {inert(str(exc))}", file=sys.stderr)
        return 2
    app.run()
    if app.config_error:
        print(f"debate-tui: error: {app.config_error}", file=sys.stderr)
    return app.return_code or 0
