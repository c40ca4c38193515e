"""Servers started as child processes: `debate-tui serve` (the URL with the token it prints) and the fake LLM
server (its base URL), for tests whose client runs in other processes or must not share the test's."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers.cli import cli_command, cli_env

SERVING = re.compile(r"serving the TUI at (http://\S+/\?token=\S+) ")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serving(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """The page's URL (token included) once the server answers; the server is stopped afterwards."""
    port = free_port()
    server = subprocess.Popen([*cli_command(), "serve", "--port", str(port), *args], env=env or cli_env(tmp_path),
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        found = SERVING.search(line)
        assert found, line
        url = found.group(1)
        for _ in range(100):
            try:
                with urllib.request.urlopen(url, timeout=2):
                    break
            except OSError:
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


@contextmanager
def fake_server_child(*args: str) -> Iterator[str]:
    """`python -m debate_tui.testing.fake_server ARGS` in a child process: its base URL; stopped afterwards."""
    server = subprocess.Popen([sys.executable, "-m", "debate_tui.testing.fake_server", *args],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        server.terminate()
        server.wait(timeout=10)
