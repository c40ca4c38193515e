"""One HTML page that runs nothing and fetches nothing: the frame of every HTML file debate-tui writes.

The page holds no script at all, and its Content-Security-Policy allows none
(nor anything fetched from elsewhere, a form, or a base URL): the only style
is the page's own, allowed by its hash. Every string that came from a model,
a user or a data file passes through `esc` (visible escapes for control, bidi
and zero-width characters, then HTML escaping), so `<script>`, `<!--` or a
`javascript:` link in it is text on the page. Light or dark follows the
reader's system setting; print drops what only a screen needs.
"""

from __future__ import annotations

import base64
import hashlib
import html

from debate_tui.textsafe import inert

BASE_CSS = """
:root { color-scheme: light dark; --bg: #fdfdfc; --fg: #1d1f21; --muted: #5c6370; --line: #d0d4da;
  --panel: #f2f4f7; --tip: #ffffff; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #1b1d21; --fg: #e3e5e8; --muted: #9aa2ad; --line: #3a3f47; --panel: #25282d; --tip: #2c3036; }
}
body { background: var(--bg); color: var(--fg); font: 15px/1.5 system-ui, sans-serif; max-width: 62rem;
  margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem;
  margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; }
caption { text-align: left; color: var(--muted); }
th, td { border: 1px solid var(--line); padding: .25rem .5rem; text-align: left; vertical-align: top; }
td { overflow-wrap: break-word; }
.wide { max-width: 100%; overflow-x: auto; }
th { background: var(--panel); }
.muted, .note { color: var(--muted); }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13.5px; }
pre { background: var(--panel); padding: .75rem; border-radius: 6px; overflow-x: auto; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  h2 { break-after: avoid; } tr, pre { break-inside: avoid; }
}
"""


def esc(text: object) -> str:
    """Text from anywhere, safe in an element or an attribute: visible escapes, then HTML escaping."""
    return html.escape(inert(str(text)), quote=True)


def policy(style: str) -> str:
    """No script from anywhere (script-src falls back to 'none'), no fetch, no form: only this style."""
    digest = base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode("ascii")
    return (f"default-src 'none'; style-src 'sha256-{digest}'; img-src data:; base-uri 'none'; "
            "form-action 'none'")


def page(title: str, body: str, css: str = "") -> str:
    """The whole document; `title` is escaped here, `body` must be HTML built with `esc`."""
    style = BASE_CSS + css
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f'<meta http-equiv="Content-Security-Policy" content="{policy(style)}">\n'
            '<meta name="referrer" content="no-referrer">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{esc(title)}</title>\n<style>{style}</style>\n</head>\n<body>\n{body}</body>\n</html>\n")


def table(head: list[str], rows: list[list[str]], caption: str = "") -> str:
    """A table of plain strings, every cell escaped."""
    cells = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>" for row in rows)
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return wide(f"<table>{cap}<thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>")


def wide(table_html: str) -> str:
    """A table in a box that scrolls sideways when a cell holds a word wider than the page: its cells break a
    word only when it alone overflows (`overflow-wrap: anywhere` let the table shrink a column until words broke
    mid-way, "overrid/e")."""
    return f'<div class="wide">{table_html}</div>\n'


def section(anchor: str, title: str, body: str) -> str:
    """A titled section, or nothing when the body is empty."""
    return f'<section id="{anchor}">\n<h2>{esc(title)}</h2>\n{body}</section>\n' if body else ""
