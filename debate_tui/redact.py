"""Keep secrets out of everything we write or show.

Provider errors sometimes echo request headers; anything that goes to a file,
a log or the screen passes through `redact` first.
"""

from __future__ import annotations

import os
import re

_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|KEY_ID)$", re.IGNORECASE)
_PATTERNS = [
    re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._\-]{8,}"),
    re.compile(r"(?i)(api[_-]?key|x-api-key|x-goog-api-key|authorization)([\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{6,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@:]*:[^/?#\s@]*@"),
]
MASK = "***"
_PROTECTED: set[str] = set()
"""Variables named as key holders (a config's `api_key_env`), whatever they are called."""


def protect_env(name: str) -> None:
    """Treat the value of variable `name` as a secret from now on, even if its name does not say so."""
    _PROTECTED.add(name)


_found: tuple[object, list[str]] = ((), [])
"""The environment (its raw items and the protected names) `secret_values` last looked at, and what it found."""


def secret_values() -> list[str]:
    """Values of environment variables that look like or are declared credentials, longest first.

    Asked before every provider call; reading and matching every variable costs about 0.3 ms, so the answer
    is kept until the environment or the protected names change (comparing the raw items costs microseconds).
    """
    global _found
    seen = (tuple(getattr(os.environ, "_data", os.environ).items()), frozenset(_PROTECTED))
    if seen != _found[0]:
        values = {v for k, v in os.environ.items() if (_SECRET_ENV.search(k) or k in _PROTECTED) and len(v) >= 8}
        _found = (seen, sorted(values, key=len, reverse=True))
    return list(_found[1])


def redact(text: str) -> str:
    text = redact_known(text, secret_values())
    text = _PATTERNS[0].sub(lambda m: m.group(1) + "-" + MASK, text)
    text = _PATTERNS[1].sub(lambda m: m.group(1) + " " + MASK, text)
    text = _PATTERNS[2].sub(lambda m: m.group(1) + m.group(2) + MASK, text)
    text = _PATTERNS[3].sub(MASK, text)
    return _PATTERNS[4].sub(lambda m: m.group(1) + MASK + "@", text)  # credentials in a URL


def redact_known(text: str, secrets: list[str]) -> str:
    """Only the secrets this process holds: a model's reply may discuss "sk-..." keys, but never echo ours."""
    for value in secrets:
        text = text.replace(value, MASK)
    return text


class StreamRedactor:
    """Redacts known secrets from text arriving in pieces, even a secret split across two pieces.

    Only the tail that could be the start of a secret is held back (usually nothing), so a stream
    shows as fast as before; `flush` hands over what is held when the stream ends.
    """

    def __init__(self, secrets: list[str]):
        self.secrets = secrets
        self.pending = ""

    def feed(self, piece: str) -> str:
        text = redact_known(self.pending + piece, self.secrets)
        hold = max((size for secret in self.secrets for size in range(min(len(secret) - 1, len(text)), 0, -1)
                    if text.endswith(secret[:size])), default=0)
        self.pending = text[len(text) - hold:] if hold else ""
        return text[:len(text) - hold]

    def flush(self) -> str:
        rest, self.pending = self.pending, ""
        return rest
