"""Every protocol declares itself in one spec, and what it declares holds: its call count, its inputs, its options."""

from __future__ import annotations

import json

import pytest

from debate_tui.cli import main
from debate_tui.protocols import PROTOCOLS, all_protocols, get_protocol
from debate_tui.protocols.spec import ProtocolSpec
from debate_tui.registry import REGISTRY, ROLES, Registration

RUNS = [
    ("debate", []), ("debate", ["--rounds", "2", "--tie-breaker"]),
    ("chateval", []), ("chateval", ["--strategy", "simultaneous-talk-with-summarizer", "--agents", "2"]),
    ("chateval", ["--text-b", "B", "--swap", "--turns", "1"]),
    ("single", ["--samples", "3"]), ("single", ["--text-b", "B", "--swap", "--criteria", "coherence,fluency"]),
    ("mateval", []), ("mateval", ["--strategy", "SR", "--rounds", "2", "--no-feedback"]),
    ("mateval", ["--strategy", "SA", "--criteria", "REP,FER"]), ("mateval", ["--strategy", "CoT", "--evaluators", "3"]),
    ("scaleeval", ["--text-b", "B"]), ("scaleeval", ["--text-b", "B", "--agents", "2", "--rounds", "0",
                                                    "--on-no-consensus", "majority"]),
]


def test_every_registered_protocol_has_a_complete_spec():
    specs = all_protocols()
    assert list(specs) == list(PROTOCOLS)
    for name, spec in specs.items():
        assert isinstance(spec, ProtocolSpec) and spec.name == name and spec.paper and spec.calls_formula
        assert spec.summary == PROTOCOLS[name].split(": ", 1)[1]
        for field, info in spec.options.model_fields.items():
            assert info.description, f"{name}.{field} has no help"
        assert set(spec.report) <= {"result", "per_agent", "verdicts", "errors", "how", "actions", "usage",
                                    "transcript"}


def test_the_roles_a_protocol_registers_are_the_roles_its_agents_play():
    """Each role declared once, in the registry: the agents of every run above play registered roles of their
    protocol, every registered role is played in one of them, and `[roles]` in config.toml takes exactly those."""
    from debate_tui.cli import build_parser
    from debate_tui.cli.task_flags import choices_from_args
    from debate_tui.config import ROLES as CONFIG_ROLES
    from debate_tui.config import Config
    from debate_tui.domain import Task
    from debate_tui.factory import build_session

    played: dict[str, set[str]] = {name: set() for name in PROTOCOLS}
    for protocol, flags in RUNS:
        pair = "B" in flags
        given = [flag for flag in flags if flag not in ("--text-b", "B")]
        args = build_parser("run").parse_args(["run", "--demo", "--protocol", protocol, "--text", "t", *given])
        task = Task(text="A text.", text_b="B." if pair else None, source="Q?" if protocol == "scaleeval" else None)
        played[protocol] |= {agent.role for agent in build_session(task, choices_from_args(args)).session.agents}
    for name, spec in all_protocols().items():
        assert played[name] == set(spec.roles) == set(REGISTRY[name].roles), name
    assert tuple(ROLES) == CONFIG_ROLES and set(ROLES) == set().union(*played.values())
    assert Config.model_validate({"roles": {"speaker": "gpt-4o-mini"}}).role_models() == {"speaker": "gpt-4o-mini"}
    assert "ChatEval's summarizer and MATEval's summarizer" in Config.model_fields["roles"].annotation.model_fields[
        "summarizer"].description
    with pytest.raises(ValueError, match="roles.umpire"):
        Config.model_validate({"roles": {"umpire": "gpt-4o-mini"}})


