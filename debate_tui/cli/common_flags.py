"""Flags several commands share, each declared once: the same name, metavar and help wherever it appears."""

from __future__ import annotations

import argparse

from debate_tui.settings import SETTINGS

SESSIONS_DIR = SETTINGS["sessions_dir"]


def add_sessions_dir(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--sessions-dir DIR`: where session files are read and written (a configuration flag: `settings.SETTINGS`)."""
    parser.add_argument(SESSIONS_DIR.flag, metavar=SESSIONS_DIR.metavar, help=SESSIONS_DIR.help)


def add_resampling(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--bootstrap N` and `--seed N` of the 95% intervals (meta, compare), with the one bound they share
    (`stats.check_bootstrap` checks it)."""
    from debate_tui.meta.stats import MAX_BOOTSTRAP  # here: the TUI's parser takes other flags of this module

    parser.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                        help=f"resamples for the 95%% intervals (default 1000; 0: none; at most {MAX_BOOTSTRAP:,})")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the resampling (default 0)")
