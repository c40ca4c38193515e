"""Sessions as the tests build and run them: one `make_session` for every protocol, on the demo model or on the fake
server, and the ways to run one headless (its outcome, its events, or recorded into a store)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from debate_tui.catalog import resolve_criteria
from debate_tui.domain import Session, Task
from debate_tui.engine.control import RunControl
from debate_tui.engine.events import TurnCompleted
from debate_tui.factory import runner_for
from debate_tui.llm.demo import DemoClient
from debate_tui.llm.router import ModelRouter
from debate_tui.protocols import get_protocol
from debate_tui.protocols.common import ModelChoice
from debate_tui.store import SessionStore
from debate_tui.testing.fake_server import FakeLLMServer
from tests.helpers import STORY
from tests.helpers.scripts import MARKED, PLAIN, QUESTION

ON_THE_FAKE_SERVER: dict[str, dict[str, Any]] = {
    "debate": {"model": "openai/fake-debater", "seed": 1},
    "chateval": {"model": "openai/fake-debater"},
    "single": {"model": "openai/fake-judge"},
    "mateval": {"model": "openai/fake-mateval", "seed": 1, "criteria": "REP,LINC,DCONT,ILC,FER"},
    "scaleeval": {"model": "openai/fake-speaker", "seed": 0, "criteria": "helpfulness",
                  "text": PLAIN, "text_b": MARKED, "source": QUESTION},
}
"""Each protocol's defaults on the fake server: the model its token counts use and the seed and inputs its scripts
(tests/helpers/scripts.py) were written against."""

ON_THE_DEMO_MODEL: dict[str, dict[str, Any]] = {"debate": {"rounds": 2}}


def make_session(protocol: str = "debate", server: FakeLLMServer | None = None, **given: Any) -> Session:
    """A session of `protocol` built as its spec builds one: on the fake server when `server` is given, else on the
    demo model. `given` overrides the defaults above: `model`, `per_agent`, `criteria` (names, a comma-separated
    string or a sequence), `personas`, `text`, `text_b`, `source`; every other keyword is a protocol option."""
    wanted = {**(ON_THE_FAKE_SERVER[protocol] if server else ON_THE_DEMO_MODEL.get(protocol, {})), **given}
    models = ModelChoice(default=wanted.pop("model", "demo/offline"), per_agent=wanted.pop("per_agent", {}),
                         params={"api_base": server.base_url} if server else {})
    criteria = wanted.pop("criteria", "coherence")
    personas = wanted.pop("personas", None)
    task = Task(text=wanted.pop("text", STORY), text_b=wanted.pop("text_b", None), source=wanted.pop("source", None))
    spec = get_protocol(protocol)
    options = spec.options.model_validate(wanted)
    return Session(protocol=protocol, options=options.model_dump(),
                   criteria=resolve_criteria(criteria if isinstance(criteria, str) else ",".join(criteria)),
                   agents=spec.build_agents(options, models, personas), task=task)


async def run(session: Session, **options: Any) -> Session:
    """Run `session` to its end through litellm (the fake server) with the runner's `options`."""
    return await runner_for(session, ModelRouter(), **options).run()


async def run_with_events(session: Session, client: Any = None, **options: Any) -> tuple[Session, list]:
    """As `run`, keeping every event the runner emitted; `client` replaces litellm (None: litellm)."""
    events: list = []
    runner = runner_for(session, client or ModelRouter(), emit=events.append, **options)
    return await runner.run(), events


async def record(session: Session, store: SessionStore, *, stop_after: int | None = None) -> Path:
    """Run `session` headless on the demo model into `store`; optionally stop after N turns (interrupted)."""
    control = RunControl()

    def emit(event) -> None:
        if stop_after is not None and isinstance(event, TurnCompleted) and len(session.turns) >= stop_after:
            control.stop("interrupted for the test")

    await runner_for(session, DemoClient(), emit=emit, control=control, save=store.save).run()
    return store.path_for(session.id)


def save(store: SessionStore, session_id: str, text: str = "A text to judge.", status: str = "completed") -> Path:
    """A finished single-judge session with no turns, saved under `session_id`: a row for the sessions list."""
    session = Session(protocol="single", task=Task(text=text), criteria=[], agents=[])
    session.id, session.status = session_id, status
    return store.save(session)
