"""debate_tui.parsing on real judge outputs: G-Eval's GPT-3.5 replies (Topical-Chat) and MATEval's ROC reports."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter

import pytest

from debate_tui.meta.datasets import DataRoot, data_dir
from debate_tui.parsing import locate, normalize_error_type, parse_error_report, parse_score
from tests.helpers import FIXTURES

DATA = DataRoot(data_dir())  # shipped in the package
FIXTURE = FIXTURES / "geval_hand_checked.json"

SCALES = {"nat": (1, 3), "coh": (1, 3), "eng": (1, 3), "gro": (0, 1)}
# Measured: (responses, parsed, unscored). Every unscored reply was read: 2 in nat (an echo of the
# evaluation steps, "1. Natural" cut short), 9 in gro (7 echoes of the fact or dialogue with no
# score, "N/A", and "3" on the 0-1 scale).
EXPECTED_COUNTS = {
    "nat": (7160, 7158, 2),
    "coh": (7180, 7180, 0),
    "eng": (7120, 7120, 0),
    "gro": (7140, 7131, 9),
}
# Measured over all 200 stories, spans compared after trimming end punctuation.
# Measured: 555 annotated sentences, 545 spans located (6 quotes unlocatable: the report rewords the
# story), 529 equal. The misses are the two files disagreeing (errors in one and not the other).
MIN_PRECISION, MIN_RECALL = 0.97, 0.95  # measured 0.9706 and 0.9532
MIN_TYPED_PRECISION, MIN_TYPED_RECALL = 0.94, 0.925  # measured 0.9450 and 0.9279



def _geval(aspect: str) -> list[dict]:
    return json.loads(DATA.read_text(f"topical_chat/gpt35_geval/gpt3.5_{aspect}_geval.json"))


@pytest.mark.parametrize("aspect", sorted(SCALES))
def test_scale_is_the_one_the_prompt_asks_for(aspect: str) -> None:
    prompt = _geval(aspect)[0]["prompt"]
    low, high = re.search(r"\((\d)-(\d)\)", prompt).groups()  # e.g. "Naturalness (1-3)"
    assert (float(low), float(high)) == SCALES[aspect]


@pytest.mark.parametrize("aspect", sorted(SCALES))
def test_every_geval_response_parsed_or_unscored(aspect: str) -> None:
    low, high = SCALES[aspect]
    total = parsed = 0
    values: Counter[float] = Counter()
    for row in _geval(aspect):
        assert len(row["all_responses"]) == 20
        for reply in row["all_responses"]:
            total += 1
            score = parse_score(reply, low, high)
            if score is not None:
                parsed += 1
                values[score] += 1
                assert low <= score <= high
    print(f"{aspect}: {total} responses, {parsed} parsed, {total - parsed} unscored, values {sorted(values.items())}")
    assert (total, parsed, total - parsed) == EXPECTED_COUNTS[aspect]


def test_hand_checked_sample_has_no_misread() -> None:
    sample = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert len(sample) >= 120
    misread = []
    for item in sample:
        low, high = SCALES[item["file"].split("_")[1]]
        got = parse_score(item["text"], low, high)
        if got != item["expected"]:
            misread.append((item["file"], item["row"], item["sample"], item["text"][:60], got, item["expected"]))
    assert misread == []


def test_hand_checked_sample_is_the_data() -> None:
    files = {aspect: _geval(aspect) for aspect in SCALES}
    for item in json.loads(FIXTURE.read_text(encoding="utf-8")):
        rows = files[item["file"].split("_")[1]]
        assert rows[item["row"]]["all_responses"][item["sample"]] == item["text"]


Span = tuple[int, int]


def _trim(text: str, start: int, end: int) -> Span:
    """Compare sentences, not their final punctuation: annotators kept or dropped it at will."""
    while end > start and text[end - 1] in " .!?,;:\u2026":
        end -= 1
    return start, end


def _find(piece: str, story: str, start: int = 0) -> Span | None:
    """The annotated sentence in the story, spacing and (if need be) case aside."""
    tokens = re.findall(r"[\w']+|[^\w\s]", piece.strip().strip(".\u2026, "))
    if not tokens:
        return None
    pattern = r"\s*".join(map(re.escape, tokens))
    m = re.compile(pattern).search(story, start) or re.compile(pattern, re.I).search(story, start)
    return _trim(story, m.start(), m.end()) if m else None


def _annotated(row: dict[str, str], story: str) -> list[tuple[str | None, Span | None]]:
    """The CSV's error locations in the story; "/" and "1. 2." separate sentences, as do non-adjacent repeats."""
    out: list[tuple[str | None, Span | None]] = []
    for n in range(1, 10):
        location = (row.get(f"Error Location{n}") or "").strip()
        kind = normalize_error_type(row.get(f"Error Type{n}") or "")
        for piece in filter(str.strip, re.split(r"\s*/\s*|(?:^|(?<=[.!?]))\s*\d\.\s+", location)):
            span = _find(piece, story)
            sentences = re.split(r"(?<=[.!?])\s+", piece.strip())
            if span is None and len(sentences) > 1:
                spans, at = [], 0
                for sentence in sentences:
                    found = _find(sentence, story, at)
                    if found is None:
                        break
                    spans.append(found)
                    at = found[1]
                if len(spans) == len(sentences):
                    out += [(kind, s) for s in spans]
                    continue
            out.append((kind, span))
    return out


def _roc() -> list[tuple[dict[str, str], dict[str, str]]]:
    rows = list(csv.DictReader(io.StringIO(DATA.read_text("mateval/ROC/ROC_test_change_new.csv"), newline="")))
    stories = json.loads(DATA.read_text("mateval/ROC/ROC_test_change_final.json"))
    assert len(rows) == len(stories) == 200
    return list(zip(rows, stories, strict=True))


