"""`debate-tui serve` started as a child process, and the URL with the token it prints."""

from __future__ import annotations

import re
import socket
import subprocess
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
