"""What differs between platforms (issue 29): no fcntl (Windows has none), and the state folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from debate_tui.locations import config_dir, state_dir
from debate_tui.ui.locations import ui_state_path

NO_FCNTL = 'import sys; sys.modules["fcntl"] = None; '
"""Any `import fcntl` from here on raises ImportError, as on Windows."""


def without_fcntl(tmp_path: Path, code: str, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBATE_TUI_SESSIONS_DIR": str(tmp_path / "sessions"),
           "DEBATE_TUI_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-c", NO_FCNTL + code, *argv], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def cli(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return without_fcntl(tmp_path, "from debate_tui.cli import main; sys.exit(main())", *argv)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_batch_merge_review_and_probe_run_without_fcntl(tmp_path):
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [
        {"id": f"p{i}", "text": f"Answer one {i}: water boils at 100 C.", "text_b": f"Answer two {i}.",
         "human_verdict": "1"} for i in range(4)])
    items = write_jsonl(tmp_path / "items.jsonl", [
        {"id": f"a{i}", "text": "Tom ran home." + " And then some." * i, "human": {"coherence": 1 + i % 5}}
        for i in range(4)])
    for shard in ("1/2", "2/2"):  # batch/results.py imported fcntl at the top: none of these could start
        done = cli(tmp_path, "batch", str(pairs), "--out", f"o{shard[0]}.jsonl", "--demo", "--protocol", "scaleeval",
                   "--shard", shard)
        assert done.returncode == 0, done.stderr
    merged = cli(tmp_path, "batch", "merge", "o1.jsonl", "o2.jsonl", "--out", "all.jsonl")
    assert merged.returncode == 0 and json.loads(merged.stdout)["items"] == 4, merged.stderr
    assert cli(tmp_path, "review", "all.jsonl", "--list").returncode == 0
    probe = cli(tmp_path, "probe", str(items), "--out", "po", "--demo", "--protocol", "single", "--criteria",
                "coherence", "--probes", "length", "--json")
    assert probe.returncode == 0 and json.loads(probe.stdout)["items"] == 4, probe.stderr


HOLD = """
import time
from pathlib import Path
from debate_tui.batch.results import ResultsFile
with ResultsFile(Path("r.jsonl")).locked("batch"):
    print("held", flush=True)
    time.sleep(30)
"""
TRY = """
from pathlib import Path
from debate_tui.batch.results import ResultsBusy, ResultsFile
try:
    with ResultsFile(Path("r.jsonl")).locked("merge"):
        print("taken")
except ResultsBusy as exc:
    print("busy:", exc)
"""


def test_without_fcntl_a_second_process_is_still_kept_out(tmp_path):
    env = {**os.environ}
    holder = subprocess.Popen([sys.executable, "-c", NO_FCNTL + HOLD], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        second = without_fcntl(tmp_path, TRY)
        assert second.stdout.startswith("busy: r.jsonl is in use (batch, pid "), second.stderr
    finally:
        holder.kill()
        holder.wait()
    assert without_fcntl(tmp_path, TRY).stdout.strip() == "taken"  # the lock died with its process


def test_ui_state_moves_once_from_the_config_folder_to_the_state_folder():
    old = config_dir() / "ui-state.json"
    old.parent.mkdir(parents=True)
    old.write_text('{"theme": "debate-paper"}')
    assert ui_state_path() == state_dir() / "ui-state.json"
    assert not old.exists() and ui_state_path().read_text() == '{"theme": "debate-paper"}'
    old.write_text('{"theme": "an older copy"}')  # moved once: a file reappearing there is not read again
    assert json.loads(ui_state_path().read_text())["theme"] == "debate-paper"
