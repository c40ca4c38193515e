"""Text from models and users is data: make it inert before it reaches a terminal."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def inert(text: str) -> str:
    """Show control characters (ESC, BEL, CSI, ...) as visible escapes instead of obeying them."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


_C1 = re.compile(r"[\x7f-\x9f]")


def inert_json(text: str) -> str:
    """JSON safe for a terminal, meaning the same: JSON escapes C0 controls but not DEL or C1 (8-bit CSI)."""
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
