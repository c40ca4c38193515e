"""Texts in any script: sentences, sizes, quotes located and positions in Chinese, Japanese, Arabic and
Hebrew, and a Chinese story judged end to end by MATEval on the demo model and on the fake server."""

from __future__ import annotations

import json

import pytest

from debate_tui.cli import main
from debate_tui.parsing import locate
from debate_tui.report.errors_text import line_col
from debate_tui.writing import prompt_language, sentence_number, sentences, size
from tests.helpers import STORY
from tests.helpers.scripts import mateval_script
from tests.helpers.sessions import make_session, run

REPEATED = "在饭桌上，主管仔细观察这些人的一些细节和习惯。"
CHINESE = ("有一家新建的酒店在报纸上打出招聘广告，因为待遇优厚，报名者踊跃。“主管想了想，宣布要请这30人吃饭！”\n"
           f"{REPEATED}{REPEATED}最终，留下了那些知道兼顾别人的人。")
JAPANESE = "今日は晴れです。「明日は雨でしょう！」本当ですか？"
ARABIC = "ذهب الولد إلى المدرسة. هل رأيت القطة؟ نعم رأيتها."
HEBREW = "הילד הלך לבית הספר. האם ראית את החתול? כן, ראיתי."


def test_cjk_sentences_end_at_their_marks_with_closing_quotes_and_other_scripts_at_a_mark_and_a_space():
    assert sentences(CHINESE) == ["有一家新建的酒店在报纸上打出招聘广告，因为待遇优厚，报名者踊跃。",
                                  "“主管想了想，宣布要请这30人吃饭！”", REPEATED, REPEATED,
                                  "最终，留下了那些知道兼顾别人的人。"]
    assert sentences(JAPANESE) == ["今日は晴れです。", "「明日は雨でしょう！」", "本当ですか？"]
    assert sentences(ARABIC) == ["ذهب الولد إلى المدرسة.", "هل رأيت القطة؟", "نعم رأيتها."]
    assert sentences(HEBREW) == ["הילד הלך לבית הספר.", "האם ראית את החתול?", "כן, ראיתי."]
    assert sentences("Dr. Smith said e.g. this. Then left.") == ["Dr.", "Smith said e.g.", "this.", "Then left."]


def test_cjk_texts_are_sized_in_characters_and_the_others_in_words():
    assert size(CHINESE) == (len(CHINESE.replace("\n", "")), "character")
    assert size(JAPANESE) == (len(JAPANESE), "character")
    assert size(ARABIC) == (9, "word") and size(HEBREW) == (10, "word")
    assert size("A short text.") == (3, "word")
    assert prompt_language(CHINESE) == "zh"
    assert prompt_language(JAPANESE) == "en", "kana: Japanese, which has no prompts of its own"
    assert prompt_language(ARABIC) == prompt_language("A short text.") == "en"


@pytest.mark.parametrize(("quote", "text", "expected"), [
    ("主管仔细观察这些人的一些细节和习惯", CHINESE, "主管仔细观察这些人的一些细节和习惯"),
    ("在饭桌上,主管仔细观察这些人的一些细节和习惯.", CHINESE, REPEATED),  # half-width punctuation
    ("「主管想了想，宣布要请这３０人吃饭」", CHINESE, "主管想了想，宣布要请这30人吃饭"),  # corner quotes, ３０
    ("明日は雨でしょう", JAPANESE, "明日は雨でしょう"),
    ("هل رأيت القطة", ARABIC, "هل رأيت القطة"),
    ("\"האם ראית את החתול?\"", HEBREW, "האם ראית את החתול?"),
    ("هل رأيت القطة?", ARABIC, "هل رأيت القطة؟"),  # a Latin question mark for the Arabic one
    ("ذهب الولد إلى المدرسة, هل رأيت القطة", ARABIC, "ذهب الولد إلى المدرسة. هل رأيت القطة"),
    ("今日は晴れです.「明日は雨でしょう!」", JAPANESE, "今日は晴れです。「明日は雨でしょう！"),  # across sentences
    ("留下了那些知道兼顾别人的人", CHINESE, "留下了那些知道兼顾别人的人"),
])
def test_quotes_are_located_across_full_and_half_width_forms_and_inside_unspaced_text(quote, text, expected):
    span = locate(quote, text)
    assert span is not None and text[span[0]:span[1]] == expected


