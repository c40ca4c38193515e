"""Flags several commands share, each declared once: the same name, metavar and help wherever it appears."""

from __future__ import annotations

import argparse

SESSIONS_DIR_HELP = "sessions directory (default: sessions_dir in config.toml or DEBATE_TUI_SESSIONS_DIR, else the " \
                    "user data dir)"


def add_sessions_dir(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--sessions-dir DIR`: where session files are read and written (a configuration flag: see `config.OVERRIDES`)."""
    parser.add_argument("--sessions-dir", metavar="DIR", help=SESSIONS_DIR_HELP)
