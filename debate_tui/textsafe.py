"""Text from models and users is data: make it inert before it reaches a terminal."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def inert(text: str) -> str:
    """Show control characters (ESC, BEL, CSI, ...) as visible escapes instead of obeying them."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
