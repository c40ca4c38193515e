"""The one table of export formats (issue 43): `export --format`, `run --report`'s suffixes and their help all
come from `FORMATS`, so a format added there is offered and written everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from debate_tui.cli import main
from debate_tui.locations import examples_dir
from debate_tui.report.exports import FORMATS, report_format
from debate_tui.store import read_session

EXAMPLE = examples_dir() / "debate-example.json"


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda fmt: fmt.name)
def test_export_writes_every_format_of_the_table(fmt, tmp_path):
    out = tmp_path / f"out{fmt.suffix}"
    assert main(["export", str(EXAMPLE), "--format", fmt.name, "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == fmt.render(read_session(EXAMPLE))


def test_the_help_names_every_format_and_every_report_suffix(capsys):
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    export_help = " ".join(capsys.readouterr().out.split())
    assert f"--format {{{','.join(fmt.name for fmt in FORMATS)}}}" in export_help
    assert all(fmt.help in export_help for fmt in FORMATS)
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    run_help = " ".join(capsys.readouterr().out.split())
    assert all(f"ends in {fmt.suffix}" in run_help for fmt in FORMATS if fmt.report and fmt is not FORMATS[0])


def test_a_report_is_chosen_by_its_suffix_and_the_session_json_is_not_a_report():
    assert [report_format(Path(f"r{suffix.upper()}")).name for fmt in FORMATS for suffix in fmt.suffixes] == [
        fmt.name if fmt.report else "md" for fmt in FORMATS for _ in fmt.suffixes]
