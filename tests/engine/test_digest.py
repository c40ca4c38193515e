"""The extractive digest of older debate entries (`--condense digest`): what each line keeps, and that it is stable."""

from __future__ import annotations

from debate_tui.engine.digest import DIGEST_HEADER, OPENING_WORDS, digest_entry, digest_log

REPLY = ("[Critic]: The ending does not follow from the middle. The boy's return is told in one breath, "
         "and the last sentence changes the subject.\nScore: 2")


def test_an_entry_keeps_its_speaker_first_sentence_and_answer_line():
    assert digest_entry(REPLY) == "[Critic]: The ending does not follow from the middle. ... Score: 2"


def test_a_long_first_sentence_is_cut_to_the_opening_words():
    long = "[Scientist]: " + " ".join(f"w{i}" for i in range(60)) + ".\nScores: 3 4"
    line = digest_entry(long)
    assert line.split()[:OPENING_WORDS] == long.split()[:OPENING_WORDS]
    assert line.endswith(" ... Scores: 3 4") and len(line.split()) == OPENING_WORDS + 4  # "...", "Scores:", "3", "4"


def test_a_short_entry_is_kept_whole_and_a_long_last_line_is_not_taken_for_an_answer():
    assert digest_entry("[News Author]: Fine.\nScore: 4") == "[News Author]: Fine. Score: 4"
    assert digest_entry("Critic: NO ISSUE") == "Critic: NO ISSUE"
    prose = "Scorer: First point.\nthe second line is a whole sentence of reasoning, not an answer"
    assert digest_entry(prose) == "Scorer: First point. ..."


def test_a_later_digest_extends_the_earlier_one_so_the_prefix_stays_stable():
    first = digest_log([REPLY, "[General Public]: Easy to follow.\nScore: 4"])
    second = digest_log([first, "[News Author]: Faithful to the events.\nScore: 3"])
    assert first.splitlines()[0] == DIGEST_HEADER and len(first.splitlines()) == 3
    assert second.startswith(first + "\n") and second.endswith("[News Author]: Faithful to the events. Score: 3")
