"""A full disk under the outputs of `meta` (--html, --plot), `calibrate` and `escalate`: one line naming the file
and the remedy, exit 2, no half-written or empty file left behind (the run's other writes: test_hostile_files).

On a real tmpfs in a private mount namespace where the machine allows it; a used-up quota and a read-only file
system (EDQUOT, EROFS) are simulated, since a tmpfs has neither.
"""

from __future__ import annotations

import errno
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from debate_tui.cli import main

DRIVER = r'''
import json, os, subprocess, sys
cli, root, out = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
full = f"{root}/full"
os.makedirs(full, exist_ok=True)
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", full], check=True)
with open(f"{full}/plot.svg", "w") as old:
    old.write("<svg>the plot of yesterday</svg>")
with open(f"{full}/filler", "wb") as handle:
    handle.write(b"x" * 4096)
results, policy = f"{root}/results.jsonl", f"{root}/policy.json"
runs = {}
for name, argv in {
    "html": ["meta", results, "--level", "turn", "--html", f"{full}/m.html"],
    "plot": ["meta", results, "--level", "turn", "--plot", f"{full}/m.png"],
    "plot-again": ["meta", results, "--level", "turn", "--plot", f"{full}/plot.svg"],
    "calibrate": ["calibrate", results, "--alpha", "0.3", "--delta", "0.2", "--min-trusted", "2",
                  "--out", f"{full}/policy.json"],
    "escalate": ["escalate", policy, results, "--out", f"{full}/decisions.jsonl"],
}.items():
    done = subprocess.run([*cli, *argv], capture_output=True, text=True)
    runs[name] = [done.returncode, done.stderr]
runs["files"] = sorted(os.listdir(full))
runs["old-plot"] = open(f"{full}/plot.svg").read()
with open(out, "w", encoding="utf-8") as handle:
    json.dump(runs, handle)
'''


def private_mount(script: str) -> list[str] | None:
    for flags in (["-m"], ["-r", "-m"]):
        if shutil.which("unshare") and subprocess.run(["unshare", *flags, "true"], capture_output=True).returncode == 0:
            return ["unshare", *flags, "/bin/sh", "-c", script]
    return None


def error_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def labelled(tmp_path, isolated_dirs) -> Path:
    """A DEBATE batch of the demo model with human scores, and a policy calibrated on it."""
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{k}", "text": f"A story told {k} times. It ends.",
                                         "human": {"coherence": k % 5 + 1}}) + "\n" for k in range(8)))
    results = tmp_path / "results.jsonl"
    assert main(["batch", str(items), "--demo", "--protocol", "single", "--out", str(results)]) == 0
    assert main(["calibrate", str(results), "--alpha", "0.3", "--delta", "0.2", "--min-trusted", "2",
                 "--out", str(tmp_path / "policy.json")]) == 0
    return results


def test_meta_calibrate_and_escalate_on_a_full_disk_say_one_line_and_leave_nothing(tmp_path, labelled, capfd):
    capfd.readouterr()
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    cli = [sys.executable, "-c", "import sys; from debate_tui.cli import main; sys.exit(main())"]
    out = tmp_path / "runs.json"
    command = private_mount(f"exec '{sys.executable}' '{driver}' '{json.dumps(cli)}' '{tmp_path}' '{out}'")
    if command is None:
        pytest.skip("no private mount namespace here (simulated below)")
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    runs = json.loads(out.read_text())
    remedies = {"html": ("m.html", "--html"), "plot": ("m.png", "--plot"), "plot-again": ("plot.svg", "--plot"),
                "calibrate": ("policy.json", "--out"), "escalate": ("decisions.jsonl", "--out")}
    for name, (file, flag) in remedies.items():
        code, err = runs[name]
        line = error_line(err)
        assert code == 2 and f"{tmp_path}/full/{file}" in line, (name, err)
        assert "No space left on device: free some space there" in line and f"pass {flag} elsewhere" in line, line
    assert runs["files"] == ["filler", "plot.svg"]  # no empty or temporary file
    assert runs["old-plot"] == "<svg>the plot of yesterday</svg>"  # the previous file whole


@pytest.mark.parametrize(("code", "said"), [(errno.EDQUOT, "disk quota is used up"),
                                            (errno.EROFS, "the file system is read-only")])
def test_a_used_up_quota_or_a_read_only_disk_under_meta_outputs_is_one_line(tmp_path, labelled, capfd,
                                                                            monkeypatch, code, said):
    from debate_tui import safefile

    def refused(files, **_):
        raise OSError(code, "refused", str(files[0][0]))

    monkeypatch.setattr(safefile, "write_all_atomic", refused)
    for flag, name in (("--html", "m.html"), ("--plot", "m.svg")):
        capfd.readouterr()
        assert main(["meta", str(labelled), "--level", "turn", flag, str(tmp_path / name)]) == 2
        line = error_line(capfd.readouterr().err)
        assert str(tmp_path / name) in line and said in line and f"pass {flag} elsewhere" in line, line
    assert not (tmp_path / "m.svg").exists()


def test_batch_merge_on_a_full_disk_is_one_line_and_keeps_the_previous_merge(tmp_path, capfd, monkeypatch):
    from debate_tui import safefile

    row = {"id": "a", "criterion": "coherence", "predicted": 4, "session": "s1", "status": "completed"}
    shard, out = tmp_path / "r1.jsonl", tmp_path / "all.jsonl"
    shard.write_text(json.dumps(row) + "\n")
    out.write_text(json.dumps({**row, "predicted": 3}) + "\n")  # the previous merge

    def full(files, **_):
        raise OSError(errno.ENOSPC, "No space left on device", str(files[0][0]))

    monkeypatch.setattr(safefile, "write_all_atomic", full)
    assert main(["batch", "merge", str(shard), "--out", str(out)]) == 2
    line = error_line(capfd.readouterr().err)
    assert f"cannot write {out}: No space left on device: free some space there, or pass --out elsewhere" in line
    assert json.loads(out.read_text())["predicted"] == 3
