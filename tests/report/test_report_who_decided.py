"""Issue 46, "Show what the agents wrote, and who decided": in the Markdown and the HTML report a result a person
set says so beside what the agents said, "How the verdict was reached" opens with one sentence under one name,
MATEval's statement is told from its self-reflection, a model's single newline stays a line break, and a
passage has one location."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from debate_tui.domain import ErrorSpan, HumanAction, Outcome, Session, Turn
from debate_tui.engine.runner import apply_overrides
from debate_tui.htmlpage import BASE_CSS
from debate_tui.locations import examples_dir
from debate_tui.report.html import STYLE, render_html
from debate_tui.report.markdown import render
from debate_tui.report.quotes import quoted_passages
from tests.helpers.sessions import make_session


def example(name: str) -> Session:
    return Session.model_validate_json((examples_dir() / f"{name}-example.json").read_text(encoding="utf-8"))


def overridden(who: str = "alice") -> Session:
    """ChatEval's example (three referees, each a 4), its score overridden to 2 through the engine's own rule."""
    session = example("chateval")
    action = HumanAction(kind="override", criterion="coherence", value=2.0, who=who, after_turn=6,
                         text="too generous for a story that repeats itself")
    session.actions.append(action)
    session.outcome = apply_overrides(session.outcome, [action])
    return session


def section(report: str, title: str) -> str:
    return report.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_an_override_reads_as_the_persons_beside_what_the_agents_said():
    session = overridden()
    mine = section(render(session, reader="alice"), "Result")
    assert "| coherence | 1-5 | 2, set by you; the agents said 4, 4, 4 |" in mine
    theirs = section(render(session), "Result")
    assert "| coherence | 1-5 | 2, set by a person (alice); the agents said 4, 4, 4 |" in theirs
    page = render_html(session)
    assert "<td>2, set by a person (alice); the agents said 4, 4, 4</td>" in page


def test_how_the_verdict_was_reached_opens_with_one_sentence_and_keeps_a_persons_change_apart():
    session = overridden()
    how = section(render(session, reader="alice"), "How the verdict was reached").strip().split("\n\n")
    assert how[0] == "The result is a person's: coherence 2, set by you; the agents said 4, 4, 4."
    rule = how.index("The agents' answer, by the protocol's rule:")
    assert how[rule + 1] == "- coherence: mean of the referees' final-turn scores"
    changed = how.index("Changed by a person afterwards:")
    assert how[changed + 1].startswith("- coherence: score overridden by alice from 4.0 to 2.0")
    assert "overridden" not in how[rule + 1]


def test_the_html_page_names_the_section_as_the_markdown_does():
    page = render_html(overridden())
    assert "<h2>How the verdict was reached</h2>" in page and "Who decided what" not in page
    decided = page.split('<section id="decided">', 1)[1].split("</section>", 1)[0]
    first = re.search(r"<p>(.*?)</p>", decided)
    assert first and first.group(1) == ("The result is a person&#x27;s: coherence 2, set by a person (alice); "
                                        "the agents said 4, 4, 4.")
    assert decided.index("Changed by a person afterwards:") > decided.index("mean of the referees")
    plain = render_html(example("chateval"))
    assert "<p>The agents decided the result, by the protocol&#x27;s rule (below).</p>" in plain


def test_a_tie_the_person_broke_says_so_beside_the_scorers_last_score():
    """DEBATE with --tie-breaker human: the Scorer and the Critic never agreed and a person decided 2."""
    session = example("debate")
    session.actions.append(HumanAction(kind="decide", criterion="coherence", value="2", who="cli", after_turn=4))
    session.outcome.scores["coherence"] = 2.0
    session.outcome.notes = ["coherence: decided by a person after no agreement"]
    result = section(render(session), "Result")
    assert "| coherence | 1-5 | 2, set by a person (cli); Scorer said 4 |" in result
    assert "The result is a person's: coherence 2, set by a person (cli); Scorer said 4." in render(session)


def test_a_scaleeval_decision_says_so_beside_the_speakers_verdicts_in_the_original_numbering():
    session = example("scaleeval")  # the speakers saw the texts swapped: their final "2" is text 1
    session.actions.append(HumanAction(kind="decide", criterion="helpfulness", value="2", who="ana", after_turn=6))
    session.outcome.verdict = "2"
    report = render(session, reader="ana")
    assert "**Verdict:** 2, set by you; the agents said 1, 1, 1 (1 = text 1 better" in report
    assert "<strong>Verdict:</strong> 2, set by a person (ana); the agents said 1, 1, 1" in render_html(session)


def test_mateval_tells_each_evaluators_statement_from_its_self_reflection():
    session = example("mateval")
    report = render(session)
    assert "### Evaluator 1 (evaluator): round 1, statement, REP" in report
    assert "### Evaluator 1 (evaluator): round 1, self-reflection, REP" in report
    headings = re.findall(r"^### (Evaluator \d.*)$", report, re.M)
    assert len(headings) == len(set(headings)) == 20  # 2 evaluators, 5 rounds, a statement and a reflection
    assert "Evaluator 2 (evaluator): round 3, self-reflection, DCONT</summary>" in render_html(session)
    session.options["strategy"] = "CoT"  # statements only: nothing to tell apart
    assert "statement" not in " ".join(re.findall(r"^### .*$", render(session), re.M))


def test_a_models_single_newline_is_a_line_break_in_the_markdown_report():
    session = make_session()
    session.turns = [Turn(slot=0, agent="Summarizer", role="summarizer", round=1,
                          content="Q: Is there repetition?\nA: Yes.\nLocation: \"He went.\"\n\n- one\n- two")]
    transcript = render(session).split("## Transcript", 1)[1]
    tokens = MarkdownIt("gfm-like").parse(transcript)  # the parser Textual's Markdown widget uses
    inline = [t for t in tokens if t.type == "inline"]
    breaks = [[c.type for c in t.children or [] if c.type.endswith("break")] for t in inline]
    assert ["hardbreak", "hardbreak"] in breaks, breaks
    assert "softbreak" not in str(breaks)
    html = MarkdownIt("commonmark").render(transcript)
    assert "Q: Is there repetition?<br />\nA: Yes.<br />" in html and "\\" not in html.split("</blockquote>")[0]
    assert "<li>one</li>" in html and "<li>two</li>" in html  # a list stays a list


def test_a_short_quote_is_located_and_a_passage_has_one_location():
    """"Tom swam." was too short to be taken for a passage; a repeated sentence got two locations: 1:11 in the
    error (the repeat) and 1:1 in "quoted passages"."""
    text = "Tom swam. Tom swam. He was happy."
    session = make_session(text=text)
    session.turns = [Turn(slot=0, agent="Critic", role="critic", round=1, content='"Tom swam." comes twice.')]
    [quote] = quoted_passages(session)
    assert (quote.quote, quote.start) == ("Tom swam.", 0)
    assert '| 1 | Critic, round 1 | 1:1 | "Tom swam." |' in render(session)
    session.outcome = Outcome(scores={"REP": -1},
                              errors=[ErrorSpan(type="REP", quote="Tom swam.", start=10, end=19, explanation="again")])
    assert quoted_passages(session) == []
    report = render(session)
    assert "| 1 | REP | 1:11 |" in report and "## Quoted passages" not in report


def test_html_cells_break_a_word_only_when_it_alone_overflows():
    """The HTML report broke "overrid/e" mid-word: `overflow-wrap: anywhere` let a table shrink a column."""
    assert "anywhere" not in BASE_CSS + STYLE
    page = render_html(overridden())
    assert '<div class="wide"><table><caption>Human actions</caption>' in page
