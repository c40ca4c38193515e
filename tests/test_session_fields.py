"""What rode untyped in `Session.state` has typed fields: the pair's drawn order and the history settings.
The file keeps the same shape, so a session saved before loads alike; a verdict is turned back to the original
numbering in one place (`PairOrder.original`), which the report, the review screen and the protocol all use."""

from __future__ import annotations

import json

from debate_tui.domain import HistorySettings, PairOrder, Session, Task
from debate_tui.locations import examples_dir
from debate_tui.report.facts import turn_heading
from debate_tui.report.markdown import render
from debate_tui.store import read_session
from debate_tui.ui.review import view

EXAMPLE = examples_dir() / "scaleeval-example.json"


def test_a_session_saved_before_reads_its_drawn_order_as_a_typed_field():
    session = read_session(EXAMPLE)
    assert session.order == PairOrder(swapped=True, speakers=("Speaker 1", "Speaker 2", "Speaker 3"))
    first = session.turns[0]
    assert (first.verdict, session.original_verdict(first.verdict)) == ("2", "1")
    assert view.answer(session, first) == "verdict 1"
    assert turn_heading(first, session.order).endswith("verdict 2 as presented (1 in the original numbering)")
    assert "verdict 2 as presented (1 in the original numbering)" in render(session)


def test_kept_order_and_history_settings_write_the_file_as_before():
    session = Session(protocol="scaleeval", criteria=[], agents=[], task=Task(text="a", text_b="b"))
    assert session.order == PairOrder() and session.history == HistorySettings()
    session.keep_order(PairOrder(swapped=False, speakers=("B", "A")))
    session.keep_history(HistorySettings(max_history_tokens=900, condense="digest"))
    state = json.loads(session.model_dump_json())["state"]
    assert state == {"order": {"swapped": False, "speakers": ["B", "A"],
                               "numbering": "the speakers saw the texts in the original order"},
                     "max_history_tokens": 900, "condense": "digest"}
    again = Session.model_validate_json(session.model_dump_json())
    assert again.history == HistorySettings(max_history_tokens=900, condense="digest")
    assert again.order.speakers == ("B", "A") and again.original_verdict("1") == "1"
    plain = Session(protocol="debate", criteria=[], agents=[], task=Task(text="a"))
    plain.keep_history(HistorySettings())
    assert plain.state == {}  # the defaults are not written, as before


def test_the_state_is_typed_a_wrong_value_refused_and_a_newer_programs_key_kept(tmp_path):
    """`Session.state` is a `SessionState`: what each part keeps there is declared once, checked on load."""
    import pytest

    from debate_tui.store import SessionFileError

    raw = json.loads(EXAMPLE.read_text())
    raw["state"] |= {"weighted_scores": {"coherence": 3.1, "fluency": None}, "from_a_newer_program": {"x": 1}}
    kept = tmp_path / "kept.json"
    kept.write_text(json.dumps(raw))
    session = read_session(kept)
    assert session.state["weighted_scores"] == {"coherence": 3.1, "fluency": None}
    assert json.loads(session.model_dump_json())["state"]["from_a_newer_program"] == {"x": 1}
    raw["state"]["condense"] = "shout"
    kept.write_text(json.dumps(raw))
    with pytest.raises(SessionFileError, match="not a valid session file"):
        read_session(kept)
