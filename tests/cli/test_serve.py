"""`debate-tui serve` (issue 29): the TUI in a browser through textual-serve, loopback by default; in the
browser, export and copy hand the file or the text to the browser instead of writing on the server."""

from __future__ import annotations

import socket
import subprocess
import sys
import urllib.request

import pytest
from textual.app import App

from debate_tui.cli import main
from debate_tui.cli.serve import is_loopback, tab_command
from debate_tui.ui.app import DebateTUI
from debate_tui.ui.launch import Launch
from tests.helpers.cli import cli_command, cli_env
from tests.helpers.serve import serving
from tests.helpers.ui import RecordingDemo, debate_then_report, export_as, freeze, wait_until


def test_without_the_extra_it_names_the_extra_and_exits_2(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "textual_serve", None)
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)
    monkeypatch.delitem(sys.modules, "debate_tui.cli.serve_guard", raising=False)  # imported again: it needs the extra
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'debate-tui[serve]'" in err and err.count("\n") == 1


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "example.org", "::"])
def test_another_address_needs_public(capsys, host):
    assert main(["serve", "--host", host]) == 2
    assert "--public" in capsys.readouterr().err


def test_loopback_addresses_and_the_tab_command():
    assert all(map(is_loopback, ["127.0.0.1", "localhost", "::1", "127.5.0.1"]))
    assert not any(map(is_loopback, ["0.0.0.0", "10.0.0.1", "host"]))
    assert tab_command(["--", "--demo"]).endswith("-m debate_tui tui --demo")


def test_with_the_extra_it_serves_the_page(tmp_path):
    pytest.importorskip("textual_serve")
    with serving(tmp_path, "--", "--demo") as url, urllib.request.urlopen(url, timeout=10) as reply:
        page = reply.read().decode()
    port = url.split(":")[2].split("/")[0]
    assert "debate-tui" in page and f"ws://127.0.0.1:{port}/ws" in page, page[:300]


def test_a_port_out_of_range_is_one_line_and_exit_2(capsys):
    assert main(["serve", "--port", "99999"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "debate-tui: error: --port 99999 is not a port (1-65535)\n" and captured.out == ""


class Delivered:
    def __init__(self) -> None:
        self.files: list[tuple[str, dict]] = []

    def __call__(self, path_or_file, **kwargs) -> str:
        self.files.append((path_or_file.read(), kwargs))
        return "key"


async def test_in_a_browser_export_and_copy_go_to_the_browser(monkeypatch, tmp_path):
    monkeypatch.setattr(App, "is_web", property(lambda self: True))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    delivered = Delivered()
    app = DebateTUI(Launch(step=False), client=RecordingDemo(), stamp=freeze)
    monkeypatch.setattr(app, "deliver_text", delivered)
    async with app.run_test(size=(120, 36)) as pilot:
        await debate_then_report(pilot)
        await export_as(pilot, "html", "my-report.html")
        await wait_until(pilot, lambda: delivered.files, what="the download")
        text, how = delivered.files[0]
        assert text.startswith("<!DOCTYPE html>") and how["save_filename"] == "my-report.html"
        assert how["mime_type"] == "text/html" and list(cwd.iterdir()) == []  # nothing written on the server
        await pilot.press("c")
        await wait_until(pilot, lambda: len(delivered.files) == 2, what="the copy")
        assert delivered.files[1][1]["open_method"] == "browser" and delivered.files[1][0] == app.screen.markdown


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path):
    pytest.importorskip("textual_serve")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run([*cli_command(), "serve", "--port", str(port)], env=cli_env(tmp_path),
                              capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert f"debate-tui: error: cannot listen on 127.0.0.1:{port}" in done.stderr and "Traceback" not in done.stderr
