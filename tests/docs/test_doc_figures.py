"""Figures and samples the docs quote, checked against the program (issue 33 #12, #17, #19).

The docs may move between README.md and docs/: each check finds its sentence in any of them.
"""

from __future__ import annotations

import json
import re

from debate_tui.cli import main
from tests.helpers import REPO
from tests.helpers.sessions import run

EXAMPLES = REPO / "debate_tui" / "data" / "sessions"


def docs_text() -> str:
    """README.md and every page under docs/, whitespace folded."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    return " ".join(" ".join(page.read_text(encoding="utf-8").split()) for page in pages)


def run_summary(capsys, *argv: str) -> dict:
    assert main(["run", "--demo", *argv]) == 0
    return json.loads(capsys.readouterr().out.splitlines()[-1])


def test_the_costs_paragraph_gives_what_the_demo_runs_spend(capsys, tmp_path):
    """Issue 33 #12: the token counts and the story's word count were stale."""
    story = json.loads((EXAMPLES / "debate-example.json").read_text())["task"]["text"]
    pair = json.loads((EXAMPLES / "scaleeval-example.json").read_text())["task"]
    files = {"story": story, "question": pair["source"], "answer1": pair["text"], "answer2": pair["text_b"]}
    for name, text in files.items():
        (tmp_path / f"{name}.txt").write_text(text)
    story_path = str(tmp_path / "story.txt")
    runs = {
        "DEBATE": ["--protocol", "debate", "--text", story_path],
        "ChatEval with summarizer": ["--protocol", "chateval", "--strategy", "simultaneous-talk-with-summarizer",
                                     "--text", story_path],
        "MATEval SR+CoT": ["--protocol", "mateval", "--text", story_path],
        "ScaleEval": ["--protocol", "scaleeval", "--source", str(tmp_path / "question.txt"),
                      "--text", str(tmp_path / "answer1.txt"), "--text-b", str(tmp_path / "answer2.txt")],
        "single judge with 3 samples": ["--protocol", "single", "--samples", "3", "--text", story_path],
    }
    spent = {}
    for label, argv in runs.items():
        summary = run_summary(capsys, *argv)
        spent[label] = f"{summary['calls']} / {summary['prompt_tokens'] + summary['completion_tokens']:,}"
    claim = (f"With the demo model on a {len(story.split())}-word story and one criterion: "
             f"DEBATE {spent['DEBATE'].replace(' / ', ' calls / ')} tokens, "
             + ", ".join(f"{label} {spent[label]}" for label in list(runs)[1:]))
    assert claim in docs_text()


def test_the_sample_json_line_has_the_keys_run_prints(capsys, tmp_path):
    """Issue 33 #19: the sample lacked `unscored` and `truncated`."""
    (tmp_path / "story.txt").write_text("A short story. It ends well.")
    printed = run_summary(capsys, "--text", str(tmp_path / "story.txt"))
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    samples = [json.loads(line) for page in pages for line in re.findall(r'(?m)^\{"session": .*\}$', page.read_text())]
    assert samples and all(list(sample) == list(printed) for sample in samples)


def test_the_reproduction_command_checks_the_figures_the_readme_quotes():
    """Issue 33 #17: the README said the published figures are reproduced exactly, but not how."""
    text = docs_text()
    match = re.search(r"`python3 dev\.py test (tests/\S+\.py)` recomputes every one of these figures", text)
    assert match, "the README names the command that reproduces the published figures"
    checks = (REPO / match.group(1)).read_text()
    quoted = re.search(r"naturalness \.(\d+)/\.(\d+), coherence \.(\d+)/\.(\d+), engagingness \.(\d+)/\.(\d+), "
                       r"groundedness \.(\d+)/\.(\d+)", text)
    assert quoted
    pairs = [quoted.group(i, i + 1) for i in range(1, 9, 2)]
    for name, (r, tau) in zip(("naturalness", "coherence", "engagingness", "groundedness"), pairs, strict=True):
        assert f'"{name}": (0.{r}, 0.{tau})' in checks, name
    assert "to_six_decimals" in checks


def test_the_performance_tokens_rows_are_what_the_benchmark_counts(tmp_path, monkeypatch):
    """Issue 33 #16: the condensed-to-700 row and every MATEval row had drifted from the program."""
    import asyncio

    from benchmarks import tokens

    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    names = ("chateval one-by-one, condensed to 700", "mateval SA")
    results = asyncio.run(tokens.run_all(tmp_path, names))
    table = (REPO / "docs" / "PERFORMANCE.md").read_text().splitlines()
    for name in names:
        r = results[name]
        row = (f"| {name} | {r['calls']} | {r['prompt_tokens']:,} | {r['completion_tokens']:,} | "
               f"{r['prompt_tokens'] + r['completion_tokens']:,} | {r['prefix']['cached_share']:.0%} |")
        assert row in table, row


def test_performance_gives_one_run_time_the_measured_one():
    """Issue 33 #16: "about 7 minutes", "11.0 min" and "6-8 minutes" in three places."""
    said = (REPO / "docs" / "PERFORMANCE.md").read_text() + (REPO / "benchmarks" / "__main__.py").read_text()
    durations = re.findall(r"[\d.-]+ min(?:utes)?\b", said)
    assert len(re.findall(r"Produced by `python -m benchmarks` on .* in [\d.]+ min ", said)) == 1
    assert len(durations) == 2 and "0.6 min" in durations  # the full run's, and the tokens refresh's
