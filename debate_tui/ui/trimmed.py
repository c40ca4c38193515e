"""Huge sessions in the TUI: each turn shown up to a size, with the way to the whole of it.

A session file may hold a reply of a hundred megabytes (a model that looped, a file someone made).
The CLI exports it in seconds, but the TUI rendered it whole: the report screen froze for half a minute
at 3.4 GB, and a replay streamed it 24 characters at a time. The screens show a trimmed copy instead:
every turn past `SHOWN_CHARS` is cut there, with a line saying how much is left out and how to read all
of it (the export, from the report screen or `debate-tui export`). The session itself is never changed:
a resume runs on the whole session, and an export writes every character.
"""

from __future__ import annotations

from debate_tui.domain import Session

SHOWN_CHARS = 100_000
"""Characters of one turn a screen shows: about 30 screens of text, rendered in a fraction of a second."""


def left_out(hidden: int, session_id: str) -> str:
    return (f"\n\n[… {hidden:,} more characters of this turn not shown here: export the session for all of it "
            f"(e on the report screen, or debate-tui export {session_id})]")


def trimmed(session: Session, limit: int = SHOWN_CHARS) -> Session:
    """`session` as the screens show it: the same object when no turn passes `limit`, else a copy whose
    long turns are cut there (the rest named by `left_out`). For display only: never save or resume it."""
    if all(len(turn.content) <= limit for turn in session.turns):
        return session
    turns = [turn if len(turn.content) <= limit else
             turn.model_copy(update={"content": turn.content[:limit] + left_out(len(turn.content) - limit,
                                                                                 session.id)})
             for turn in session.turns]
    return session.model_copy(update={"turns": turns})
