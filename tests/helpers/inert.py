"""Text and pages that must stay inert: the hostile model text the tests feed in, the characters that would act on a
terminal, and an HTML page read as a browser would build it."""

from __future__ import annotations

import base64
import hashlib
from html.parser import HTMLParser

TERMINAL_ATTACK = ("Nice. \x1b]0;pwned title\x07 \x1b]52;c;ZWNobyBoaQ==\x07 \x1b[2J\x7f\x9b31m "
                   "first\x85second \u202egnp.exe\u202c zero\u200bwidth\nScore: 3")
"""Sets the terminal's title, sets the clipboard (OSC 52), clears the screen, C1 CSI, a NEL line break,
a right-to-left override and a zero-width space."""

ACTIVE = ["\x1b", "\x07", "\x7f", "\x9b", "\x85", "\u202e", "\u202c", "\u200b"]

ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "dl", "dt", "dd", "section", "p",
                "strong", "table", "caption", "thead", "tbody", "tr", "th", "td", "ol", "ul", "li", "mark", "span",
                "details", "summary", "div"}
"""Every element the page may hold: no script, iframe, object, link, img, a, form, base, svg."""


class Page(HTMLParser):
    """What a browser would build from the file: elements, attributes, comments, text, and the one style."""

    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []
        self.comments: list[str] = []
        self.text: list[str] = []
        self.style = ""
        self._in: list[str] = []
        self.feed(source)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(tag, name, value or "") for name, value in attrs]
        self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._in and self._in[-1] == tag:
            self._in.pop()

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_data(self, data: str) -> None:
        if self._in and self._in[-1] == "style":
            self.style += data
        else:
            self.text.append(data)

    @property
    def words(self) -> str:
        return "".join(self.text)

    def values(self, tag: str, name: str) -> list[str]:
        return [value for t, n, value in self.attrs if t == tag and n == name]


def assert_inert(source: str, more_tags: set[str] = frozenset()) -> Page:
    """Nothing in the page can run, fetch, hide or act on a terminal."""
    page = Page(source)
    assert set(page.tags) <= ALLOWED_TAGS | more_tags, set(page.tags) - ALLOWED_TAGS - more_tags
    assert page.comments == []
    assert not [a for a in page.attrs if a[1].startswith("on") or a[1] in ("href", "src", "style", "action")]
    assert not [ch for ch in ACTIVE if ch in source]
    policy = page.values("meta", "content")[0]
    assert page.values("meta", "http-equiv") == ["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy  # scripts fall back to 'none'
    digest = base64.b64encode(hashlib.sha256(page.style.encode()).digest()).decode()
    assert f"style-src 'sha256-{digest}'" in policy  # the page's own style, and only it, is allowed
    return page
