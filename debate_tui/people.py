"""Who is at the keyboard: the name recorded on a person's actions, and the one a report calls "you"."""

from __future__ import annotations

import getpass


def current_user() -> str:
    """The login name, or "user" where there is none (some containers have no entry for their uid)."""
    try:
        return getpass.getuser()
    except Exception:  # getpass raises OSError, KeyError or ImportError by platform when no name is found
        return "user"
