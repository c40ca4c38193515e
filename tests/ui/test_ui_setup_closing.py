"""The setup form closes cleanly when the app exits while the form is still mounting its controls.

Textual's Select looks for its own parts when it is mounted; an app closing under a form that was mounting
one raised NoMatches (or MountError for a control mounted into a row already gone). `DebateTUI.exit` now
waits for the form to settle. The moment of the exit is swept, since the crash depended on where the
mounting was when the app closed.
"""

from __future__ import annotations

import asyncio

from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from tests.helpers import STORY


async def exit_while_mounting(delay: float) -> list[BaseException]:
    app = DebateTUI(Launch(texts={"text": STORY}))
    errors: list[BaseException] = []
    async with app.run_test(size=(80, 24)):
        await asyncio.sleep(delay)
        app.exit()
        for _ in range(300):  # the app closes on its own, as it does for a person (run_test would force it)
            if not app.is_running:
                break
            await asyncio.sleep(0.01)
    if app._exception is not None:  # noqa: SLF001  the one place run_test keeps what crashed the app
        errors.append(app._exception)  # noqa: SLF001
    return errors


async def test_the_app_exits_cleanly_at_any_moment_of_the_setup_forms_mounting():
    crashes = []
    for step in range(30):
        try:
            crashes += await exit_while_mounting(step * 0.01)
        except Exception as exc:  # run_test re-raises what crashed the app
            crashes.append(exc)
    assert crashes == []
