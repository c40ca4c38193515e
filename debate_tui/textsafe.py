"""Text from models and users is data: make it inert before it reaches a terminal, a file or a renderer.

Three kinds of characters act instead of showing: C0/C1 controls and DEL (a
terminal obeys ESC, BEL, OSC 52 "set the clipboard", and NEL is a line break
to Python's `splitlines`), bidirectional overrides and isolates (they reorder
what a reader sees: "Trojan Source"), and zero-width or separator characters
(they hide text or break lines unseen). All of them are shown as escapes.
"""

from __future__ import annotations

import re

_INVISIBLE = "\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
"""Arabic letter mark, zero-width space/joiners/marks, line and paragraph separators, bidi embeddings and
overrides, word joiner and invisible operators, bidi isolates, the zero-width no-break space (BOM)."""
_ACTIVE = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_INVISIBLE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str) -> str:
    """Show control, bidi and zero-width characters as visible escapes (`\\x1b`, `\\u202e`) instead of obeying them."""
    return _ACTIVE.sub(_escape, text)


_NOT_ONE_LINE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_INVISIBLE}]")


def one_line(text: str) -> str:
    """`text` when it is one plain line (a name), else ValueError naming the first offending character.

    A name is printed in one-line fields everywhere (a sessions row, a report's heading, a stream's header):
    a newline there forges a row or a section, a control or bidi character acts instead of showing."""
    found = _NOT_ONE_LINE.search(text)
    if found:
        raise ValueError(f"{inert(text)!r} holds {_escape(found)}; a name is one line without control, "
                         "bidi or zero-width characters")
    return text


def inert_line(text: str) -> str:
    """`inert`, and line breaks and tabs escaped too (`\\x0a`): for a field of a one-line row (the sessions list),
    where a newline from a file someone else wrote would forge a row."""
    return _NOT_ONE_LINE.sub(_escape, text)


def aligned(rows: list[list[str]], indent: str = "") -> list[str]:
    """Rows of one-line cells (already `inert_line`) as lines whose columns line up, each column as wide as its
    widest cell; trailing spaces dropped. For a terminal table such as `debate-tui sessions`."""
    widths = [max(len(row[i]) if i < len(row) else 0 for row in rows) for i in range(max(map(len, rows), default=0))]
    return [(indent + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))).rstrip()
            for row in rows]


_JSON_ACTIVE = re.compile(f"[\\x7f-\\x9f{_INVISIBLE}]")


def inert_json(text: str) -> str:
    """JSON safe for a terminal, meaning the same: JSON escapes C0 controls but not DEL, C1 (8-bit CSI) or bidi."""
    return _JSON_ACTIVE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_MARKDOWN_ACTIVE = re.compile(r"[<&]")


def inert_markdown(text: str) -> str:
    """Markdown that renders what was written: `inert`, and no HTML (an unclosed `<!--` hides the rest of a page).

    `<` and `&` are backslash-escaped (CommonMark), so neither a tag, a comment, an autolink nor an entity
    can start, and the raw file still reads naturally.
    """
    return _MARKDOWN_ACTIVE.sub(lambda m: "\\" + m.group(), inert(text))


_BLOCK_MARK = re.compile(r"^([ \t]*)(#|={2,}[ \t]*$|-{2,}[ \t]*$|_{3,}[ \t]*$|\*{3,}[ \t]*$|`{3,}|~{3,})", re.M)
"""What opens a block at a line's start: a heading, a setext underline or a rule, a code fence."""


def markdown_literal(text: str) -> str:
    """`text` for a Markdown block that shows it as written: no heading, table, rule or fence of its own.

    A model's reply quoted in the report may hold "### Person (human) ... decision 5" or a "## Result" table:
    backslashes and pipes are escaped everywhere (no table can form), and each line's block mark
    ("#", "===", "---", "```") is escaped too, so the report's structure is the report's alone.
    """
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    return _BLOCK_MARK.sub(lambda m: m.group(1) + "\\" + m.group(2), text)
