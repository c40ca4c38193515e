"""`debate-tui completion bash|zsh|fish`: a shell completion script, generated from the argument parser.

    debate-tui completion bash > ~/.local/share/bash-completion/completions/debate-tui
    debate-tui completion zsh > "${fpath[1]}/_debate-tui"
    debate-tui completion fish > ~/.config/fish/completions/debate-tui.fish

The script is static (shtab): completing a word runs no Python, so it costs nothing at the prompt.
"""

from __future__ import annotations

import argparse
import sys

SHELLS = ("bash", "zsh", "fish")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("completion", help="print a shell completion script (bash, zsh or fish)",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    parser.set_defaults(handler=handle)


def script(shell: str) -> str:
    """The completion script for `shell`, covering every command and option."""
    import shtab

    from debate_tui.cli import build_parser

    text = shtab.complete(build_parser(), shell=shell)
    return text if text.endswith("\n") else text + "\n"


def handle(args: argparse.Namespace) -> int:
    sys.stdout.write(script(args.shell))
    return 0
