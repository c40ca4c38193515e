"""`debate-tui sessions` as a person reads it (issue 46): a header, columns that line up whatever the rows hold,
the model that tells two runs on one text apart, and the text as written (no Python quotes), still inert."""

from __future__ import annotations

from debate_tui.cli import main
from debate_tui.store import SessionStore
from tests.helpers.sessions import make_session


def test_the_list_has_a_header_aligned_columns_the_model_and_the_text_as_written(capsys, tmp_path):
    store = SessionStore(tmp_path / "s")
    store.root.mkdir()
    texts = ["It's Tom's \"pool\" day.", "Short\x1b[2J one."]
    for text, model, criteria in zip(texts, ["demo/offline", "openai/a-much-longer-model-name"],
                                     ["coherence", "coherence,fluency"], strict=True):
        session = make_session(text=text, model=model, criteria=criteria)
        session.id = f"2026010{len(text) % 9}-000000-{model[:4].replace('/', 'x')}"
        store.save(session)
    assert main(["sessions", "--no-examples", "--sessions-dir", str(store.root)]) == 0
    out = capsys.readouterr().out
    head, *rows = out.splitlines()
    assert head.split() == ["ID", "DATE", "PROTOCOL", "STATUS", "MODEL", "CRITERIA", "RESULT", "TEXT"]
    assert len(rows) == 2 and "\x1b" not in out
    for column in ("PROTOCOL", "MODEL", "CRITERIA", "TEXT"):
        start = head.index(column)
        assert all(row[start - 2:start] == "  " and row[start] != " " for row in rows), column
    shown = {row[head.index("TEXT"):] for row in rows}
    assert shown == {"It's Tom's \"pool\" day.", "Short\\x1b[2J one."}
    models = {row[head.index("MODEL"):head.index("CRITERIA")].strip() for row in rows}
    assert models == {"demo/offline", "openai/a-much-longer-model-name"}
