"""litellm, imported once and only when first needed: `import litellm` costs seconds.

Below both of its users (the client, and `tokens` measuring prompts), so each
imports it at its top without importing the other; importing this module
imports nothing heavy.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

from debate_tui.envfile import switch_off_litellm_search
from debate_tui.giving_way import giving_way

_litellm: Any = None


def litellm_loaded() -> bool:
    """Whether `load_litellm` would return at once (no import left to wait for)."""
    return _litellm is not None


def load_litellm() -> Any:
    """Import litellm once, offline-safe; from a background thread it gives way to a busy main thread."""
    global _litellm
    if _litellm is None:
        with giving_way():
            _litellm = _imported()
    return _litellm


def _imported() -> Any:
    """litellm, set up as every call here expects it (quiet, offline, bounded)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    switch_off_litellm_search()  # the working directory's .env is read by the CLI (envfile.py), not litellm's
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    # litellm builds a provider's coroutine in a worker thread and awaits it when the thread returns: a call
    # cancelled in between (Ctrl+C on a batch: 2-3 interrupts in 8) drops it unawaited, and Python printed
    # "coroutine 'OpenAIChatCompletion.acompletion' was never awaited" over the batch's last lines.
    warnings.filterwarnings("ignore", r"coroutine '[\w.<>]*\.acompletion' was never awaited", RuntimeWarning)
    if litellm.aclient_session is None:  # every OpenAI-compatible reply read under a byte bound (bounded_http)
        from debate_tui.llm.bounded_http import bounded_client

        litellm.aclient_session = bounded_client()
    # A reply of the wrong shape makes pydantic warn with the provider's values in the message
    # ("input_value='...'"): text from a server, not for the terminal. The call fails on its own, in one line.
    warnings.filterwarnings("ignore", "Pydantic serializer warnings", UserWarning)
    import openai.resources  # noqa: F401  imported by the first call otherwise: 0.7 s on the UI's loop
    return litellm