def _predicted(report: str, story: str) -> list[tuple[str, Span | None]]:
    return [
        (e.type, _trim(story, e.start, e.end) if e.start is not None and e.end is not None else None)
        for e in parse_error_report(report, story)
    ]


@pytest.mark.parametrize("index", [0, 2, 4, 12, 22, 30, 41])
def test_mateval_report_matches_csv_annotation(index: int) -> None:
    """Stories whose report and CSV agree; they cover "1. 2." lists, "/" pairs, case and spacing slips."""
    row, item = _roc()[index]
    story = item["story"]
    assert Counter(_predicted(item["disturbance_data"], story)) == Counter(_annotated(row, story))


def test_mateval_precision_and_recall_over_all_stories() -> None:
    gold_total = located = hits = typed_hits = unlocated = 0
    for row, item in _roc():
        story = item["story"]
        gold = _annotated(row, story)
        predicted = _predicted(item["disturbance_data"], story)
        gold_total += len(gold)
        unlocated += sum(span is None for _, span in predicted)
        located += sum(span is not None for _, span in predicted)
        hits += sum((Counter(s for _, s in gold if s) & Counter(s for _, s in predicted if s)).values())
        typed_hits += sum((Counter(g for g in gold if g[1]) & Counter(p for p in predicted if p[1])).values())
    precision, recall = hits / located, hits / gold_total
    typed_precision, typed_recall = typed_hits / located, typed_hits / gold_total
    print(
        f"MATEval ROC: {gold_total} annotated, {located} located, {unlocated} unlocated, {hits} equal; "
        f"precision {precision:.4f} recall {recall:.4f}; with type: {typed_precision:.4f} / {typed_recall:.4f}"
    )
    assert precision >= MIN_PRECISION and recall >= MIN_RECALL
    assert typed_precision >= MIN_TYPED_PRECISION and typed_recall >= MIN_TYPED_RECALL


# Reports in our Q&A format (ERROR_REPORT_FORMAT), written by hand from the CSV annotations of three
# stories, with the slips a model makes: markdown, curly quotes, a dropped period, another case.
HAND_WRITTEN = {
    1: """Q: Does the text contain Repetition (REP) errors?
A: No
Q: Does the text contain Logical Inconsistency (LINC) errors?
A: Yes
Location: "The dragon evaded capture."
Explanation: The story is about catching toads, not a dragon.
Deduction: -1
Q: Does the text contain Discontinuity (DCONT) errors?
A: Yes
Location: \u201cRobert found a giraffe\u201d
Explanation: A giraffe is unrelated to the toads.
Deduction: -1
Q: Does the text contain Inappropriate Lexical Choice (ILC) errors?
A: Yes
Location: "He caught all the toads with the singular net."
Explanation: "all" and "singular" are ill-chosen.
Deduction: -1
Q: Does the text contain Factual Error (FER) errors?
A: Yes
Location: "he caught all the toads with the singular net"
Explanation: One net cannot catch all the toads.
Deduction: -1
""",
    14: """**Q: Does the text contain Repetition (REP) errors?**
**A:** Yes
- **Location:** "She cooked tacos for Taco Tuesday."
- **Explanation:** It repeats the previous sentence with a change.
- **Deduction:** -1
**Q: Does the text contain Logical Inconsistency (LINC) errors?**
**A:** Yes
- **Location:** "She cooked pizzas for Taco Tuesday."
- **Explanation:** Pizzas do not fit Taco Tuesday.
- **Deduction:** -1
- **Location:** "Instead of eating, they decided to go jogging."
- **Explanation:** They eat later on.
- **Deduction:** -1
**Q: Does the text contain Discontinuity (DCONT) errors?**
**A:** Yes
- **Location:** "Instead of eating,  they decided to go jogging"
- **Explanation:** Jogging breaks the dinner plot.
- **Deduction:** -1
**Q: Does the text contain Inappropriate Lexical Choice (ILC) errors?**
**A:** Yes
- **Location:** "They ate and watched had been watching tv."
- **Explanation:** The tense is wrong.
- **Deduction:** -1
**Q: Does the text contain Factual Error (FER) errors?**
**A:** No
""",
    52: """Q: Does the text contain Repetition (REP) errors?
A: No
Q: Does the text contain Logical Inconsistency (LINC) errors?
A: Yes
Location: "He pled guilty."
Explanation: What follows implies he did not plead guilty.
Deduction: -1
Location: "So Greg wasn\u2019t convicted."
Explanation: The lawyer's state should have lost the case.
Deduction: -1
Q: Does the text contain Discontinuity (DCONT) errors?
A: Yes
Location: "Midday, the lawyer was sleeping and high on cocaine."
Explanation: Unrelated to the context.
Deduction: -1
Q: Does the text contain Inappropriate Lexical Choice (ILC) errors?
A: Yes
Location: "He couldn't afford a bird, so the court gave him one."
Explanation: A lawyer, not a bird.
Deduction: -1
Q: Does the text contain Factual Error (FER) errors?
A: Yes
Location: "Midday, the lawyer was sleeping and high on cocaine"
Explanation: A court-appointed lawyer would not be.
Deduction: -1
""",
}


@pytest.mark.parametrize("index", sorted(HAND_WRITTEN))
def test_our_qa_report_matches_csv_annotation(index: int) -> None:
    row, item = _roc()[index]
    story = item["story"]
    errors = parse_error_report(HAND_WRITTEN[index], story)
    assert Counter(_predicted(HAND_WRITTEN[index], story)) == Counter(_annotated(row, story))
    assert all(e.deduction == 1 and e.explanation for e in errors)
    for e in errors:  # an unlocated quote is kept, and really is not in the story
        assert e.located or locate(e.quote, story) is None and e.quote not in story
