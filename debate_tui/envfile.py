"""The `.env` file of the working directory: read once, at the edge, before litellm is imported.

litellm reads a `.env` itself when imported, found by searching up from its
own install folder: which file (if any) depended on where Python put litellm,
and only commands that import litellm saw it, so `config show` could say a
key was NOT SET that a run then found. Here the file is the working
directory's, read explicitly for every command; litellm's own search is
switched off (LITELLM_MODE=PRODUCTION, which only skips that search).
Variables already set in the environment win over the file. The file is the working directory's, so someone
else may have written it (a cloned repository's): it may hold keys and settings, but a variable that chooses an
endpoint or names a secret (OPENAI_API_BASE, HTTPS_PROXY, DEBATE_TUI_CONFIG_DIR, ...) is not set (endpoints.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from debate_tui.endpoints import ENV_FILE, admitted

LITELLM_SEARCH_OFF = ("LITELLM_MODE", "PRODUCTION")
_loaded = False
loaded_from: Path | None = None
"""The .env file that was read, for `config show`; None when there was none."""
set_from_file: list[str] = []
"""The variables the .env set (names only), for the notice every command gives before its first call."""
refused: list[str] = []
"""The .env's variables that were not set: they would choose an endpoint or name a secret."""


def switch_off_litellm_search() -> None:
    """Called before every import of litellm: it must not read some other `.env`."""
    os.environ.setdefault(*LITELLM_SEARCH_OFF)


def load_env_file(directory: Path | None = None) -> str | None:
    """Read `.env` from `directory` (default: the working directory) into the environment, once per process.

    Returns a one-line warning when the file exists but cannot be read, or asks for what it may not choose,
    else None. A working directory that was deleted has no `.env`."""
    global _loaded, loaded_from, set_from_file, refused
    switch_off_litellm_search()
    if _loaded:
        return None
    _loaded = True
    try:
        path = (directory or Path.cwd()) / ".env"
        if not path.is_file():
            return None
    except OSError:  # the working directory is gone (FileNotFoundError) or cannot be searched
        return None
    from dotenv import dotenv_values

    try:
        values = dotenv_values(path, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"{path}: not read ({getattr(exc, 'strerror', None) or exc})"
    allowed, refused = admitted((name for name, value in values.items() if value is not None), f"{ENV_FILE} {path}")
    set_from_file = [name for name in allowed if name not in os.environ]
    for name in set_from_file:
        os.environ[name] = values[name] or ""
    loaded_from = path
    if refused:
        return (f"{path}: not set: {', '.join(refused)} (a working directory's .env may not choose an endpoint "
                "or name a secret: set them in your shell or your config.toml)")
    return None


def notice() -> str | None:
    """The line every front end shows before its first call when a `.env` was read: which file and what it set."""
    if loaded_from is None:
        return None
    what = f"set {', '.join(set_from_file)}" if set_from_file else "set nothing new"
    if refused:
        what += f"; not set, as it may not choose an endpoint or name a secret: {', '.join(refused)}"
    return f"read {loaded_from} ({what})"
