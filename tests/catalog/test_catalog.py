"""Criteria and personas: built-in sets, qualified names, user directories and TOML errors."""

from __future__ import annotations

import pytest

from debate_tui.catalog import (
    CatalogError,
    find_criterion,
    find_persona,
    load_catalog,
    resolve_criteria,
    resolve_personas,
)
from debate_tui.config import load_config


def test_bare_names_resolve_to_the_first_set_and_qualified_names_pick_one():
    assert find_criterion("coherence").scale == "1-5"
    assert find_criterion("topical-chat/coherence").scale == "1-3"
    assert find_criterion("groundedness").scale == "0-1"
    assert find_criterion("overall").scale == "1-10"
    assert [c.name for c in resolve_criteria("REP, LINC")] == ["REP", "LINC"]


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(CatalogError, match="valid: coherence, consistency"):
        find_criterion("cohesion")
    with pytest.raises(CatalogError, match="general-public"):
        find_persona("pirate")


def test_user_directories_from_the_config_come_first(tmp_path, monkeypatch):
    criteria, personas = tmp_path / "criteria", tmp_path / "personas"
    criteria.mkdir(), personas.mkdir()
    (criteria / "mine.toml").write_text(
        '[[criterion]]\nname = "coherence"\nlow = 0\nhigh = 10\ndescription = "My own coherence."\n')
    (personas / "mine.toml").write_text('[[persona]]\nname = "pirate"\nrole_prompt = "Arr."\n')
    monkeypatch.setenv("DEBATE_TUI_CRITERIA_DIR", str(criteria))
    monkeypatch.setenv("DEBATE_TUI_PERSONAS_DIR", str(personas))
    config = load_config()  # read at the edge, its directories passed down
    catalog = load_catalog(config.criteria_dir, config.personas_dir)
    assert catalog.find_criterion("coherence").description == "My own coherence."
    assert catalog.find_criterion("summeval/coherence").scale == "1-5"
    assert catalog.find_persona("pirate").role_prompt == "Arr."
    assert find_criterion("coherence").description != "My own coherence.", "the built-in catalog reads no config"


def test_malformed_toml_names_file_line_and_problem(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[criterion]]\nname = "x"\nlow = 1\nhigh = = 5\n')
    with pytest.raises(CatalogError, match=r"bad\.toml: .*line 4"):
        resolve_criteria(str(bad))
    inverted = tmp_path / "inverted.toml"
    inverted.write_text('[[criterion]]\nname = "x"\ndescription = "d"\nlow = 5\nhigh = 1\n')
    said = r"inverted\.toml: \[\[criterion\]\] number 1: .*low \(5.0\) must be below high"
    with pytest.raises(CatalogError, match=said):
        resolve_criteria(str(inverted))
    missing = tmp_path / "missing.toml"
    missing.write_text('[[persona]]\nname = "only a name"\n')
    with pytest.raises(CatalogError, match=r"missing\.toml: \[\[persona\]\] number 1: role_prompt: Field required"):
        resolve_personas(str(missing))


def test_a_persona_read_back_from_a_session_is_the_one_that_ran_field_for_field():
    """Issue 43: a persona carried its chooser's line, which a session did not keep, so a read-back equalled the
    one that ran only through an `__eq__` that ignored it. The line lives in the catalog; the persona is whole."""
    from debate_tui.domain import Persona

    critic = find_persona("critic")
    read_back = Persona.model_validate_json(critic.model_dump_json())
    assert vars(read_back) == vars(critic) and read_back == critic
    assert "__eq__" not in vars(Persona), "pydantic's equality: every field counts"
    assert Persona(name="critic", role_prompt="Other.") != critic


def test_the_catalog_describes_each_persona_for_the_chooser(tmp_path):
    personas = tmp_path / "personas"
    personas.mkdir()
    (personas / "mine.toml").write_text('[[persona]]\nname = "pirate"\nrole_prompt = "Arr."\n'
                                        'description = "a reader who says arr"\n'
                                        '[[persona]]\nname = "critic"\nrole_prompt = "Mine."\n')
    described = load_catalog(personas_dir=personas).described_personas()
    assert list(described) == sorted(described)
    assert described["pirate"] == "a reader who says arr"
    assert described["critic"] == "", "the user's persona replaces the built-in one, its line with it"
    assert load_catalog().described_personas()["critic"].startswith("a referee checking fluency")
    bad = tmp_path / "bad.toml"
    bad.write_text('[[persona]]\nname = "x"\nrole_prompt = "y"\ndescription = 3\n')
    with pytest.raises(CatalogError, match=r"bad\.toml: \[\[persona\]\] number 1: description: .*string"):
        resolve_personas(str(bad))
