"""One session played headless: its debate streamed to stderr as plain text, the session saved after every turn,
and the one JSON line that sums it up (`run`, `resume`, `fork` and `run --policy` share them)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from debate_tui.assembly.clients import model_client
from debate_tui.assembly.single import assemble_run, play_to_end
from debate_tui.cli.outputs import SaveGuard, silence
from debate_tui.cli.task_args import say_endpoints, warn_stderr
from debate_tui.config import Config, load_config
from debate_tui.domain import Session, task_injection_signs
from debate_tui.engine.control import RunControl
from debate_tui.engine.events import (
    Event,
    Finished,
    NeedsHuman,
    Notice,
    TextDelta,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    Waiting,
)
from debate_tui.report.facts import confidence_lines
from debate_tui.textsafe import inert

REPLY_MARGIN = "  | "
"""Begins every line of a model's reply on the stream: the tool's own lines ("--- Scorer ... ---", "[note]",
"=== completed ===") start at the margin, so a reply that writes one of them cannot pass for it."""


class PlainPrinter:
    """Writes the debate as readable plain text; model text is made inert first, each of its lines indented.

    One turn at a time streams live; turns running beside it in parallel
    (ChatEval's simultaneous talk) are held back and printed whole when they
    finish, so their texts never interleave.
    """

    def __init__(self, out: TextIO):
        self.out: TextIO | None = out
        self.live: int | None = None
        self.held: dict[int, list[str]] = {}
        self.mid_line: set[int] = set()
        """Slots whose reply has begun a line the margin was written for."""

    def _reply(self, slot: int, text: str) -> str:
        """A piece of a slot's reply with the margin before each of its lines (one streamed piece may end mid-line)."""
        if not text:
            return ""
        start = "" if slot in self.mid_line else REPLY_MARGIN
        body = text.replace("\n", "\n" + REPLY_MARGIN)
        if body.endswith(REPLY_MARGIN):  # the next piece opens the next line
            body = body[: -len(REPLY_MARGIN)]
            self.mid_line.discard(slot)
        else:
            self.mid_line.add(slot)
        return start + body

    def _write(self, text: str) -> None:
        if self.out is None:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except OSError:  # the reader went away (`2>&1 | head`, a closed terminal): stop streaming, not judging
            silence(self.out)
            self.out = None

    def _emit(self, slot: int, text: str) -> None:
        if slot == self.live:
            self._write(text)
        else:
            self.held.setdefault(slot, []).append(text)

    def _end(self, slot: int, tail: str) -> None:
        self.mid_line.discard(slot)
        if slot == self.live:
            self.live = None
            self._write(tail)
        else:
            self._write("".join(self.held.pop(slot, [])) + tail)

    def __call__(self, event: Event) -> None:
        match event:
            case TurnStarted(slot=slot, agent=agent, role=role, round=rnd, criterion=criterion):
                if self.live is None:
                    self.live = slot
                self.held.pop(slot, None)
                about = f", {criterion}" if criterion else ""  # names may come from a user's TOML file
                self._emit(slot, inert(f"\n--- {agent} ({role.replace('_', ' ')}), round {rnd}{about} ---") + "\n")
            case TextDelta(slot=slot, text=text):
                self._emit(slot, self._reply(slot, inert(text)))
            case TurnCompleted(turn=turn, replayed=replayed):
                if replayed:
                    self._emit(turn.slot, self._reply(turn.slot, inert(turn.content)) + "\n(replayed from the session)")
                self._end(turn.slot, f"\n[{turn.ending}]\n" if turn.ending else "\n")
            case TurnFailed(slot=slot, error=error, will_retry=retry):
                self._end(slot, f"\n[turn failed: {inert(error)}{'; retrying' if retry else ''}]\n")
            case Notice(message=message):
                self._write(f"[note] {inert(message)}\n")
            case Waiting(what=what):
                self._write(f"[waiting] {inert(what)} ...\n")
            case NeedsHuman(question=question):
                self._write(f"[needs a human decision] {inert(question)}\n")
            case Finished(status=status, error=error):
                self._write(f"\n=== {status}{': ' + inert(error) if error else ''} ===\n")


def summary_line(session: Session, **extra: str) -> str:
    outcome = session.outcome
    usage = session.usage
    return json.dumps({
        "session": session.id,
        "protocol": session.protocol,
        "status": session.status,
        "scores": dict(outcome.scores) if outcome else {c.name: None for c in session.criteria},
        "verdict": outcome.verdict if outcome else None,
        "calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cost_usd": round(usage.cost_usd, 6),
        "error": session.error,
        "unscored": sum(turn.unscored for turn in session.turns),
        "truncated": sum(turn.truncated for turn in session.turns),
        "confidence": dict(outcome.confidence) if outcome else {c.name: None for c in session.criteria},
        "confidence_basis": confidence_lines(session),
        "injection_signs": task_injection_signs(session.task),
        **extra,
        **({"forked_from": session.forked_from.model_dump()} if session.forked_from is not None else {}),
    })


def play(session: Session, session_path: Path, config: Config | None = None) -> str | None:
    """Run to the end, saving after every turn, the debate on stderr; the reason when the file could not be
    written (the session is then marked failed)."""
    limits = (config or load_config()).limits
    say_endpoints(session.agents)
    control = RunControl()
    save = SaveGuard(session_path, control)  # a session file that cannot be written stops the run
    runner = assemble_run(session, model_client(limits), limits, emit=PlainPrinter(sys.stderr), save=save,
                          control=control, warn=warn_stderr)
    play_to_end(runner, control)
    if save.error is not None:
        save.mark_failed(session)
    return save.error
