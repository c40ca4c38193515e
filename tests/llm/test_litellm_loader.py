"""What loading litellm sets up for the whole process."""

from __future__ import annotations

import subprocess
import sys

DROPS = """
import gc
from debate_tui.llm.litellm_loader import load_litellm
load_litellm()

class OpenAIChatCompletion:  # named as litellm's provider handler is
    async def acompletion(self): ...

async def complete(): ...

dropped = OpenAIChatCompletion().acompletion()  # what a call cancelled mid-way leaves behind
ours = complete()
del dropped, ours
gc.collect()
"""


def test_a_litellm_call_dropped_on_cancellation_is_not_warned_about_and_our_own_coroutines_still_are():
    done = subprocess.run([sys.executable, "-c", DROPS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "acompletion' was never awaited" not in done.stderr
    assert "coroutine 'complete' was never awaited" in done.stderr
