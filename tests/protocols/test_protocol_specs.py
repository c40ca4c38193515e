"""Every protocol declares itself in one spec, and what it declares holds: its call count, its inputs, its options."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from debate_tui.choices import Choices
from debate_tui.cli import main
from debate_tui.domain import AgentSpec
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
    with pytest.raises(ValueError, match="unknown role 'umpire'"):  # a session's agents play registered roles
        AgentSpec(name="Umpire", role="umpire", model="demo/offline")
    assert AgentSpec(name="You", role="human", model="demo/offline").role == "human"


def test_a_registered_role_is_a_role_an_agent_may_play(monkeypatch):
    monkeypatch.setitem(REGISTRY, "toy", Registration("Toy: one umpire", {"umpire": "Toy's umpire"}))
    assert AgentSpec(name="Umpire", role="umpire", model="demo/offline").role == "umpire"


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


@pytest.fixture
def fresh_flags():
    """The protocol option flags generated again for a protocol registered by the test, and after it."""
    from debate_tui.cli.task_flags import option_flags

    option_flags.cache_clear()
    yield
    option_flags.cache_clear()


async def test_a_new_protocol_is_one_module_and_one_registration(monkeypatch, fresh_flags):
    """A protocol no front end knows: registered with one entry, its spec is all the factory, the command line's
    flags, the README table, the runner and the demo model need."""
    import sys
    import types

    from pydantic import Field

    from debate_tui.cli import build_parser
    from debate_tui.cli.reference import protocol_table
    from debate_tui.cli.task_flags import choices_from_args
    from debate_tui.domain import AgentSpec, Outcome, Task
    from debate_tui.factory import build_session, runner_for
    from debate_tui.llm.demo import DemoClient
    from debate_tui.protocols.common import criterion_block, score_form
    from debate_tui.protocols.spec import CallCount, CriteriaRule, ProtocolOptions, ProtocolSpec

    class Options(ProtocolOptions):
        panel: int = Field(2, ge=1, le=3)
        """Judges asked, one after the other."""
        polite: bool = True
        """Ask nicely."""

    async def run(ctx):
        outcome = Outcome()
        panel = Options.model_validate(ctx.options).panel
        for criterion in ctx.criteria:
            turns = [await ctx.turn("Judge", [{"role": "user", "content": (
                f"You will be given a text to rate on one metric.\n{criterion_block(criterion)}\n\n"
                f"[Text to evaluate]\n{ctx.task.text}\n[End of text]\n\n{score_form(criterion)}")}],
                round=n, criterion=criterion, expect="score") for n in range(panel)]
            outcome.scores[criterion.name] = turns[-1].score
        return outcome

    module = types.ModuleType("debate_tui.protocols.toy")
    module.SPEC = ProtocolSpec(
        name="toy", title="Toy", paper="none", options=Options, criteria=CriteriaRule("score", ("fluency",)),
        build_agents=lambda options, models, personas=None: [AgentSpec(name="Judge", role="judge",
                                                                       model=models.model_for("Judge", "judge"))],
        run=run, calls=lambda options, criteria, pairwise: CallCount(options.panel * criteria,
                                                                     options.panel * criteria),
        calls_formula="panel per criterion", demo="debate_tui.protocols.toy_demo")
    parts = types.ModuleType("debate_tui.protocols.toy_demo")
    parts.PARTS = {"judge": lambda request, facts: f"A toy's judge: {facts.words} words.\n\nScore: 2"}
    monkeypatch.setitem(sys.modules, "debate_tui.protocols.toy", module)
    monkeypatch.setitem(sys.modules, "debate_tui.protocols.toy_demo", parts)
    monkeypatch.setitem(REGISTRY, "toy", Registration("Toy: one judge, asked a few times", {"judge": "Toy's judge"}))

    parser = build_parser("run")
    args = parser.parse_args(["run", "--text", "t", "--panel", "3", "--no-polite"])
    assert choices_from_args(args).options == {"panel": 3, "polite": False}
    with pytest.raises(ValueError, match=r"debate has no such option \(it is read by toy\)"):  # no --protocol
        build_session(Task(text="Tom swam. Tom swam."), choices_from_args(args))
    given = replace(choices_from_args(args), protocol="toy", demo=True)
    built = build_session(Task(text="Tom swam. Tom swam."), given)
    assert [c.name for c in built.session.criteria] == ["fluency"] and built.session.options["panel"] == 3
    session = await runner_for(built.session, DemoClient()).run()
    assert session.status == "completed" and session.usage.calls == 3 and session.outcome.scores["fluency"] == 2
    assert session.turns[0].content == "(demo) A toy's judge: 4 words.\n\nScore: 2"
    assert "| `toy` (Toy) |" in protocol_table()
    with pytest.raises(ValueError, match="--panel: Input should be less than or equal to 3"):
        build_session(Task(text="x"), Choices(protocol="toy", options={"panel": 9}, demo=True))
    help_text = " ".join(parser._subparsers._group_actions[0].choices["run"].format_help().split())
    assert "--panel N Toy: judges asked, one after the other (default 2, at least 1, at most 3)" in help_text
    assert "--no-polite Toy: sets polite = false: ask nicely" in help_text
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--text", "t", "--panel", "many"])


def test_two_protocols_declaring_one_option_differently_are_refused(monkeypatch, fresh_flags):
    """One flag per option name: a switch in one protocol cannot be a number in another."""
    import sys
    import types

    from debate_tui.cli.task_flags import option_flags
    from debate_tui.protocols.spec import ProtocolOptions

    class Options(ProtocolOptions):
        swap: int = 1
        """Not a switch here."""

    module = types.ModuleType("debate_tui.protocols.toy")
    module.SPEC = replace(get_protocol("single"), name="toy", options=Options)
    monkeypatch.setitem(sys.modules, "debate_tui.protocols.toy", module)
    monkeypatch.setitem(REGISTRY, "toy", Registration("Toy: x", {"judge": "Toy's judge"}))
    with pytest.raises(ValueError, match="protocols declare --swap differently"):
        option_flags()


def test_the_tui_reads_a_command_line_without_the_specs_unless_it_sets_a_protocol_option():
    """No pydantic before the first frame for `debate-tui --demo`; a protocol option (abbreviated too, as argparse
    allows) is read by the whole parser, as `run` reads it."""
    import subprocess
    import sys

    code = ("import sys; from debate_tui.cli import parse; from debate_tui.cli.task_flags import choices_from_args; "
            "args = parse(sys.argv[1:]); print('pydantic' in sys.modules, choices_from_args(args).options)")
    def read(*argv: str) -> str:
        return subprocess.run([sys.executable, "-c", code, "tui", *argv], capture_output=True, text=True,
                              check=True).stdout.strip()

    assert read("--demo", "--step", "--temperature", "0.5") == "False {}"
    assert read("--demo", "--roun", "3", "--no-feedback") == "True {'rounds': 3, 'feedback': False}"
    assert read("--tie-breaker") == "True {'tie_breaker': 'agent'}"


@pytest.mark.parametrize("command", ["run", "tui", "batch"])
def test_the_help_of_a_protocol_option_is_its_spec_s(command):
    from debate_tui.cli import build_parser

    sub = build_parser(command)._subparsers._group_actions[0].choices[command]
    text = " ".join(sub.format_help().split())
    rounds = "--rounds N DEBATE: maximum Critic iterations n (the paper's best: 4) (default 4, at least 1, at most 20)"
    assert rounds in text
    assert "--no-feedback MATEval: sets feedback = false: the feedback agent closing each round" in text
