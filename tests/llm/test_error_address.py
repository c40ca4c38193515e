"""A provider that cannot be reached is named (issue 46): "Connection error" four times, 15 s, never said which
address was tried. The api_base's host:port is named; never its path, query or credentials."""

from __future__ import annotations

import json
import socket

import pytest

from debate_tui.llm.litellm_client import server_address
from tests.helpers import FAKE_KEY
from tests.helpers.cli import run_cli


@pytest.mark.parametrize(("api_base", "shown"), [
    ("http://127.0.0.1:8765/v1", "127.0.0.1:8765"),
    ("https://user:sk-secret@api.example.com/v1?key=sk-secret", "api.example.com"),
    ("http://[::1]:9000/v1", "[::1]:9000"),
    ("localhost:11434", "localhost:11434"),
    ("http://host:notaport/v1", "host"),
    ("", None),
    (None, None),
])
def test_the_address_is_host_and_port_only(api_base, shown):
    assert server_address(api_base) == shown


def test_a_closed_port_fails_naming_the_address_tried_and_no_key(capsys, story_file):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, summary, err = run_cli(capsys, "run", "--text", str(story_file), "--model", "openai/fake-model",
                                 "--api-base", f"http://127.0.0.1:{port}/v1", "--retries", "1")
    assert code == 3 and summary["status"] == "failed"
    assert "connection error after 1 attempt" in summary["error"] and f"(trying 127.0.0.1:{port})" in summary["error"]
    assert FAKE_KEY not in err + json.dumps(summary)
