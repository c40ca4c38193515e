"""dev.py's closing summary of the two test phases: what a developer reads last names every failure."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _dev():
    spec = importlib.util.spec_from_file_location("dev_for_test", ROOT / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _junit(path: Path, cases: str) -> Path:
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>')
    return path


def test_the_summary_counts_both_phases_and_names_each_failure_as_a_pytest_id(tmp_path, capsys) -> None:
    dev = _dev()
    parallel = dev._outcomes(_junit(tmp_path / "p.xml", (
        '<testcase classname="tests.test_dev_summary" name="test_a"/>'
        '<testcase classname="tests.test_dev_summary" name="test_b[x]"><failure message="boom"/></testcase>'
        '<testcase classname="tests.test_dev_summary" name="test_c"><skipped/></testcase>')))
    serial = dev._outcomes(_junit(tmp_path / "s.xml", '<testcase classname="tests.test_dev_summary" name="test_d"/>'))
    code = dev._summarize([("parallel", 1, 12.0, parallel), ("serial", 0, 3.0, serial)])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert "parallel phase: 1 passed, 1 failed, 1 skipped in 12 s (pytest exit 1)" in out
    assert "  FAILED tests/test_dev_summary.py::test_b[x]" in out
    assert "serial phase: 1 passed, 0 failed, 0 skipped in 3 s" in out
    assert out[-1] == "tests: 2 passed, 1 failed, 1 skipped"


def test_a_phase_that_collected_nothing_is_not_a_failure_and_a_missing_report_counts_nothing(tmp_path, capsys) -> None:
    dev = _dev()
    nothing = dev._outcomes(tmp_path / "never-written.xml")
    assert dev._summarize([("serial", 5, 1.0, nothing)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "tests: 0 passed, 0 failed, 0 skipped"
