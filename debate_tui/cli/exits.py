"""The command line's exit codes, written once: what each number means, and which ones each command gives.

Every handler returns one of `Exit`; each command's --help ends with its line of
`COMMANDS` (and the CLI reference is generated from those help texts), so a code's
number, its name in the code and what the user reads cannot drift apart. A number
means the same for every command; the words after it say what it means there.
Light on purpose: `debate-tui --help` reads it, and nothing here imports more.
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """A process exit code with its one-line meaning (`Exit.FAILED.meaning`)."""

    meaning: str

    def __new__(cls, number: int, meaning: str) -> Exit:
        code = int.__new__(cls, number)
        code._value_ = number
        code.meaning = meaning
        return code

    OK = 0, "done"
    CHECK_FAILED = 1, "a check the command was asked to make does not hold (audit, compare --fail-if-worse)"
    BAD_INPUT = 2, "input it cannot use, nothing was called: one line on stderr says why"
    FAILED = 3, "a run, an item or a model check failed"
    STOPPED = 4, "stopped before its end (a budget, Ctrl+C, SIGTERM): resumable"
    NEEDS_HUMAN = 5, "waits for a person's decision"
    INTERRUPTED = 130, "interrupted before the command's own handler was in place"


STATUS_EXIT = {"completed": Exit.OK, "failed": Exit.FAILED, "cancelled": Exit.STOPPED,
               "needs_human": Exit.NEEDS_HUMAN}
"""A single run's exit code from its session's status (`run`, `resume`, `fork`, `run --policy`)."""

_AS_RUN = ((Exit.OK, "completed"), (Exit.BAD_INPUT, "bad input"), (Exit.FAILED, "failed"),
           (Exit.STOPPED, "stopped"), (Exit.NEEDS_HUMAN, "waits for a person's decision (as run)"))

COMMANDS: dict[str, tuple[tuple[Exit, str], ...]] = {
    "tui": ((Exit.OK, "closed"), (Exit.BAD_INPUT, "a file or the configuration cannot be used")),
    "run": ((Exit.OK, "completed"),
            (Exit.BAD_INPUT, "bad input (nothing was called) or a session or report file that cannot be written"),
            (Exit.FAILED, "failed"), (Exit.STOPPED, "stopped (budget or Ctrl+C; resumable)"),
            (Exit.NEEDS_HUMAN, "waits for a person's decision (resume --decide)")),
    "sessions": ((Exit.OK, "listed"), (Exit.BAD_INPUT, "the configuration cannot be used")),
    "resume": _AS_RUN,
    "fork": ((Exit.OK, "completed"),
             (Exit.BAD_INPUT, "bad input (nothing was called: N out of range, an original still running, a model or "
                              "file refused) or a session or report file that cannot be written"),
             *_AS_RUN[2:]),
    "export": ((Exit.OK, "written"), (Exit.BAD_INPUT, "the session cannot be read or the output file is refused")),
    "dataset": ((Exit.OK, "written"), (Exit.BAD_INPUT, "a bad file or name (one line on stderr)")),
    "meta": ((Exit.OK, "done"), (Exit.BAD_INPUT, "bad input (one line on stderr)")),
    "config": ((Exit.OK, "done"),
               (Exit.BAD_INPUT, "the configuration cannot be used or init would overwrite a file")),
    "models": ((Exit.OK, "listed (with --check: every model answered)"),
               (Exit.FAILED, "with --check: a model failed the check, or none is configured")),
    "batch": ((Exit.OK, "done (items needing a person included: see `debate-tui review`)"),
              (Exit.BAD_INPUT, "bad input"), (Exit.FAILED, "some items failed"),
              (Exit.STOPPED, "stopped (budget or interrupt; rerun to resume)")),
    "review": ((Exit.OK, "done (the queue may still hold items)"), (Exit.BAD_INPUT, "bad input")),
    "probe": ((Exit.OK, "done"), (Exit.BAD_INPUT, "bad input"), (Exit.FAILED, "some items failed")),
    "calibrate": ((Exit.OK, "policy written (a tier may never trust)"),
                  (Exit.BAD_INPUT, "bad input (one line on stderr)")),
    "escalate": ((Exit.OK, "decisions written (items needing a person included)"),
                 (Exit.BAD_INPUT, "bad input (one line on stderr)")),
    "labels": ((Exit.OK, "written"), (Exit.BAD_INPUT, "bad input (one line on stderr)")),
    "audit": ((Exit.OK, "the guarantee holds (or too few audited items to tell)"), (Exit.CHECK_FAILED, "violated"),
              (Exit.BAD_INPUT, "bad input (one line on stderr)")),
    "compare": ((Exit.OK, "compared (with --fail-if-worse: B is not worse)"),
                (Exit.CHECK_FAILED, "with --fail-if-worse: B agrees with people less than A"),
                (Exit.BAD_INPUT, "bad input (one line on stderr: a file or line that cannot be read, no pair, a "
                                 "results file against a session, --fail-if-worse without labels)")),
    "serve": ((Exit.OK, "stopped with Ctrl+C"),
              (Exit.BAD_INPUT, "the serve extra is missing, the address is refused or not loopback without --public, "
                               "or --port / --max-tabs is out of range")),
    "completion": ((Exit.OK, "printed"),),
}
"""Each command's exit codes with what they mean for it, in the order `--help` shows them."""


def epilog(command: str) -> str:
    """The end of a command's --help: "Exit codes: 0 completed, 2 bad input, ...". (`Exit.INTERRUPTED` holds for
    every command and is said once, in the CLI reference.)"""
    return "Exit codes: " + ", ".join(f"{int(code)} {said}" for code, said in COMMANDS[command]) + "."
