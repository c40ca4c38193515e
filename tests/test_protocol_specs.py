"""Every protocol declares itself in one spec, and what it declares holds: its call count, its inputs, its options."""

from __future__ import annotations

import json

import pytest

from debate_tui.cli import main
from debate_tui.protocols import PROTOCOLS, all_protocols, get_protocol
from debate_tui.protocols.spec import ProtocolSpec

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
