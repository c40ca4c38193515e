"""One session factory below every front end: `run`, `--autostart` and the setup screen agree.

For each flag set of the matrix, with the same config.toml, the session `debate-tui run` would run (its
real handler, stopped just before the run), the one `debate-tui --autostart` starts (the app's launch)
and the one the setup screen starts when ctrl+r is pressed on the form the flags filled (a pilot test) have
identical protocol, options, criteria, agents and task. A combination `run` refuses with exit 2 is refused
by both TUI paths with the same one-line reason, on screen, and no debate starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from debate_tui.cli import build_parser, main
from debate_tui.cli import run as run_command
from debate_tui.cli.tui import tui_request
from debate_tui.domain import Session
from debate_tui.locations import config_dir
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import launch_from
from debate_tui.ui.opening import read_opening
from debate_tui.ui.screens.setup import SetupScreen
from debate_tui.ui.state import UiState
from tests.helpers import STORY
from tests.helpers.ui import RecordingDemo, wait_until

CONFIG = {
    "plain": "",
    "chateval default": 'protocol = "chateval"\n',
    "protocol tables": '[protocols.debate]\nrounds = 2\ncritic_persona = "plain"\n'
                       '[protocols.mateval]\nstrategy = "CoT"\nevaluators = 3\n[protocols.chateval]\nturns = 1\n',
    "models": 'default_model = "openai/judge-a"\n[roles]\ncritic = "openai/judge-b"\n'
              '[models."openai/judge-a"]\napi_base = "http://127.0.0.1:9/v1"\n',
}
MATRIX: list[tuple[str, list[str]]] = [
    ("plain", ["--demo"]),
    ("plain", ["--demo", "--protocol", "debate", "--rounds", "3", "--tie-breaker", "--seed", "7"]),
    ("plain", ["--demo", "--protocol", "debate", "--critic-persona", "weakly-negative", "--criteria", "fluency"]),
    ("plain", ["--demo", "--protocol", "debate", "--source", "SOURCE", "--context", "CONTEXT"]),
    ("plain", ["--demo", "--protocol", "chateval"]),
    ("plain", ["--demo", "--protocol", "chateval", "--strategy", "simultaneous-talk-with-summarizer",
               "--agents", "4", "--turns", "1"]),
    ("plain", ["--demo", "--protocol", "chateval", "--text-b", "TEXT_B", "--swap"]),
    ("plain", ["--demo", "--protocol", "chateval", "--personas", "critic,scientist"]),
    ("plain", ["--demo", "--protocol", "single"]),
    ("plain", ["--demo", "--protocol", "single", "--samples", "3", "--logprobs", "--criteria", "coherence,fluency"]),
    ("plain", ["--demo", "--protocol", "single", "--text-b", "TEXT_B", "--swap", "--source", "SOURCE"]),
    ("plain", ["--demo", "--protocol", "mateval"]),
    ("plain", ["--demo", "--protocol", "mateval", "--no-feedback", "--evaluators", "3"]),
    ("plain", ["--demo", "--protocol", "mateval", "--strategy", "SR", "--rounds", "2", "--criteria", "REP,FER"]),
    ("plain", ["--demo", "--protocol", "mateval", "--strategy", "SA", "--seed", "3"]),
    ("plain", ["--demo", "--protocol", "scaleeval", "--text-b", "TEXT_B", "--source", "SOURCE"]),
    ("plain", ["--demo", "--protocol", "scaleeval", "--text-b", "TEXT_B", "--on-no-consensus", "majority",
               "--agents", "2", "--rounds", "1", "--criteria-variant", "shuffled", "--seed", "5"]),
    ("plain", ["--demo", "--protocol", "scaleeval", "--text-b", "TEXT_B", "--criteria", "scaleeval/helpfulness"]),
    ("chateval default", ["--demo"]),
    ("chateval default", ["--demo", "--turns", "3"]),
    ("protocol tables", ["--demo"]),
    ("protocol tables", ["--demo", "--rounds", "3"]),
    ("protocol tables", ["--demo", "--protocol", "mateval"]),
    ("protocol tables", ["--demo", "--protocol", "mateval", "--no-feedback", "--strategy", "SR+CoT"]),
    ("protocol tables", ["--demo", "--protocol", "chateval", "--agents", "2"]),
    ("models", []),
    ("models", ["--protocol", "chateval", "--agent-model", "Critic=openai/judge-c"]),
    ("models", ["--model", "openai/judge-c", "--api-base", "http://127.0.0.1:8/v1"]),
]
"""(config.toml, flags): 28 flag sets over the five protocols, their options, criteria, inputs and models."""
MISFITS: list[tuple[str, list[str], str]] = [
    ("plain", ["--demo", "--protocol", "mateval", "--criteria", "coherence"], "MATEval judges error types"),
    ("plain", ["--demo", "--protocol", "mateval", "--text-b", "TEXT_B"], "MATEval judges one text"),
    ("plain", ["--demo", "--protocol", "scaleeval"], "ScaleEval compares two texts: give the second with --text-b"),
    ("plain", ["--demo", "--protocol", "scaleeval", "--text-b", "TEXT_B", "--criteria", "helpfulness,reasoning"],
     "ScaleEval judges one criterion per run"),
    ("plain", ["--demo", "--protocol", "debate", "--text-b", "TEXT_B"], "DEBATE judges one text"),
    ("plain", ["--demo", "--protocol", "debate", "--turns", "3"], "--turns: debate has no such option"),
    ("plain", ["--demo", "--protocol", "chateval", "--agents", "9"],
     "--agents: Input should be less than or equal to 5"),
    ("plain", ["--demo", "--protocol", "mateval", "--strategy", "SR+CoT", "--rounds", "2"], "--rounds"),
    ("plain", ["--demo", "--protocol", "scaleeval", "--text-b", "TEXT_B", "--personas", "critic"],
     "--personas: ScaleEval gives its agents no persona"),
    ("plain", ["--demo", "--protocol", "mateval", "--agent-model", "Critic=openai/x"], "no agent named 'Critic'"),
    ("chateval default", ["--demo", "--critic-persona", "plain"], "--critic-persona: chateval has no such option"),
    ("protocol tables", ["--demo", "--protocol", "mateval", "--rounds", "2"], "--rounds"),
]
"""(config.toml, flags, what `run` says): refused the same way by `run`, `--autostart` and the setup screen."""


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    texts = {"TEXT": STORY, "TEXT_B": "Tom swam. Tom swam.", "SOURCE": "Write a story about learning to swim.",
             "CONTEXT": "Tom is seven years old."}
    paths = {}
    for name, text in texts.items():
        path = tmp_path / f"{name.lower()}.txt"
        path.write_text(text)
        paths[name] = str(path)
    return paths


def configure(name: str) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text(CONFIG[name])


def argv(flags: list[str], files: dict[str, str]) -> list[str]:
    return ["--text", files["TEXT"], *(files.get(flag, flag) for flag in flags)]


def what_runs(session: Session, *, seeded: bool) -> dict[str, Any]:
    """What must be identical: a seed drawn at random (none given) may differ, everything else not."""
    options = dict(session.options)
    if not seeded:
        options.pop("seed", None)
    return {"protocol": session.protocol, "options": options,
            "criteria": [c.model_dump() for c in session.criteria],
            "agents": [a.model_dump() for a in session.agents], "task": session.task.model_dump()}


def from_run(monkeypatch, capsys, args: list[str]) -> tuple[Session | None, int, str]:
    """The session `debate-tui run` builds, taken where its handler hands it to the runner."""
    built: list[Session] = []

    def capture(session: Session, **_: object) -> int:
        built.append(session)
        return 0

    monkeypatch.setattr(run_command, "execute", capture)
    code = main(["run", *args])
    return (built[0] if built else None), code, capsys.readouterr().err


def from_autostart(args: list[str]):
    return launch_from(tui_request(build_parser("tui").parse_args(["tui", *args, "--autostart"])), UiState())


async def form_ready(pilot) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen.catalog is not None and (
        bool(app.screen.query("AgentRow"))
        or "Agents not updated" in str(app.screen.query_one("#agents-note").render())),
        what="the form")
    await pilot.pause(0.5)  # agent rows rebuilt once typing settles


async def from_setup_screen(args: list[str]) -> tuple[Session | None, str]:
    """Open the TUI as `debate-tui ARGS` does, wait for the form, press ctrl+r: the session started, or the
    reason on screen."""
    app = DebateTUI(read_opening(tui_request(build_parser("tui").parse_args(["tui", *args]))), client=RecordingDemo())
    started: list[Session] = []
    app.start_run = lambda session, demo: started.append(session)  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await form_ready(pilot)
        await pilot.press("ctrl+r")
        await pilot.pause(0.1)
        shown = str(app.screen.query_one("#setup-errors").render()) if isinstance(app.screen, SetupScreen) else ""
    return (started[0] if started else None), shown


@pytest.mark.parametrize("config,flags", MATRIX, ids=[f"{c}:{' '.join(f)}" for c, f in MATRIX])
async def test_run_autostart_and_the_setup_screen_build_the_same_session(config, flags, files, monkeypatch, capsys):
    configure(config)
    args = argv(flags, files)
    ran, code, err = from_run(monkeypatch, capsys, args)
    assert code == 0 and ran is not None, err
    seeded = "--seed" in flags
    launch = from_autostart(args)
    assert launch.refusal is None and launch.session is not None
    assert what_runs(launch.session, seeded=seeded) == what_runs(ran, seeded=seeded)
    started, shown = await from_setup_screen(args)
    assert started is not None, shown
    assert what_runs(started, seeded=seeded) == what_runs(ran, seeded=seeded)


@pytest.mark.parametrize("config,flags,reason", MISFITS, ids=[f"{c}:{' '.join(f)}" for c, f, _ in MISFITS])
async def test_what_run_refuses_the_tui_refuses_with_the_same_reason_on_screen(config, flags, reason, files,
                                                                                monkeypatch, capsys):
    configure(config)
    args = argv(flags, files)
    ran, code, err = from_run(monkeypatch, capsys, args)
    assert code == 2 and ran is None and reason in err
    said = err.strip().removeprefix("debate-tui: error: ")
    assert "\n" not in said
    launch = from_autostart(args)
    assert launch.session is None and launch.refusal == said
    app = DebateTUI(launch, client=RecordingDemo())
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), what="the setup screen")
        assert said in str(app.screen.query_one("#setup-errors").render())
        assert [n.message for n in app._notifications if n.severity == "error"] == [said]
        await form_ready(pilot)
        assert not app.screen.query("DebateScreen")
    started, shown = await from_setup_screen(args)
    assert started is None and on_the_form(said) in shown, "the same reason, naming the form's boxes, not flags"


def on_the_form(reason: str) -> str:
    """A refusal as the setup form words it: each text named by its box ("the 'Second answer (pairwise)' box")
    where the command line names its flag (--text-b)."""
    from debate_tui.protocols.spec import INPUT_FLAGS
    from debate_tui.ui.opening import FORM_FIELDS

    for key, flag in sorted(INPUT_FLAGS.items(), key=lambda item: -len(item[1])):
        reason = reason.replace(flag, FORM_FIELDS[key])
    return reason


async def test_resume_checks_the_saved_session_against_its_protocol_s_spec(files, capsys):
    """`resume` and the TUI's resume go through the factory's check: a session that no longer fits its protocol
    (an option out of range, a second text MATEval does not read) is refused with one line, not run."""
    from debate_tui.config import load_config
    from debate_tui.domain import Task
    from debate_tui.store import write_session

    store = load_config().session_store()
    launch = from_autostart(argv(["--demo", "--protocol", "mateval"], files))
    session = launch.session
    session.status = "cancelled"
    session.options["evaluators"] = 99
    path = store.save(session)
    assert main(["resume", str(path)]) == 2
    assert "cannot be resumed: --evaluators: Input should be less than or equal to 8" in capsys.readouterr().err
    session.options["evaluators"] = 2
    session.task = Task(text=STORY, text_b="Another text.")
    write_session(path, session)
    assert main(["resume", str(path)]) == 2
    assert "MATEval judges one text" in capsys.readouterr().err

    request = tui_request(build_parser("tui").parse_args(["tui"]))
    app = DebateTUI(launch_from(request, UiState()), client=RecordingDemo())
    told: list[str] = []
    app.notify = lambda message, **_: told.append(message)  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await form_ready(pilot)
        app.resume(session, path)
        await pilot.pause(0.1)
        assert isinstance(app.screen, SetupScreen)  # refused: no debate started
        assert any("cannot be resumed: MATEval judges one text" in message for message in told)
