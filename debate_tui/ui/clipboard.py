"""Copy to the system clipboard: pyperclip when it has a backend, else OSC 52 through the terminal."""

from __future__ import annotations

import asyncio
from typing import Literal

from textual.app import App

Method = Literal["pyperclip", "osc52"]


def _pyperclip_copy(text: str) -> bool:
    """True when pyperclip found a clipboard program (xclip, wl-copy, pbcopy, ...)."""
    try:
        import pyperclip

        pyperclip.copy(text)
    except Exception:  # PyperclipException when no backend; anything else is no better
        return False
    return True


async def copy_text(app: App, text: str) -> Method:
    """Copy `text`; pyperclip may spawn a process, so it runs in a thread."""
    if await asyncio.to_thread(_pyperclip_copy, text):
        return "pyperclip"
    app.copy_to_clipboard(text)
    return "osc52"


def describe(method: Method, what: str = "") -> str:
    """What a copy did, said to the person who asked for it (`what`: e.g. "12 lines ")."""
    if method == "pyperclip":
        return f"Copied {what}to the clipboard (system clipboard via pyperclip)."
    return (f"Copied {what}through the terminal (OSC 52): pyperclip found no clipboard program here; "
            "paste works if your terminal allows OSC 52.")
