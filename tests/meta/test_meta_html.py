"""`meta RESULTS --html FILE.html`: a batch's report in one page (issue 29), checked with an HTML parser."""

from __future__ import annotations

from pathlib import Path

from debate_tui.cli import meta
from tests.helpers.cli import run, write_jsonl
from tests.helpers.inert import assert_inert

HOSTILE_NAME = "coh<script>alert(1)</script>\x1b[2J\u202e"


def rows() -> list[dict]:
    human, final, vote = [1, 2, 3, 4, 5, 2], [1, 3, 3, 4, 5, 1], [2, 2, 3, 5, 4, 1]
    scored = [{"id": f"i{i}", "criterion": HOSTILE_NAME, "human": h, "predicted": f, "predicted_vote": v,
               "protocol": "debate", "model": "m", "calls": 6, "calls_vote": 3, "cost_usd": 0.01,
               "cost_usd_vote": 0.004} for i, (h, f, v) in enumerate(zip(human, final, vote, strict=True))]
    verdicts = [{"id": f"v{k}", "predicted_verdict": p, "human_verdict": h, "protocol": "scaleeval", "model": "m",
                 "calls": 3, "cost_usd": 0.02} for k, (p, h) in enumerate([("1", "1"), ("2", "1"), ("0", "0"),
                                                                              ("2", "2")])]
    return scored + verdicts


def test_meta_html_holds_the_tables_the_plots_as_svg_and_the_printed_text(tmp_path: Path, capsys) -> None:
    results = write_jsonl(tmp_path / "results.jsonl", rows())
    out = tmp_path / "meta.html"
    argv = ["meta", str(results), "--level", "turn", "--bootstrap", "50", "--html", str(out)]
    assert run(meta, argv) == 0
    printed = capsys.readouterr().out
    source = out.read_text(encoding="utf-8")
    page = assert_inert(source, {"svg", "rect", "circle", "text", "polyline", "pre"})
    assert page.tags.count("svg") == 4  # scatter, calibration, verdicts, cost
    assert {"agreement", "vote", "cost", "plots", "printed"} <= set(page.values("section", "id"))
    assert "Vote before discussion" in page.words and "Cost and agreement by protocol" in page.words
    shown = "coh<script>alert(1)</script>\\x1b[2J\\u202e"
    assert shown in page.words  # a criterion name from the data: text, in tables, plots and the printed part
    assert printed.replace("\x1b[2J", "\\x1b[2J").replace("\u202e", "\\u202e").strip() in page.words


def test_meta_html_refuses_to_overwrite_without_force(tmp_path: Path, capsys) -> None:
    results = write_jsonl(tmp_path / "results.jsonl", rows())
    out = tmp_path / "meta.html"
    out.write_text("keep")
    assert run(meta, ["meta", str(results), "--level", "turn", "--bootstrap", "0", "--html", str(out)]) == 2
    assert "--force" in capsys.readouterr().err and out.read_text() == "keep"
    assert run(meta, ["meta", str(results), "--level", "turn", "--bootstrap", "0", "--html", str(out), "--force"]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_a_debate_run_stands_once_in_the_cost_table_over_all_its_criteria(tmp_path: Path, capsys,
                                                                          isolated_dirs) -> None:
    """A DEBATE batch on two criteria: one run, so one protocol cell, as `meta` prints it (not one per figure)."""
    import json

    from debate_tui.cli import main

    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{k}", "text": f"A story told {k} times. It ends.",
                                         "human": {"coherence": k % 5 + 1, "fluency": (k * 2) % 5 + 1}}) + "\n"
                             for k in range(6)))
    results, out = tmp_path / "results.jsonl", tmp_path / "meta.html"
    assert main(["batch", str(items), "--demo", "--protocol", "debate", "--criteria", "coherence,fluency",
                 "--out", str(results)]) == 0
    assert main(["meta", str(results), "--level", "turn", "--html", str(out)]) == 0
    printed = capsys.readouterr().out
    cost = out.read_text(encoding="utf-8").split('id="cost"', 1)[1].split("</table>", 1)[0]
    assert cost.count("<td>debate / demo/offline</td>") == 1 and cost.count("pearson</td>") == 2
    table = printed.split("cost and agreement by protocol", 1)[1]
    assert sum(line.startswith("debate / demo/offline ") for line in table.splitlines()) == 1
