"""`debate-tui serve`: the TUI in a web browser, through textual-serve (the `serve` extra).

Each browser tab that opens the page starts its own `debate-tui tui` on this
machine: the debates run here, with this machine's keys and files. The app has
no login, so it listens on the loopback address only, unless --public is given
with another --host; the URL printed at start carries a token made for this
run (as Jupyter's does), without which the server answers nothing, and a page
from another origin or a request naming another host is refused. At most
--max-tabs tabs run at once. In the browser, export and copy hand the file or the text
to the browser (a download, a new tab) instead of writing on this machine.
"""

from __future__ import annotations

import argparse
import ipaddress
import shlex
import sys

from debate_tui.cli.outputs import fail

DEFAULT_MAX_TABS = 4
INSTALL = "debate-tui serve needs the serve extra: pip install 'debate-tui[serve]' (textual-serve)"
LOOPBACK_NAMES = ("localhost",)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("serve", help="serve the TUI to a web browser (needs the serve extra)",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1", metavar="ADDRESS",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, metavar="N", help="port to listen on (default 8000)")
    parser.add_argument("--max-tabs", type=int, default=DEFAULT_MAX_TABS, metavar="N",
                        help=f"most browser tabs served at once, each a TUI process holding this machine's keys "
                             f"(default {DEFAULT_MAX_TABS})")
    parser.add_argument("--public", action="store_true",
                        help="allow a --host other than the loopback address: anyone who reaches it can run debates "
                             "with this machine's keys (there is no login)")
    parser.add_argument("tui_args", nargs=argparse.REMAINDER, metavar="-- TUI_ARGS",
                        help="options for each tab's TUI after --, e.g. -- --demo --protocol chateval")
    parser.set_defaults(handler=handle)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def tab_command(tui_args: list[str]) -> str:
    """What each browser tab runs: this Python, this debate-tui, the TUI with the given options."""
    args = tui_args[1:] if tui_args[:1] == ["--"] else tui_args
    return shlex.join([sys.executable, "-m", "debate_tui", "tui", *args])


def handle(args: argparse.Namespace) -> int:
    if not 1 <= args.port <= 65535:
        return fail(f"--port {args.port} is not a port (1-65535)")
    if args.max_tabs < 1:
        return fail(f"--max-tabs {args.max_tabs} must be at least 1")
    if not is_loopback(args.host) and not args.public:
        return fail(f"--host {args.host} would let anyone who reaches it run debates with this "
                    "machine's keys (the app has no login); add --public to listen there anyway")
    try:
        from debate_tui.cli.serve_guard import GuardedServer
    except ImportError:
        return fail(INSTALL)
    if not is_loopback(args.host):
        print(f"debate-tui: warning: listening on {args.host}:{args.port} with no login: anyone who reaches it "
              "can run debates with this machine's keys and read its sessions", file=sys.stderr)
    server = GuardedServer(tab_command(args.tui_args), host=args.host, port=args.port, max_tabs=args.max_tabs,
                           title="debate-tui")
    print(f"debate-tui: serving the TUI at {server.url} (the token is this run's; Ctrl+C stops)", file=sys.stderr,
          flush=True)
    try:
        server.serve()
    except OSError as exc:
        return fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    return 0
