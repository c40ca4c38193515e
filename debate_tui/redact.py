"""Keep secrets out of everything we write or show.

Provider errors sometimes echo request headers; anything that goes to a file,
a log or the screen passes through `redact` first.
"""

from __future__ import annotations

import os
import re

_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
_PATTERNS = [
    re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._\-]{8,}"),
    re.compile(r"(?i)(api[_-]?key|x-api-key|x-goog-api-key|authorization)([\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{6,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
]
MASK = "***"
_PROTECTED: set[str] = set()
"""Variables named as key holders (a config's `api_key_env`), whatever they are called."""


def protect_env(name: str) -> None:
    """Treat the value of variable `name` as a secret from now on, even if its name does not say so."""
    _PROTECTED.add(name)


def secret_values() -> list[str]:
    """Values of environment variables that look like or are declared credentials, longest first."""
    values = {v for k, v in os.environ.items() if (_SECRET_ENV.search(k) or k in _PROTECTED) and len(v) >= 8}
    return sorted(values, key=len, reverse=True)


def redact(text: str) -> str:
    for value in secret_values():
        text = text.replace(value, MASK)
    text = _PATTERNS[0].sub(lambda m: m.group(1) + "-" + MASK, text)
    text = _PATTERNS[1].sub(lambda m: m.group(1) + " " + MASK, text)
    text = _PATTERNS[2].sub(lambda m: m.group(1) + m.group(2) + MASK, text)
    return _PATTERNS[3].sub(MASK, text)
