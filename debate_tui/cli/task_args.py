"""From `run`'s and `batch`'s task flags to a session, through the session factory."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from debate_tui.cli.task_flags import TEXT_FLAGS, choices_from_args
from debate_tui.config import Resolved, flag_values, resolve_current
from debate_tui.domain import AgentSpec, Task
from debate_tui.factory import Built, build_session
from debate_tui.inputs import read_text
from debate_tui.resolver import resolve_choices
from debate_tui.textsafe import inert

Warn = Callable[[str], None]


def build_task(args: argparse.Namespace, warn: Warn) -> Task:
    """The texts the flags name, read and checked; InputError names the flag at fault."""
    texts = {key: read_text(ref, TEXT_FLAGS[key], warn) for key in TEXT_FLAGS if (ref := getattr(args, key, None))}
    return Task(**texts)


def session_from_args(args: argparse.Namespace, task: Task, warn: Warn, resolved: Resolved | None = None) -> Built:
    """The factory's session for these flags, resolved over the configuration they override (`resolved`);
    warnings go to `warn`."""
    resolved = resolved or resolve_current(flag_values(args))
    built = build_session(task, resolve_choices(choices_from_args(args), resolved))
    for warning in built.warnings:
        warn(warning)
    return built


def warn_stderr(message: str) -> None:
    print(f"debate-tui: warning: {inert(message)}", file=sys.stderr)


def say_endpoints(agents: Iterable[AgentSpec]) -> None:
    """Before the first call, when a working directory's `.env` was read (its keys may be in play): where each
    model will be called, with which key variable."""
    from debate_tui import envfile
    from debate_tui.endpoints import endpoint_lines

    if envfile.loaded_from is not None:
        for line in endpoint_lines(agents):
            print(f"debate-tui: note: {inert(line)}", file=sys.stderr)


def input_files(args: argparse.Namespace) -> dict[str, Path]:
    """The files this command reads, by flag (texts, a criteria or personas TOML): no output may be one of them."""
    named = {TEXT_FLAGS[key]: getattr(args, key, None) for key in TEXT_FLAGS}
    named |= {"--criteria": getattr(args, "criteria", None), "--personas": getattr(args, "personas", None)}
    return {flag: Path(ref).expanduser() for flag, ref in named.items()
            if ref and ref != "-" and (flag not in ("--criteria", "--personas") or ref.strip().endswith(".toml"))}


def sessions_dir(args: argparse.Namespace) -> Path | None:
    return Path(args.sessions_dir).expanduser() if getattr(args, "sessions_dir", None) else None