@pytest.mark.parametrize("protocol,flags", RUNS, ids=[f"{p} {' '.join(f)}" for p, f in RUNS])
def test_a_demo_run_makes_the_calls_its_spec_counts(protocol, flags, story_file, tmp_path, capsys):
    other = tmp_path / "b.txt"
    other.write_text("Tom swam in the pool. He liked it.")
    args = [str(other) if flag == "B" else flag for flag in flags]
    code = main(["run", "--demo", "--protocol", protocol, "--text", str(story_file), "--seed", "1", *args,
                 "--on-no-consensus", "majority"] if protocol == "scaleeval" and "--on-no-consensus" not in args else
                ["run", "--demo", "--protocol", protocol, "--text", str(story_file), "--seed", "1", *args])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0, summary
    session = json.loads((tmp_path / "sessions" / f"{summary['session']}.json").read_text())
    spec = get_protocol(protocol)
    count = spec.calls(spec.options.model_validate(session["options"]), len(session["criteria"]),
                       session["task"]["text_b"] is not None)
    assert count.fewest <= summary["calls"] <= count.most


async def test_a_new_protocol_is_one_module_and_one_registration(monkeypatch):
    """A protocol no front end knows: registered with one line, its spec is all the factory, the flags' help,
    the README table and the runner need."""
    import sys
    import types

    from pydantic import Field

    from debate_tui.choices import Choices
    from debate_tui.cli.reference import protocol_table
    from debate_tui.cli.task_flags import option_help
    from debate_tui.domain import AgentSpec, Outcome, Task
    from debate_tui.factory import build_session, runner_for
    from debate_tui.llm.demo import DemoClient
    from debate_tui.protocols.common import criterion_block, score_form
    from debate_tui.protocols.spec import CallCount, CriteriaRule, ProtocolOptions, ProtocolSpec

    class Options(ProtocolOptions):
        samples: int = Field(2, ge=1, le=3)
        """Judges asked, one after the other."""

    async def run(ctx):
        outcome = Outcome()
        samples = Options.model_validate(ctx.options).samples
        for criterion in ctx.criteria:
            turns = [await ctx.turn("Judge", [{"role": "user", "content": (
                f"You will be given a text to rate on one metric.\n{criterion_block(criterion)}\n\n"
                f"[Text to evaluate]\n{ctx.task.text}\n[End of text]\n\n{score_form(criterion)}")}],
                round=n, criterion=criterion, expect="score") for n in range(samples)]
            outcome.scores[criterion.name] = turns[-1].score
        return outcome

    module = types.ModuleType("debate_tui.protocols.toy")
    module.SPEC = ProtocolSpec(
        name="toy", title="Toy", paper="none", options=Options, criteria=CriteriaRule("score", ("fluency",)),
        build_agents=lambda options, models, personas=None: [AgentSpec(name="Judge", role="judge",
                                                                       model=models.model_for("Judge", "judge"))],
        run=run, calls=lambda options, criteria, pairwise: CallCount(options.samples * criteria,
                                                                     options.samples * criteria),
        calls_formula="samples per criterion")
    monkeypatch.setitem(sys.modules, "debate_tui.protocols.toy", module)
    monkeypatch.setitem(REGISTRY, "toy", Registration("Toy: one judge, asked a few times", {"judge": "Toy's judge"}))

    built = build_session(Task(text="Tom swam. Tom swam."), Choices(protocol="toy", options={"samples": 3},
                                                                    demo=True))
    assert [c.name for c in built.session.criteria] == ["fluency"] and built.session.options["samples"] == 3
    session = await runner_for(built.session, DemoClient()).run()
    assert session.status == "completed" and session.usage.calls == 3 and session.outcome.scores["fluency"]
    assert "| `toy` (Toy) |" in protocol_table()
    with pytest.raises(ValueError, match="--samples: Input should be less than or equal to 3"):
        build_session(Task(text="x"), Choices(protocol="toy", options={"samples": 9}, demo=True))
    assert "Toy: judges asked, one after the other (default 2, at least 1, at most 3)" in option_help("samples")


@pytest.mark.parametrize("command", ["run", "tui", "batch"])
def test_the_help_of_a_protocol_option_is_its_spec_s(command):
    from debate_tui.cli import build_parser

    sub = build_parser(command)._subparsers._group_actions[0].choices[command]
    text = " ".join(sub.format_help().split())
    rounds = "--rounds N DEBATE: maximum Critic iterations n (the paper's best: 4) (default 4, at least 1, at most 20)"
    assert rounds in text
    assert "--no-feedback MATEval: sets feedback = false: the feedback agent closing each round" in text