@pytest.mark.parametrize(("quote", "text"), [
    ("לד הלך לבית", HEBREW),  # "לד" would cut the word "הילד"
    ("لد إلى المدرسة", ARABIC),  # "لد" would cut the word "الولد"
    ("Dieser Satz steht nicht im Text", CHINESE),
])
def test_a_quote_that_would_cut_a_word_of_a_spaced_script_is_not_located(quote, text):
    assert locate(quote, text) is None


def test_positions_count_characters_by_line_in_logical_order():
    second = CHINESE.index(REPEATED, CHINESE.index(REPEATED) + 1)
    assert line_col(CHINESE, second) == (2, len(REPEATED) + 1)
    assert sentence_number(CHINESE, second) == 4
    assert line_col(HEBREW, HEBREW.index("כן")) == (1, HEBREW.index("כן") + 1)
    assert sentence_number(ARABIC, ARABIC.index("نعم")) == 3


def test_a_chinese_story_on_the_demo_model_gets_its_repeat_located_and_a_report_in_characters(tmp_path, capsys):
    story = tmp_path / "story.txt"
    story.write_text(CHINESE, encoding="utf-8")
    assert main(["run", "--demo", "--protocol", "mateval", "--text", str(story),
                 "--sessions-dir", str(tmp_path / "sessions")]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["scores"]["REP"] == -1 and summary["scores"]["total"] == -1
    report = (tmp_path / "sessions" / f"{summary['session']}.md").read_text(encoding="utf-8")
    assert f"- **Text:** {size(CHINESE)[0]} characters" in report
    assert f'| 1 | REP | 2:{len(REPEATED) + 1} | "{REPEATED}" |' in report, "the second occurrence, exactly"
    assert f'line 2, column {len(REPEATED) + 1}, sentence 4: "{REPEATED}" 这句话重复了前文' in report
    assert "问：上述故事中是否包含'重复问题'？" in report, "the Chinese summarizer's report, in the transcript"
    session = json.loads((tmp_path / "sessions" / f"{summary['session']}.json").read_text(encoding="utf-8"))
    said = {(t["agent"], t["content"].split("\n")[-1]) for t in session["turns"] if t["round"] == 1}
    # Chinese answers to the Chinese prompts
    assert said == {("Evaluator 1", f"重复问题（REP）：是。“{REPEATED}”重复了前文已经说过的内容。"),
                    ("Evaluator 2", f"重复问题（REP）：是。“{REPEATED}”重复了前文已经说过的内容。"),
                    ("Feedback", f"(demo) 反馈：评估者们一致认为“{REPEATED}”是重复，没有需要解决的分歧。"
                                 "发言有些重复：下一轮只说新的内容，并继续原样引用句子。")}


async def test_a_chinese_story_on_the_fake_server_scores_the_located_repeat_from_a_chinese_report(llm_server):
    report = (f"问：上述故事中是否包含'重复问题'？\n答：是\n“{REPEATED}”这句话重复了两次。\n单项问题得分：-1\n\n"
              + "".join(f"问：上述故事中是否包含'{name}'？\n答：否\n单项问题得分：0\n\n"
                        for name in ("逻辑问题", "连贯性问题", "用词不当", "事实性错误"))
              + "最终得分：-1 分\n计算过程：基础分0 - 重复问题1 = -1分")
    llm_server.add_rule(report, match="你是总结者")
    mateval_script(llm_server, "unused: the summarizer's prompt is Chinese")
    session = await run(make_session("mateval", llm_server, text=CHINESE))
    assert session.options["prompt_language"] == "zh", "auto: a Chinese text is discussed in Chinese"
    assert session.outcome.scores == {"REP": -1, "LINC": 0, "DCONT": 0, "ILC": 0, "FER": 0, "total": -1}
    [error] = [e for e in session.outcome.errors if e.type == "REP"]
    second = CHINESE.index(REPEATED, CHINESE.index(REPEATED) + 1)
    assert (error.start, error.end) == (second, second + len(REPEATED)), "the repeat, not the first occurrence"
    assert error.explanation == "这句话重复了两次。"


def _report_zh(repeated: str) -> str:
    """A summarizer's report in MATEval's released Chinese form (LOT, strategy SA, report 0)."""
    others = "".join(f"问：上述故事中是否包含'{name}'？\n答：否\n单项问题得分：0\n\n"
                     for name in ("逻辑问题", "连贯性问题", "用词不当", "事实性错误"))
    return (f"问：上述故事中是否包含'重复问题'？\n答：是\n\"{repeated}\"这句话重复了两次。\n单项问题得分：-1\n\n"
            f"{others}最终得分：-1 分\n计算过程：基础分0 - 重复问题1 = -1分")


def test_a_chinese_story_run_on_the_fake_server_by_the_cli_gets_a_report_in_characters(llm_server, tmp_path,
                                                                                      capsys):
    llm_server.add_rule(_report_zh(REPEATED.replace("，", ",")), match="你是总结者")  # a half-width comma
    llm_server.add_rule("反馈：评估者们意见一致。", match="反馈者")
    llm_server.add_rule(f"重复问题：是。“{REPEATED}”出现了两次。", match="重复问题")
    llm_server.add_rule("没有发现这类错误。")
    story, report = tmp_path / "story.txt", tmp_path / "report.md"
    story.write_text(CHINESE, encoding="utf-8")
    assert main(["run", "--protocol", "mateval", "--text", str(story), "--model", "openai/fake-zh",
                 "--api-base", llm_server.base_url, "--report", str(report),
                 "--sessions-dir", str(tmp_path / "sessions")]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["scores"] == {"REP": -1, "LINC": 0, "DCONT": 0, "ILC": 0, "FER": 0, "total": -1}
    assert all("你是" in r.messages[0]["content"] for r in llm_server.requests), "Chinese prompts for every agent"
    markdown = report.read_text(encoding="utf-8")
    column = len(REPEATED) + 1  # the second occurrence, on line 2, counted in characters
    assert f"- **Text:** {size(CHINESE)[0]} characters" in markdown
    assert f'| 1 | REP | 2:{column} | "{REPEATED.replace("，", ",")}" |' in markdown
    assert f"Repetition (REP), line 2, column {column}, sentence 4:" in markdown
    assert "In all, 1 error cost 1 point: Repetition (REP) -1." in markdown


@pytest.mark.parametrize(("text", "language", "chinese"), [
    (CHINESE, "auto", True), (CHINESE, "zh", True), (CHINESE, "en", False), (STORY, "auto", False), (STORY, "zh", True),
])
async def test_mateval_speaks_the_texts_language_unless_told_otherwise(llm_server, text, language, chinese):
    mateval_script(llm_server)
    llm_server.add_rule("I see no error of this type.", match="你是")
    session = await run(make_session("mateval", llm_server, text=text, strategy="SR", evaluators=2, rounds=1,
                                     prompt_language=language))
    assert session.options["prompt_language"] == ("zh" if chinese else "en")
    prompts = ["\n".join(m["content"] for m in r.messages) for r in llm_server.requests]
    summary = prompts[-1]
    if chinese:
        assert "你是总结者" in summary and "问：上述故事中是否包含'重复问题'？" in summary and "单项问题得分" in summary
        assert "第1轮（共1轮）" in prompts[0] and "反思你自己的陈述" in prompts[2], "statements, then reflection"
        assert not any("Round 1 of 1" in p for p in prompts)
    else:
        assert "Q: Does the text contain Repetition (REP) errors?" in summary and "你是" not in "".join(prompts)
    assert "[Text to evaluate]" in prompts[0], "the text between the same markers in both languages"


def test_the_prompt_language_is_an_option_of_run(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "--prompt-language {auto,en,zh}" in " ".join(capsys.readouterr().out.split())
