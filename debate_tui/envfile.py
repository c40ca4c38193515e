"""The `.env` file of the working directory: read once, at the edge, before litellm is imported.

litellm reads a `.env` itself when imported, found by searching up from its
own install folder: which file (if any) depended on where Python put litellm,
and only commands that import litellm saw it, so `config show` could say a
key was NOT SET that a run then found. Here the file is the working
directory's, read explicitly for every command; litellm's own search is
switched off (LITELLM_MODE=PRODUCTION, which only skips that search).
Variables already set in the environment win over the file.
"""

from __future__ import annotations

import os
from pathlib import Path

LITELLM_SEARCH_OFF = ("LITELLM_MODE", "PRODUCTION")
_loaded = False
loaded_from: Path | None = None
"""The .env file that was read, for `config show`; None when there was none."""


def switch_off_litellm_search() -> None:
    """Called before every import of litellm: it must not read some other `.env`."""
    os.environ.setdefault(*LITELLM_SEARCH_OFF)


def load_env_file(directory: Path | None = None) -> str | None:
    """Read `.env` from `directory` (default: the working directory) into the environment, once per process.

    Returns a one-line warning when the file exists but cannot be read, else None."""
    global _loaded, loaded_from
    switch_off_litellm_search()
    if _loaded:
        return None
    _loaded = True
    path = (directory or Path.cwd()) / ".env"
    if not path.is_file():
        return None
    from dotenv import dotenv_values

    try:
        values = dotenv_values(path, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"{path}: not read ({getattr(exc, 'strerror', None) or exc})"
    for name, value in values.items():
        if value is not None and name not in os.environ:
            os.environ[name] = value
    loaded_from = path
    return None
