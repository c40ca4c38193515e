"""mkdocs hook: README.md is the site's home page, so the front page is written once.

The README links into docs/ (`docs/tutorial.md`, `docs/screenshots/...`); on the site those
pages sit at the root, so the prefix goes. A link to a repository file outside docs/
(CHANGELOG.md) has no page on the site and becomes plain code text.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

README = Path(__file__).resolve().parents[1] / "README.md"
OUTSIDE_DOCS = re.compile(r"\[([^\]]+)\]\((?!https?:|#|docs/)[^)]+\)")


def _relink(text: str) -> str:
    return OUTSIDE_DOCS.sub(r"`\1`", text).replace("](docs/", "](")


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "index.md", content=_relink(README.read_text(encoding="utf-8"))))
    return files
