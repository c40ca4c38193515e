"""The setup screen: the texts, the protocol and its options, the agents, the criteria.

The protocol modules and the built-in catalog are loaded in a worker after
the first frame; until then the form shows what it remembers and waits. File
loads (text, criteria TOML) run in threads. Nothing is validated on a key
press beyond cheap checks; Start validates everything and says what is wrong.

The top of the form is the app's first frame, drawn before pydantic is
imported (see `ui.opening`): what needs pydantic (the catalog, the session
builder, the option form) is imported in the methods that run after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import (
    Button,
    Input,
    Label,
    Select,
    SelectionList,
    Static,
    TextArea,
)
from textual.widgets.selection_list import Selection

from debate_tui.choices import DEFAULT_PROTOCOL, STRUCTURED, Choices
from debate_tui.inputs import InputError, read_text
from debate_tui.llm import DEMO_MODEL
from debate_tui.protocols import PROTOCOLS
from debate_tui.ui.host import tui
from debate_tui.ui.literal import literal, one_line
from debate_tui.ui.opening import INPUT_LABELS
from debate_tui.ui.remembered import remembered_fields, remembered_line
from debate_tui.ui.screens.base import BaseScreen
from debate_tui.ui.screens.setup_details import EXTRA_INPUTS, GENERATION_INPUTS, SetupDetails
from debate_tui.ui.widgets.agent_row import AgentRow
from debate_tui.ui.widgets.described import described
from debate_tui.ui.widgets.footer import AppFooter
from debate_tui.ui.widgets.text_box import TextBox

if TYPE_CHECKING:
    from debate_tui.domain import Criterion
    from debate_tui.ui.session_builder import SetupCatalog

DEMO_NOTICE = (
    "Demo model in use: the offline demo model answers, and its judgments are not real. "
    "To use a real provider, type a model under Models (e.g. gpt-4o-mini with OPENAI_API_KEY set in your shell, "
    "or ollama/llama3.1 with its API base), or set default_model in config.toml, or start with --model."
)


class SetupScreen(BaseScreen[None]):
    AUTO_FOCUS = "#text-text"
    """Ready for a paste; and one focus change less at start-up (each restyles the whole screen)."""
    BINDINGS = [
        Binding("ctrl+r", "start", "Start", id="setup.start", tooltip="Validate the choices and start the debate"),
        Binding("ctrl+l", "load_text", "Load text", id="setup.load_text",
                tooltip="Read the text to judge from the file path typed beside the text box"),
        Binding("ctrl+o", "reset", "Defaults", id="setup.reset",
                tooltip="Forget the last setup: the form goes back to the defaults (the texts typed stay)"),
    ]

    def __init__(self, choices: Choices, texts: dict[str, str], criteria_file: str | None = None,
                 refusal: str | None = None, *, ready: bool = True) -> None:
        """Not `ready`: the choices of the app's first frame (its protocol), the rest waits for `fill`.

        `refusal`: why the command line's choices cannot start (the session factory's reason), shown at once.
        """
        super().__init__()
        self.first = choices
        """What the first frame shows (the protocol's description)."""
        self.choices: Choices | None = choices if ready else None
        """The form's choices: each change makes a new copy (`dataclasses.replace`)."""
        self.texts = texts
        self._loaded_text = texts.get("text", "")
        """The text to judge as given or last loaded: a box that still holds it is replaced by ctrl+l unasked."""
        self.criteria_file = criteria_file
        self.refusal = refusal
        self.catalog: SetupCatalog | None = None
        self._start_requested = False
        """ctrl+r came before the form was ready: it starts the run once the form is (never dropped silently)."""
        self._agents_timer: Timer | None = None
        self._agents_lock = asyncio.Lock()
        self._form_protocol: str | None = None
        """The protocol the option form was built for: a Select echoing its value must not rebuild it."""
        self._building = 0
        self.settled = asyncio.Event()
        """Set while no control is being mounted: the app waits for it before closing (see `DebateTUI.exit`)."""
        self.settled.set()

    # ----- layout -------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """The first frame: the text box, ready for a paste, and the labels around it.

        The controls (the protocol's Select, the file row, the details and Start) and the footer follow in
        `_mount_details`, right after it: Select, Input and Button took about 80 ms of the 240 ms from `run` to
        the first frame (their styles parsed and applied), and the footer's keys a fifth of what was left (each
        key mounted, restyled twice and drawn).
        The protocol's row keeps its height, so nothing above the text box moves when they come.
        """
        with VerticalScroll(id="setup"):
            yield Static("", id="demo-notice")
            with Horizontal(classes="form-row", id="protocol-row"):
                yield Label("Protocol", classes="form-label")
            yield Static(literal(PROTOCOLS[_shown(self.first.protocol)], "italic"), id="protocol-desc")
            yield Label(INPUT_LABELS["text"], classes="section")
            yield TextBox(self.texts.get("text", ""), id="text-text", soft_wrap=True, show_line_numbers=False)
            yield Vertical(id="setup-rest")
            yield Static(literal(self.refusal or "", "bold $error"), id="setup-errors")

    def on_mount(self) -> None:
        """Mount the controls after the first frame is on the terminal.

        Scheduled through the app: the screen's own `call_after_refresh` runs while the app is still in its
        start-up batch, when nothing is drawn, so the first frame waited for the whole form.
        """
        if self.choices is not None:
            self.app.call_after_refresh(self._mount_details)
        if self.refusal:  # the form's foot, where the reason stands, is below the fold on a small terminal
            self.notify(self.refusal, title="Cannot start", severity="error", markup=False, timeout=12)

    @property
    def filled(self) -> Choices:
        """The choices: set from the start or by `fill`, before any control that reads them is mounted."""
        assert self.choices is not None, "the setup form was read before fill()"
        return self.choices

    def fill(self, choices: Choices, criteria_file: str | None) -> None:
        """The validated choices, after a first frame drawn from a quick read; the controls follow."""
        self.choices, self.criteria_file = choices, criteria_file
        if _shown(choices.protocol) != _shown(self.first.protocol):
            self.query_one("#protocol-desc", Static).update(literal(PROTOCOLS[_shown(choices.protocol)], "italic"))
        self.call_later(self._mount_details)

    @contextlib.asynccontextmanager
    async def _mounting(self) -> AsyncIterator[None]:
        """Marks controls being mounted: Textual's Select raises (NoMatches, MountError) when the app closes
        while one mounts, so the app's exit waits until `settled`."""
        self._building += 1
        self.settled.clear()
        try:
            yield
        finally:
            self._building -= 1
            if not self._building:
                self.settled.set()

    async def _mount_details(self) -> None:
        if tui(self).closing:
            return  # the app is closing: nothing to fill
        async with self._mounting():
            await self._mount_controls()

    async def _mount_controls(self) -> None:
        choices = self.filled
        form = self.query_one("#setup", VerticalScroll)
        with self.app.batch_update():
            mounted = [
                self.query_one("#protocol-row").mount(
                    Select(described({name: line.partition(": ")[2] for name, line in PROTOCOLS.items()}),
                           value=_shown(choices.protocol), allow_blank=False, id="protocol", compact=True)),
                form.mount(Horizontal(
                    Input(choices.text_path, placeholder="or a file to load (ctrl+l)", id="text-path", compact=True),
                    Button("Load", id="load-text", compact=True), classes="form-row"),
                    Static("", id="remembered"), after="#text-text"),
                self.query_one("#setup-rest").mount(SetupDetails(choices, self.texts)),
                form.mount(Button("Start the debate (ctrl+r)", variant="primary", id="start")),
                self.mount(AppFooter()),
            ]
        for each in mounted:
            await each
        if not self.query("#model"):
            return  # the app closed while the controls were mounting: nothing left to fill
        self._show_inputs(_shown(choices.protocol))
        self._update_demo_notice()
        self._show_sources()
        self._show_remembered()
        self.refresh_bindings()
        self.load()

    def _show_sources(self) -> None:
        """On hover, where the protocol, model and API base came from (`debate-tui config show` lists the rest)."""
        sources = self.filled.origins
        default_model = (f"config.toml or the environment: {self.filled.default_model}" if self.filled.default_model
                         else "the offline demo model")
        for selector, key, default in (("#protocol", "protocol", "default"), ("#model", "model", default_model),
                                       ("#api-base", "api_base", "the model's own (config.toml [models])")):
            self.query_one(selector).tooltip = f"From: {sources.get(key, default)}"

    def _show_remembered(self) -> None:
        """One line under the text: what came from the last setup, and the key that goes back to the defaults."""
        keys = [self.app.get_key_display(active.binding) for active in self.active_bindings.values()
                if active.binding.id == "setup.reset"]
        line = remembered_line(self.filled, keys[0] if keys else "setup.reset")
        note = self.query_one("#remembered", Static)
        note.update(literal(line or "", "italic"))
        note.display = line is not None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Load needs the form's controls: until they are mounted (after the first frame) it does nothing; reset
        needs a remembered setup. Start is always offered: pressed early, it waits for the form (`action_start`)."""
        if action in ("load_text", "reset") and not self.query("#start"):
            return None
        # reset: offered only with a remembered setup to forget
        return action != "reset" or (tui(self).launch.defaults is not None and bool(remembered_fields(self.filled)))

    def action_reset(self) -> None:
        """A fresh form from the spec without the remembered setup, the texts kept; the setup is forgotten."""
        app = tui(self)
        if (defaults := app.launch.defaults) is None:
            return
        app.launch.choices = defaults
        app.remember(Choices())
        fresh = SetupScreen(defaults, self.read_texts())
        if len(app.screen_stack) > 1:
            app.switch_screen(fresh)
        else:  # the app's first screen cannot be switched (Textual keeps no result callback for it): it stays under
            app.push_screen(fresh)  # the fresh form, out of reach (going back stops at the first form it meets)
        self.notify("Back to the defaults: the last setup is forgotten.", markup=False)

    # ----- catalog and filling ---------------------------------------------------------

    @work(group="setup-catalog", exclusive=True, exit_on_error=False, description="load protocols and catalog")
    async def load(self) -> None:
        from debate_tui.catalog import CatalogError, load_criteria_file
        from debate_tui.ui.session_builder import load_catalog

        catalog = tui(self).catalog
        if catalog is None:  # the app keeps one catalog for every setup screen
            catalog = await asyncio.to_thread(load_catalog, self.filled)
            tui(self).catalog = catalog
        extra: list[Criterion] = []
        if self.criteria_file:
            try:
                extra = await asyncio.to_thread(load_criteria_file, Path(self.criteria_file).expanduser())
            except CatalogError as exc:
                self.complain(str(exc))
        elif self.filled.criteria:
            unknown = [n for n in self.filled.criteria if catalog.qualify(n) is None
                       and n not in {c.name for c in self.filled.custom_criteria}]
            if unknown:
                self.complain(f"unknown criterion {unknown[0]!r}")
            self.choices = replace(self.filled, criteria=[catalog.qualify(n) or n for n in self.filled.criteria
                                                          if n not in unknown])
        for criterion in extra:
            self._remember_custom(criterion)
        self.catalog = catalog
        for problem in catalog.problems:
            self.notify(problem, severity="warning", markup=False)
        self._show_inputs(self._protocol())
        await self._fill_criteria()
        await self._build_options(self._protocol())
        if self._start_requested:
            self._start_requested = False
            self.action_start()

    def _remember_custom(self, criterion: Criterion) -> None:
        ticked = self.filled.criteria if self.filled.criteria is not None else ()
        self.choices = replace(
            self.filled, custom_criteria=[*(c for c in self.filled.custom_criteria if c.name != criterion.name),
                                          criterion],
            criteria=ticked if criterion.name in ticked else [*ticked, criterion.name])

    async def _fill_criteria(self) -> None:
        assert self.catalog is not None
        picker = self.query_one("#criteria", SelectionList)
        picker.clear_options()
        ticked = self.filled.criteria
        wanted = set(self.catalog.default_criteria(self._protocol()) if ticked is None else
                     (self.catalog.qualify(n) or n for n in ticked))
        options: list[Selection[str]] = [
            Selection(literal(f"{criterion.name} ({criterion.scale}, yours): {one_line(criterion.description, 60)}"),
                      criterion.name, criterion.name in wanted)
            for criterion in self.filled.custom_criteria if self._offered(criterion.name, criterion, wanted)]
        options += [Selection(literal(f"{qualified} ({criterion.scale}): {one_line(criterion.description, 60)}"),
                              qualified, qualified in wanted) for qualified, criterion in self.catalog.criteria.items()
                    if self._offered(qualified, criterion, wanted)]
        ticked_first = sorted(options, key=lambda option: not option.initial_state)  # ticked first: in view
        picker.add_options(ticked_first)
        self._count_criteria()

    def _offered(self, name: str, criterion: Criterion, ticked: set[str]) -> bool:
        """Listed: what this protocol can judge, and whatever is ticked (a `--criteria` it cannot judge stays in
        view, so Start refuses it with the reason `run` gives)."""
        assert self.catalog is not None
        return name in ticked or self.catalog.judges(self._protocol(), criterion)

    def _criteria_for(self, protocol: str) -> list[str] | None:
        """The ticked criteria a protocol switch keeps: those the new protocol can judge; None (its defaults) when
        the ticks were the old protocol's untouched defaults or none of them fits (MATEval judges error types)."""
        assert self.catalog is not None and self._form_protocol is not None
        ticked = list(self.query_one("#criteria", SelectionList).selected)
        if set(ticked) <= set(self.catalog.default_criteria(self._form_protocol)):
            return None
        known = {**self.catalog.criteria, **{c.name: c for c in self.filled.custom_criteria}}
        kept = [name for name in ticked if name in known and self.catalog.judges(protocol, known[name])]
        return kept or None

    @on(SelectionList.SelectedChanged, "#criteria")
    def _count_criteria(self) -> None:
        """The section's title says how many are ticked and which, so none hides below the list's fold."""
        ticked = list(self.query_one("#criteria", SelectionList).selected)
        names = ", ".join(name.split("/")[-1] for name in ticked[:4]) + (", …" if len(ticked) > 4 else "")
        self.query_one("#criteria-title", Label).update(
            literal(f"Criteria ({len(ticked)} selected{': ' + names if ticked else ''})"))

    async def _build_options(self, protocol: str) -> None:
        if self.catalog is None or protocol not in self.catalog.protocols or protocol == self._form_protocol:
            return
        from debate_tui.ui.widgets.option_form import OptionForm

        if tui(self).closing:
            return
        self._form_protocol = protocol
        async with self._mounting():
            holder = self.query_one("#options", Vertical)
            await holder.remove_children()
            chosen = self.filled.options if protocol == _shown(self.filled.protocol) else {}
            values = {**self.filled.option_defaults.get(protocol, {}), **chosen}  # config.toml's, as `run` has them
            form = OptionForm(self.catalog.protocols[protocol].options, values, self._personas(),
                              id="option-form")
            await holder.mount(form)
            await self._rebuild_agents()

    def _show_inputs(self, protocol: str) -> None:
        if not self.query("#setup-details"):
            return  # not mounted yet: `_mount_details` calls this again
        wanted = self.catalog.inputs(protocol) if self.catalog else ()
        for key in EXTRA_INPUTS:  # a box with text stays: the factory says if the protocol cannot use it
            box = self.query_one(f"#text-{key}", TextArea)
            self.query_one(f"#input-{key}").display = key in wanted or bool(box.text.strip())

    # ----- agents -------------------------------------------------------------------

    async def _rebuild_agents(self) -> None:
        """Make one row per agent, one rebuild at a time, and only when the rows would differ.

        Rows removed while an earlier rebuild's rows were still mounting crashed Textual's Select (it
        looks for its own parts when mounted); at start-up the model's input asked for a second
        rebuild of the same agents while the first was mounting.
        """
        if self.catalog is None:
            return
        from debate_tui.ui.session_builder import build_agents, default_model

        async with self._agents_lock:
            choices = self.read_choices()
            try:
                agents = build_agents(self.catalog, replace(choices, agent_personas={}))
            except InputError as exc:
                self.query_one("#agents-note", Static).update(literal(f"Agents not updated: {exc}", "$warning"))
                return
            self.query_one("#agents-note", Static).update("")
            personas = self._personas()
            placeholder = default_model(choices)
            rows = [AgentRow(a.name, a.role, a.persona.name if a.persona else None,
                             choices.agent_personas.get(a.name), personas, choices.agent_models.get(a.name, ""),
                             placeholder, shown)
                    for a, shown in zip(agents, self._agent_names(choices, [a.name for a in agents]), strict=True)]
            if [row.made_from for row in rows] == [row.made_from for row in self.query(AgentRow)] or tui(self).closing:
                self._name_agents()
                return
            async with self._mounting():
                holder = self.query_one("#agents", Vertical)
                await holder.remove_children()
                await holder.mount_all(rows)

    def _personas(self) -> dict[str, str]:
        """Every persona the catalog knows -> its one-line description, for the dropdowns."""
        assert self.catalog is not None
        return self.catalog.catalog.described_personas()

    def _agent_names(self, choices: Choices, names: list[str]) -> list[str]:
        """What the agents `names` will be called on the debate screen with the personas picked (a ChatEval
        referee is named after its persona); `names` while the picks cannot be used, or give other agents."""
        from debate_tui.ui.session_builder import build_agents

        assert self.catalog is not None
        with contextlib.suppress(InputError):
            if len(shown := [agent.name for agent in build_agents(self.catalog, choices)]) == len(names):
                return shown
        return names

    @on(Select.Changed, ".agent-persona")
    def _name_agents(self) -> None:
        """A persona picked renames the agents named after theirs: the rows say so at once."""
        rows = list(self.query(AgentRow))
        if self.catalog is not None and rows:
            for row, shown in zip(rows, self._agent_names(self.read_choices(), [r.agent_name for r in rows]),
                                  strict=True):
                row.show_name(shown)

    def _schedule_agents(self) -> None:
        """Options and models change agents (a tie-breaker, more referees): rebuild once typing settles."""
        if self._agents_timer is not None:
            self._agents_timer.stop()
        self._agents_timer = self.set_timer(0.4, self._rebuild_agents)

    # ----- reading the form ----------------------------------------------------------

    def read_choices(self) -> Choices:
        """The form as it stands (remembered choices for what is not on screen yet)."""
        from debate_tui.ui.widgets.option_form import OptionForm

        filled, protocol = self.filled, self._protocol()
        options = dict(filled.options) if protocol == _shown(filled.protocol) else {}
        forms = self.query("#option-form")
        if forms and forms.first(OptionForm).is_mounted:  # a form still mounting has no fields to read yet
            form = forms.first(OptionForm)
            # options the form has no field for came from the command line: kept, so the factory refuses them as
            # `run` does (they are dropped when another protocol is picked)
            foreign = {k: v for k, v in options.items() if k not in form.model.model_fields}
            options = {**foreign, **form.read()}
        generation: dict[str, object] = {key: typed for key, selector in GENERATION_INPUTS.items()
                                         if (typed := self.query_one(selector, Input).value.strip())}
        if (structured := self.query_one("#structured", Select).value) is not Select.NULL:
            generation["structured"] = STRUCTURED[str(structured)]
        agent_personas, agent_models = dict(filled.agent_personas), dict(filled.agent_models)
        rows = list(self.query(AgentRow))
        if rows:  # the agents shown are the agents there are: a choice for one gone with an option is dropped
            agent_personas, agent_models = {}, {}
        for row in rows:
            persona, model = row.read()
            if persona and persona != row.default:
                agent_personas[row.agent_name] = persona
            if model:
                agent_models[row.agent_name] = model
        text_path = self.query_one("#text-path", Input).value.strip()
        return replace(
            filled, protocol=protocol, options=options, generation=generation, demo=False,
            model=self.query_one("#model", Input).value.strip() or None,
            api_base=self.query_one("#api-base", Input).value.strip() or None,
            criteria=(list(self.query_one("#criteria", SelectionList).selected) if self.catalog is not None
                      else filled.criteria),
            agent_personas=agent_personas, agent_models=agent_models, inputs={"text": text_path} if text_path else {})

    def _protocol(self) -> str:
        """The protocol picked in the form, or the one it was filled with while its controls mount."""
        selects = self.query("#protocol")
        return str(selects.first(Select).value) if selects else _shown(self.filled.protocol)

    def read_texts(self) -> dict[str, str]:
        return {key: self.query_one(f"#text-{key}", TextArea).text for key in ("text", *EXTRA_INPUTS)}

    # ----- reactions ------------------------------------------------------------------

    @on(Select.Changed, "#protocol")
    async def protocol_changed(self, event: Select.Changed) -> None:
        protocol = str(event.value)
        self.query_one("#protocol-desc", Static).update(literal(PROTOCOLS.get(protocol, ""), "italic"))
        self._show_inputs(protocol)
        if self.catalog is not None and protocol != _shown(self.filled.protocol):
            fields = self.catalog.protocols[_shown(self.filled.protocol)].options.model_fields
            self.choices = replace(self.filled, options={k: v for k, v in self.filled.options.items() if k in fields})
        if self.catalog is not None and self._form_protocol not in (None, protocol):
            self.choices = replace(self.filled, criteria=self._criteria_for(protocol))
            await self._fill_criteria()
        await self._build_options(protocol)

    @on(Select.Changed, "#option-form Select")
    @on(Input.Changed, "#option-form Input")
    def option_changed(self) -> None:
        self._schedule_agents()

    @on(Input.Changed, "#model")
    def model_changed(self) -> None:
        self._update_demo_notice()
        self._schedule_agents()

    def _update_demo_notice(self) -> None:
        notice = self.query_one("#demo-notice", Static)
        model = self.query_one("#model", Input).value.strip() or self.filled.default_model or ""
        demo = model in ("", DEMO_MODEL)
        notice.update(literal(DEMO_NOTICE if demo else f"Model: {model} (all agents unless set below)",
                              "bold $warning" if demo else "dim"))
        notice.set_class(demo, "-demo")

    def complain(self, message: str) -> None:
        self.query_one("#setup-errors", Static).update(literal(message, "bold $error"))

    def _typed_path(self, selector: str, what: str) -> str | None:
        path = self.query_one(selector, Input).value.strip()
        if not path:
            self.complain(f"Type the path of a {what} beside the Load button.")
        return path or None

    @on(Button.Pressed, "#load-text")
    def action_load_text(self) -> None:
        if path := self._typed_path("#text-path", "text file"):
            self.load_text(path)

    @work(group="setup-file", exclusive=True, exit_on_error=False, description="read a text file")
    async def load_text(self, path: str) -> None:
        """Read the file in a thread; text edited in the box is replaced only once the person says so."""
        from debate_tui.ui.screens.dialogs import ConfirmDialog  # it imports pydantic: not before the first frame

        warnings: list[str] = []
        try:
            text = await asyncio.to_thread(read_text, os.path.expanduser(path), "the text file", warnings.append)
        except InputError as exc:
            self.complain(str(exc))
            self.notify(str(exc), title="The text was not loaded", severity="error", markup=False)
            field = self.query_one("#text-path", Input)
            field.tooltip = str(exc)
            field.add_class("-invalid")
            field.focus()
            return
        self.query_one("#text-path", Input).remove_class("-invalid")
        box = self.query_one("#text-text", TextArea)
        if box.text.strip() and box.text != self._loaded_text and not await self.app.push_screen_wait(
                ConfirmDialog(f"Replace the text you edited with {path}?")):
            return  # the edited text stays, the focus where it was
        box.text = self._loaded_text = text
        self.query_one("#protocol", Select).focus()  # the next choice; a key typed now no longer edits the text
        self.complain("; ".join(warnings))
        from debate_tui.writing import size  # here: its scripts' patterns took 9 ms to compile before the first frame

        amount, unit = size(text)  # characters for a Chinese or Japanese text, whose words are not spaced
        self.notify(f"Loaded {amount} {unit}{'' if amount == 1 else 's'} from {path}", markup=False)

    @on(Button.Pressed, "#load-criteria")
    def load_criteria_pressed(self) -> None:
        if path := self._typed_path("#criteria-path", "criteria TOML file"):
            self.load_criteria(path)

    @work(group="setup-file", exclusive=True, exit_on_error=False, description="read a criteria file")
    async def load_criteria(self, path: str) -> None:
        from debate_tui.catalog import CatalogError, load_criteria_file

        try:
            criteria = await asyncio.to_thread(load_criteria_file, Path(path).expanduser())
        except CatalogError as exc:
            self.complain(str(exc))
            return
        self.choices = self.read_choices()
        for criterion in criteria:
            self._remember_custom(criterion)
        await self._fill_criteria()
        self.complain("")
        self.notify(f"Loaded {len(criteria)} criteria from {path}", markup=False)

    @on(Button.Pressed, "#add-criterion")
    async def add_criterion(self) -> None:
        details = self.query_one(SetupDetails)
        try:
            criterion = details.written_criterion()
        except InputError as exc:
            self.complain(str(exc))
            return
        self.choices = self.read_choices()
        self._remember_custom(criterion)
        await self._fill_criteria()
        details.clear_written()
        self.complain("")
        self.notify(f"Added criterion {criterion.name} ({criterion.scale})", markup=False)

    @on(Button.Pressed, "#start")
    def action_start(self) -> None:
        if self.catalog is None or not self.query("#start"):
            if not self._start_requested:
                self._start_requested = True
                self.notify("Starting as soon as the form is ready ...", markup=False, timeout=4)
            return
        from debate_tui.ui.session_builder import build

        choices = self.read_choices()
        try:
            built = build(self.catalog, choices, self.read_texts())
        except InputError as exc:
            self.complain(str(exc))
            self.notify(str(exc), title="Cannot start", severity="error", markup=False)
            return
        self.complain("")
        self.choices = choices
        tui(self).remember(choices)
        tui(self).start_run(built.session, demo=built.demo)


def _shown(protocol: str | None) -> str:
    """The protocol the form shows: one it does not know (an old remembered name) shows as debate."""
    return protocol if protocol in PROTOCOLS else DEFAULT_PROTOCOL
