"""`debate-tui compare A B` (issue 44): two results files or two sessions, through the CLI's `main` and as a child."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from scipy import stats

from debate_tui.cli import main
from tests.helpers import STORY
from tests.helpers.batch import write_items
from tests.helpers.cli import cli_command, cli_env, run_cli, write_jsonl
from tests.helpers.scripts import CRITIC

RESULTS_FIELDS = {"kind", "pairs", "only_a", "only_b", "scores", "verdicts", "agreement", "cost", "worse"}
HUMANS = [1, 2, 3, 4, 5] * 8


def scored(path: Path, predicted: list[float], *, human: bool = True, session: str = "") -> Path:
    rows = [{"id": f"i{k}", "criterion": "coherence", "predicted": p, "calls": 2, "cost_usd": 0.001,
             **({"human": h} if human else {}), **({"session": f"{session}{k}"} if session else {})}
            for k, (p, h) in enumerate(zip(predicted, HUMANS, strict=True))]
    return write_jsonl(path, rows)


def good(tmp_path: Path, **given) -> Path:
    return scored(tmp_path / "good.jsonl", [float(h) for h in HUMANS], **given)


def bad(tmp_path: Path, **given) -> Path:
    return scored(tmp_path / "bad.jsonl", [float(6 - h if h != 3 else 1) for h in HUMANS], **given)


def test_the_json_summary_is_the_last_line_with_exactly_the_issues_fields(capsys, tmp_path):
    code, summary, _ = run_cli(capsys, "compare", str(good(tmp_path, session="a-")), str(bad(tmp_path, session="b-")),
                               "--bootstrap", "200")
    assert code == 0 and set(summary) == RESULTS_FIELDS and summary["kind"] == "results"
    assert set(summary["scores"]) == {"pairs", "mean_a", "mean_b", "mean_delta", "ci95", "wilcoxon_p", "changed"}
    assert set(summary["verdicts"]) == {"pairs", "flips", "flip_rate"}
    assert set(summary["agreement"]) == {"labelled", "a", "b", "delta", "ci95", "mcnemar_p", "better"}
    assert set(summary["cost"]) == {"a_usd", "b_usd", "a_calls", "b_calls"}
    deltas = [(6 - h if h != 3 else 1) - h for h in HUMANS]
    assert summary["scores"]["wilcoxon_p"] == pytest.approx(stats.wilcoxon(deltas).pvalue)
    assert summary["agreement"]["mcnemar_p"] == pytest.approx(stats.binomtest(0, 40, 0.5).pvalue)
    assert summary["agreement"]["better"] == "a" and summary["worse"] is True
    assert summary["cost"] == {"a_usd": pytest.approx(0.04), "b_usd": pytest.approx(0.04), "a_calls": 80,
                               "b_calls": 80}


def test_the_table_names_the_items_that_changed_most_and_each_sides_session(capsys, tmp_path):
    assert main(["compare", str(good(tmp_path, session="a-")), str(bad(tmp_path, session="b-")),
                 "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("A = ") and "40 pairs" in out[0]
    assert any(line.startswith("agreement with people (40 labelled") for line in out)
    header = next(i for i, line in enumerate(out) if line.startswith("changed most"))
    assert "(10 of 40)" in out[header]  # every item moved: those with human 1 or 5 by four points, first
    first = out[header + 2].split()
    assert first[0] in {f"i{k}" for k, h in enumerate(HUMANS) if h in (1, 5)} and first[4] in ("+4.000", "-4.000")
    assert first[-2] == f"a-{first[0][1:]}" and first[-1] == f"b-{first[0][1:]}"
    assert json.loads(out[-1])["pairs"] == 40


def test_json_alone_is_the_only_line(capsys, tmp_path):
    assert main(["compare", str(good(tmp_path)), str(bad(tmp_path)), "--json", "--bootstrap", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["kind"] == "results"


def test_lines_of_one_side_only_are_counted_and_the_first_few_named(capsys, tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": f"x{k}", "predicted": 3} for k in range(9)])
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": f"x{k}", "predicted": 4} for k in range(2)]
                    + [{"id": "y1", "criterion": "fluency", "predicted": 1}])
    code, summary, err = run_cli(capsys, "compare", str(a), str(b), "--bootstrap", "0")
    assert code == 0 and (summary["pairs"], summary["only_a"], summary["only_b"]) == (2, 7, 1)
    assert f"7 (id, criterion) only in {a}: 'x2', 'x3', 'x4', 'x5', 'x6' and 2 more" in err
    assert f"1 (id, criterion) only in {b}: 'y1' (fluency)" in err


def test_no_pair_at_all_is_one_line_and_exit_2(capsys, tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": "x", "predicted": 3}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": "y", "predicted": 3}])
    assert main(["compare", str(a), str(b)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "nothing to compare" in err


@pytest.mark.parametrize(("line", "reason"), [("{not json", "not valid JSON"), ('{"predicted": 3}', "no id"),
                                              ('{"id": 1, "predicted": "high"}', "'predicted' must be a number")])
def test_an_unreadable_line_is_named_by_file_and_line_exit_2(capsys, tmp_path, line, reason):
    a = good(tmp_path)
    b = tmp_path / "b.jsonl"
    b.write_text('{"id": "i0", "predicted": 1}\n\n' + line + "\n")
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and f"{b}:3: " in err and reason in err


def test_labels_are_joined_by_id_as_meta_does(capsys, tmp_path):
    a, b = good(tmp_path, human=False), bad(tmp_path, human=False)
    code, summary, _ = run_cli(capsys, "compare", str(a), str(b), "--bootstrap", "0")
    assert code == 0 and summary["agreement"] is None and summary["worse"] is None
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"id": f"i{k}", "human": {"coherence": h}}
                                                     for k, h in enumerate(HUMANS[:30])])
    code, summary, err = run_cli(capsys, "compare", str(a), str(b), "--labels", str(labels), "--bootstrap", "0")
    assert code == 0 and summary["agreement"]["labelled"] == 30 and summary["agreement"]["a"] == 1.0
    assert f"10 of 40 {a} rows have no labels in {labels}" in err
    stranger = write_jsonl(tmp_path / "stranger.jsonl", [{"id": "zz", "human": {"coherence": 1}}])
    assert main(["compare", str(a), str(b), "--labels", str(stranger)]) == 2
    assert "no id of the" in capsys.readouterr().err


def test_tolerance_is_calibrates_and_moves_what_agrees(capsys, tmp_path):
    off_by_one = scored(tmp_path / "near.jsonl", [min(5.0, h + 1.0) for h in HUMANS])
    _, loose, _ = run_cli(capsys, "compare", str(good(tmp_path)), str(off_by_one), "--tolerance", "1",
                          "--bootstrap", "0")
    _, strict, _ = run_cli(capsys, "compare", str(good(tmp_path)), str(off_by_one), "--bootstrap", "0")
    assert loose["agreement"]["b"] == 1.0 and strict["agreement"]["b"] == pytest.approx(8 / 40)
    assert loose["scores"]["changed"] == 0 and strict["scores"]["changed"] == 32


def test_fail_if_worse_exits_1_when_b_is_worse_0_when_not_and_2_without_labels(capsys, tmp_path):
    g, w = good(tmp_path), bad(tmp_path)
    assert main(["compare", str(g), str(w), "--fail-if-worse", "--bootstrap", "300"]) == 1
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["worse"] is True
    assert main(["compare", str(w), str(g), "--fail-if-worse", "--bootstrap", "300"]) == 0
    assert main(["compare", str(g), str(g), "--fail-if-worse", "--bootstrap", "300"]) == 0
    capsys.readouterr()
    unlabelled = good(tmp_path, human=False), bad(tmp_path, human=False)
    assert main(["compare", *map(str, unlabelled), "--fail-if-worse"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "needs labels" in err


def test_bootstrap_is_bounded_for_compare_and_meta_alike(capsys, tmp_path):
    g = good(tmp_path)
    assert main(["compare", str(g), str(g), "--bootstrap", "100001"]) == 2
    assert "--bootstrap must be between 0 and 100,000" in capsys.readouterr().err
    assert main(["meta", str(g), "--bootstrap", "100001"]) == 2
    assert "--bootstrap must be between 0 and 100,000" in capsys.readouterr().err


def test_a_results_file_against_a_session_is_refused(capsys, tmp_path, story_file):
    assert main(["run", "--demo", "--protocol", "single", "--text", str(story_file)]) == 0
    session = json.loads(capsys.readouterr().out)["session"]
    for argv in ([str(good(tmp_path)), session], [session, str(good(tmp_path))]):
        assert main(["compare", *argv]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and "not one of each" in err


def test_html_is_one_self_contained_page_with_the_changed_items_escaped(capsys, tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": "<script>alert(1)</script>", "predicted": 1, "human": 1},
                                           {"id": "plain", "predicted": 2, "human": 2}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": "<script>alert(1)</script>", "predicted": 5, "human": 1},
                                           {"id": "plain", "predicted": 2, "human": 2}])
    page = tmp_path / "compare.html"
    assert main(["compare", str(a), str(b), "--html", str(page), "--bootstrap", "50"]) == 0
    html = page.read_text()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<svg" in html and html.count("<circle") == 2 and "Changed items" in html and "src=" not in html
    assert "default-src 'none'" in html
    assert main(["compare", str(a), str(b), "--html", str(page)]) == 2
    assert "--html" in capsys.readouterr().err
    assert main(["compare", str(a), str(b), "--html", str(page), "--force"]) == 0


def test_as_a_child_process_the_exit_codes_and_the_last_line(tmp_path):
    g, w = good(tmp_path), bad(tmp_path)
    done = subprocess.run([*cli_command(), "compare", str(g), str(w), "--fail-if-worse"], capture_output=True,
                          text=True, timeout=120, env=cli_env(tmp_path))
    assert done.returncode == 1 and json.loads(done.stdout.splitlines()[-1])["worse"] is True
    assert "Traceback" not in done.stderr
    done = subprocess.run([*cli_command(), "compare", "--help"], capture_output=True, text=True, timeout=120,
                          env=cli_env(tmp_path))
    assert done.returncode == 0 and "Exit codes: 0 compared" in " ".join(done.stdout.split())


def test_batches_of_the_single_judge_and_debate_on_shipped_data_compared_with_labels(capsys, tmp_path):
    items = tmp_path / "items.jsonl"
    assert main(["dataset", "summeval", "--criteria", "coherence", "--limit", "12"]) == 0
    items.write_text(capsys.readouterr().out)
    outs = {}
    for protocol in ("single", "debate"):
        outs[protocol] = tmp_path / f"{protocol}.jsonl"
        assert main(["batch", str(items), "--demo", "--protocol", protocol, "--criteria", "coherence",
                     "--out", str(outs[protocol])]) == 0
    capsys.readouterr()
    labels = tmp_path / "labels.jsonl"
    assert main(["dataset", "summeval", "--criteria", "coherence", "--limit", "12"]) == 0
    labels.write_text(capsys.readouterr().out)
    code, summary, _ = run_cli(capsys, "compare", str(outs["single"]), str(outs["debate"]), "--labels", str(labels))
    assert code == 0 and summary["pairs"] == 12 and summary["agreement"]["labelled"] == 12
    assert summary["cost"]["b_calls"] > summary["cost"]["a_calls"] == 12


# ----- two sessions -----------------------------------------------------------------------------------------------

def _mateval(capsys, path: Path) -> str:
    assert main(["run", "--demo", "--protocol", "mateval", "--text", str(path)]) == 0
    return json.loads(capsys.readouterr().out.splitlines()[-1])["session"]


def test_a_repeated_sentence_removed_leaves_its_rep_error_in_only_a(capsys, tmp_path, story_file):
    fixed = tmp_path / "fixed.txt"
    fixed.write_text(STORY.replace("He went to the pool every morning. He went", "He went"))
    a, b = _mateval(capsys, story_file), _mateval(capsys, fixed)
    code, summary, _ = run_cli(capsys, "compare", a, b)
    assert code == 0 and summary["kind"] == "sessions" and summary["same_text"] is False
    assert summary["a"] == {"session": a, "protocol": "mateval", "models": ["demo/offline"], "status": "completed"}
    assert [e["type"] for e in summary["errors"]["only_a"]] == ["REP"]
    rep = summary["errors"]["only_a"][0]
    assert rep["quote"] == "He went to the pool every morning." and (rep["line"], rep["column"]) == (1, 65)
    assert summary["errors"]["both"] == [] and summary["errors"]["only_b"] == []
    rows = {row["criterion"]: row for row in summary["criteria"]}
    assert rows["REP"] == {"criterion": "REP", "a": -1.0, "b": 0.0, "delta": 1.0}
    assert summary["verdict"] is None


def test_a_session_against_itself_shares_every_turn_and_error(capsys, story_file):
    a = _mateval(capsys, story_file)
    code, summary, _ = run_cli(capsys, "compare", a, a, "--json")
    assert code == 0 and summary["same_text"] is True and summary["shared_turns"] == 26
    assert [e["type"] for e in summary["errors"]["both"]] == ["REP"] and summary["errors"]["only_a"] == []


def test_two_pairwise_sessions_show_both_verdicts(capsys, tmp_path):
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_text("Paris is the capital of France.")
    two.write_text("The capital of France is Lyon, I think.")
    runs = []
    for first, second in ((one, two), (two, one)):
        argv = ["run", "--demo", "--protocol", "scaleeval", "--text", str(first), "--text-b", str(second)]
        assert main(argv) in (0, 5)  # 5: the speakers did not agree and a person decides
        runs.append(json.loads(capsys.readouterr().out.splitlines()[-1]))
    code, summary, _ = run_cli(capsys, "compare", *(r["session"] for r in runs))
    assert code == 0 and summary["verdict"] == {"a": runs[0]["verdict"], "b": runs[1]["verdict"]}
    assert summary["a"]["protocol"] == "scaleeval" and summary["same_text"] is False


def test_session_refusals_are_one_line_exit_2(capsys, story_file):
    a = _mateval(capsys, story_file)
    assert main(["compare", a, "no-such-session"]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1
    assert main(["compare", a, a, "--fail-if-worse"]) == 2
    assert "--fail-if-worse compare results files" in capsys.readouterr().err


def test_single_and_debate_on_the_fake_server_compared_and_gated_both_ways(capsys, tmp_path, llm_server):
    """The whole real path (litellm to the fake server, batch, compare): the single judge says 2 to every story,
    DEBATE's Scorer 4 and its Critic accepts; people said 1-5, so the debate agrees with them less."""
    llm_server.add_rule("NO ISSUE", match=CRITIC)
    llm_server.add_rule("Reasoning about the text.\nScore: 4", model="fake-debater")
    llm_server.add_rule("Reasoning about the text.\nScore: 2", model="fake-judge")
    items = write_items(tmp_path / "items.jsonl", 20)  # human coherence 1 + i % 5
    for name, protocol, model in (("single", "single", "fake-judge"), ("debate", "debate", "fake-debater")):
        out = tmp_path / f"{name}.jsonl"
        assert main(["batch", str(items), "--protocol", protocol, "--criteria", "coherence", "--model",
                     f"openai/{model}", "--api-base", llm_server.base_url, "--out", str(out)]) == 0
    capsys.readouterr()
    single, debate = str(tmp_path / "single.jsonl"), str(tmp_path / "debate.jsonl")
    code, summary, _ = run_cli(capsys, "compare", single, debate, "--fail-if-worse")
    assert code == 0  # the agreement interval of 20 items: 4 agree on each side, so the difference holds 0
    assert summary["scores"] == {**summary["scores"], "pairs": 20, "mean_a": 2.0, "mean_b": 4.0, "changed": 20}
    assert summary["agreement"]["a"] == summary["agreement"]["b"] == 0.2
    assert summary["agreement"]["mcnemar_p"] == pytest.approx(stats.binomtest(4, 8, 0.5).pvalue)
    assert summary["cost"]["a_calls"] == 20 and summary["cost"]["b_calls"] == 40
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"id": f"i{i}", "human": {"coherence": 2}} for i in range(20)])
    assert main(["compare", single, debate, "--labels", str(labels), "--fail-if-worse"]) == 1
    assert main(["compare", debate, single, "--labels", str(labels), "--fail-if-worse"]) == 0


def test_text_from_the_files_stays_inert_in_the_table_the_note_and_the_json(capsys, tmp_path):
    hostile = "x\n\x1b]52;c;cGF5\x07forged\u202e"
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": hostile, "predicted": 1}, {"id": "left", "predicted": 1},
                                           {"id": "only\nA", "predicted": 1}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": hostile, "predicted": 5, "session": "s\x1b[2J"},
                                           {"id": "left", "predicted": 1}])
    assert main(["compare", str(a), str(b), "--bootstrap", "0"]) == 0
    out, err = capsys.readouterr()
    for stream in (out, err):
        assert "\x1b" not in stream and "\x07" not in stream and "\u202e" not in stream
    assert len(err.splitlines()) == 1 and "only\\nA" in err
    assert not any(line.startswith("forged") for line in out.splitlines())
    assert json.loads(out.splitlines()[-1])["pairs"] == 2
    assert main(["compare", str(a), str(b), "--tolerance", "nan"]) == 2
