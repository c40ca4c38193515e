"""The single judge (G-Eval style baseline) against the fake server, and on the demo model through the CLI."""

from __future__ import annotations

import itertools
import json

from debate_tui.catalog import find_criterion, find_persona
from debate_tui.cli import main
from debate_tui.domain import Session, Task
from debate_tui.engine.runner import Runner
from debate_tui.llm.router import ModelRouter
from debate_tui.protocols import single
from debate_tui.protocols.common import ModelChoice
from tests.conftest import STORY

REMINDER = "had no score I could read"


def make_session(server, *, text_b: str | None = None, criteria=("coherence",), personas=None, **options) -> Session:
    opts = single.Options.model_validate(options)
    models = ModelChoice(default="openai/fake-judge", params={"api_base": server.base_url})
    return Session(protocol="single", options=opts.model_dump(), criteria=[find_criterion(c) for c in criteria],
                   agents=single.build_agents(opts, models, personas), task=Task(text=STORY, text_b=text_b))


async def run(session: Session) -> Session:
    return await Runner(session, ModelRouter()).run()


async def test_one_call_per_criterion_with_steps_and_form(llm_server):
    llm_server.add_rule("Fine apart from a repeat.\nScore: 3")
    session = await run(make_session(llm_server, criteria=("coherence", "fluency")))
    assert llm_server.calls == 2 == session.usage.calls
    assert session.outcome.scores == {"coherence": 3, "fluency": 3}
    first = "\n".join(m["content"] for m in llm_server.requests[0].messages)
    assert "Evaluation steps:" in first and "Score: N" in first and STORY in first
    assert "temperature" not in llm_server.requests[0].body


async def test_samples_are_averaged_and_unscored_ones_counted(llm_server):
    llm_server.add_rule("Still hard to tell.", match=REMINDER)
    replies = iter(["Score: 4", "Score: 2", "Hard to tell.", "Score: 3"])
    llm_server.add_rule(lambda request: next(replies))
    session = await run(make_session(llm_server, samples=4))
    assert llm_server.calls == 4 + 1  # the unreadable sample was re-asked once, then left unscored
    assert session.outcome.scores == {"coherence": 3.0}  # (4 + 2 + 3) / 3, not (4 + 2 + 0 + 3) / 4
    assert session.outcome.per_agent == {"Judge": {"coherence": 3.0}}
    assert session.outcome.notes[0] == "coherence: mean of 4 samples (1 unscored, not counted)"
    assert sum(t.unscored for t in session.turns) == 1
    assert {r.body.get("temperature") for r in llm_server.requests} == {1.0}  # G-Eval samples at temperature 1


async def test_all_samples_unscored_gives_no_score(llm_server):
    llm_server.add_rule("No idea.")
    session = await run(make_session(llm_server, samples=2))
    assert session.outcome.scores == {"coherence": None}
    assert session.status == "completed"


async def test_pairwise_judge_prefers_the_higher_scored_text(llm_server):
    pairs = itertools.cycle(["Scores: 2 4", "Scores: 3 4"])
    llm_server.add_rule(lambda request: next(pairs))
    session = await run(make_session(llm_server, text_b="Another answer entirely.", samples=2))
    outcome = session.outcome
    assert outcome.scores == {"coherence_1": 2.5, "coherence_2": 4.0}
    assert outcome.verdict == "2" and outcome.agent_verdicts == {"Judge": "2"}


async def test_pairwise_swap_doubles_the_calls(llm_server):
    llm_server.add_rule("Scores: 4 3")
    session = await run(make_session(llm_server, text_b="Another answer entirely.", swap=True))
    assert llm_server.calls == 2
    assert session.state["swap"]["consistent"] is False and session.outcome.verdict == "0"


def test_persona_becomes_the_system_prompt():
    spec = single.build_agents(single.Options(), ModelChoice(default="m"), [find_persona("scientist")])[0]
    assert spec.role == "judge" and spec.persona.name == "scientist"


def test_cli_demo_samples(capsys, story_file):
    rc = main(["run", "--protocol", "single", "--demo", "--text", str(story_file), "--samples", "3"])
    out, err = capsys.readouterr()
    summary = json.loads(out.strip().splitlines()[-1])
    assert rc == 0 and summary["protocol"] == "single" and summary["calls"] == 3
    assert summary["scores"] == {"coherence": 4.0}  # five, less one for the repeated sentence
    assert "(demo)" in err
