"""How doc blocks are classified and compared: a new block the suite cannot check is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.doc_blocks import compare, parse
from tests.helpers.sessions import run

PAGE = """# A page

```sh
debate-tui run --demo --text examples/story.txt
```
```
| coherence | 1-5 | 4 |
```

Prose, then a block that shows output without saying of what:

```
items 36, judge demo/offline
```

<!-- doc-test: command="debate-tui probe --recorded topical-chat" match=exact -->
```
items 360, judge gpt-3.5-turbo
```

1. In a list:

   <!-- doc-test: skip reason="needs a hosted provider" -->
   ```sh
   debate-tui run --model gpt-4o-mini
   ```

```toml
[limits]
max_cost = 0.5
```

```python
print("a language the suite has no rule for")
```
"""


def test_blocks_are_classified_with_their_markers(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    blocks = parse(page, "page.md")
    assert [(b.line, b.kind) for b in blocks] == [
        (3, "command"), (6, "output"), (12, "unmarked"), (17, "output"), (24, "command"), (28, "data"),
        (33, "unmarked")]
    assert blocks[1].command is blocks[0]
    assert blocks[3].marker == {"command": "debate-tui probe --recorded topical-chat", "match": "exact"}
    assert blocks[4].marker == {"skip": "", "reason": "needs a hosted provider"}
    assert blocks[4].text == "debate-tui run --model gpt-4o-mini\n"


def test_an_unknown_marker_key_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- doc-test: skipp -->\n```sh\ntrue\n```\n")
    with pytest.raises(ValueError, match="unknown doc-test marker key 'skipp'"):
        parse(page, "page.md")


def test_shown_lines_must_be_printed_in_order_with_ellipses_and_any_spacing() -> None:
    printed = 'header\n{"id": "r01", "text": "Boils a litre in three minutes; the lid clicks."}\nzeta   1\nend\n'
    assert compare('{"id": "r01", "text": "Boils a litre in three minutes; ..."}\nzeta 1', printed) is None
    assert compare("zeta 1\nheader", printed) is not None  # out of order
    assert compare("zeta 2", printed) is not None


def test_a_tolerance_admits_close_figures_and_only_those() -> None:
    printed = "coherence 8 0.239 [0.000, 0.839]\n"
    assert compare("coherence 8 0.240 [0.001, 0.838]", printed, tolerance=0.002) is None
    assert compare("coherence 8 0.250 [0.000, 0.839]", printed, tolerance=0.002) is not None
    assert compare("coherence 8 0.240 [0.001, 0.838]", printed) is not None


def test_exact_and_json_keys() -> None:
    assert compare("a\nb\n", "a\nb") is None
    assert compare("a\n", "a\nb", match="exact") is not None
    assert compare('{"a": 1, "b": 2}', 'noise\n{"a": 5, "b": 6}\n', match="keys") is None
    assert "['c']" in compare('{"a": 1, "b": 2}', '{"a": 5, "b": 6, "c": 0}', match="keys")
    assert compare('{"a": 1, "b": 2}', '{"a": 5, "b": 6, "c": 0}', match="subset") is None
    assert "['b']" in compare('{"a": 1, "b": 2}', '{"a": 5, "c": 0}', match="subset")


def test_json_values_are_compared_except_those_shown_as_ellipses() -> None:
    """Issue 46: the tutorial showed one criterion and 4 calls where the run printed two and 18; keys alone
    never saw it."""
    shown = '{"session": "...", "calls": 18, "scores": {"coherence": 5.0}}'
    assert compare(shown, '{"session": "2026-x", "calls": 18, "scores": {"coherence": 5.0}}', "values") is None
    assert "calls" in compare(shown, '{"session": "2026-x", "calls": 4, "scores": {"coherence": 5.0}}', "values")
    assert compare(shown, '{"session": "2026-x", "calls": 4, "scores": {"coherence": 5.0}}', "keys") is None
