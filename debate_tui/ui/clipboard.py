"""Copy to the system clipboard: pyperclip when it has a backend, else OSC 52 through the terminal.

In a browser (`debate-tui serve`) the machine's clipboard is not the reader's: the text opens in a new
browser tab instead, to copy from there.
"""

from __future__ import annotations

import asyncio
import io
from typing import Literal

from textual.app import App

Method = Literal["pyperclip", "osc52", "browser"]


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
    if app.is_web:
        app.deliver_text(io.StringIO(text), save_filename="debate-tui-copy.txt", open_method="browser",
                         mime_type="text/plain")
        return "browser"
    if await asyncio.to_thread(_pyperclip_copy, text):
        return "pyperclip"
    app.copy_to_clipboard(text)
    return "osc52"


def describe(method: Method, what: str = "") -> str:
    """What a copy did, said to the person who asked for it (`what`: e.g. "12 lines ")."""
    if method == "pyperclip":
        return f"Copied {what}to the clipboard (system clipboard via pyperclip)."
    if method == "browser":
        return f"Opened the {what or 'text '}in a new browser tab: copy it from there."
    return (f"Copied {what}through the terminal (OSC 52): pyperclip found no clipboard program here; "
            "paste works if your terminal allows OSC 52.")
