"""MATEval's prompts in English and in Chinese, side by side: one wording is chosen per run.

The paper evaluates two English story sets and a Chinese one (LOT), and its
reports for LOT are written in Chinese; a Chinese story is discussed in
Chinese, and the summarizer asks for the released Chinese Q&A form
(问：上述故事中是否包含'重复问题'？ / 答：是 / the quoted sentence /
单项问题得分：-1 / 最终得分 / 计算过程). The text itself stays between the
same markers in both ("[Text to evaluate]" ... "[End of text]"). The
wordings are written from the paper's description, not copied.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from debate_tui.domain import CHINESE_ERROR_TYPES, ERROR_TYPES
from debate_tui.parsing import ERROR_REPORT_FORMAT

Language = Literal["en", "zh"]

CHINESE_DESCRIPTIONS: dict[str, str] = {
    "REP": "故事中出现重复的句子、情节或信息。",
    "LINC": "故事内容前后矛盾，或情节之间存在不合常理的逻辑冲突。",
    "DCONT": "句子之间衔接不连贯，情节跳跃，或与上下文无关。",
    "ILC": "词语使用不恰当、搭配错误，或不符合语境。",
    "FER": "内容与常识或公认的事实不符。",
}


@dataclass(frozen=True)
class Wording:
    """Every sentence MATEval's agents are shown, in one language."""

    type_names: Mapping[str, str]
    descriptions: Mapping[str, str] | None
    """Each error type's description; None: the criterion's own (the catalog's, in English)."""
    evaluator_system: str
    feedback_system: str
    summarizer_system: str
    ask_one: str
    ask_many: str
    type_line: str
    """One error type in a round's question: {code}, {name}, {description}."""
    round: str
    """{number}, {rounds}, {question}."""
    discussion_so_far: str
    feedback_heading: str
    statements_so_far: str
    state_view: str
    reflect: str
    """{others}."""
    history_entry: str
    """{number}, {name}, {content}."""
    feedback_request: str
    """{statements}."""
    discussion_heading: str
    write_report: str
    only_types: str
    """{types}."""
    report_format: str
    scoring_rule: str
    rewrite: str


def _chinese_report_format() -> str:
    questions = "\n".join(f"问：上述故事中是否包含'{name}'？" for name in CHINESE_ERROR_TYPES.values())
    return "\n".join([
        "请按以下顺序逐一回答每种错误类型的问题，格式必须完全如下：",
        "",
        questions,
        "",
        "每个问题之后写“答：是”或“答：否”。回答“是”时，逐条给出该类型的每处错误：用引号逐字引用原文中出错的"
        "句子，再说明它为什么是错误。每个问题最后写“单项问题得分：”，每处错误扣 1 分，没有错误为 0。",
        "全部问题之后写“最终得分：”（各项得分之和）和“计算过程：”。",
        "",
        "格式示例，<…> 处由你填写（不要把占位符抄进报告）：",
        "问：上述故事中是否包含'重复问题'？",
        "答：是",
        "“<从原文逐字复制的句子>”<为什么是错误>",
        "单项问题得分：-1",
        "",
        "问：上述故事中是否包含'逻辑问题'？",
        "答：否",
        "单项问题得分：0",
        "",
        "最终得分：-1 分",
        "计算过程：基础分0 - 重复问题1 = -1分",
    ])


ENGLISH = Wording(
    type_names=ERROR_TYPES,
    descriptions=None,
    evaluator_system=(
        "You are {name}, one of {count} evaluators who discuss the quality of a text together. "
        "You look for errors of given types. Whenever you claim an error, quote the erroneous sentence "
        "exactly as it appears in the text, and say why it is an error."),
    feedback_system=(
        "You are the Feedback agent of a panel of evaluators. You do not evaluate the text yourself: "
        "you judge how well the evaluators discussed it, so that the next round is more efficient "
        "and the panel reaches a consensus."),
    summarizer_system=(
        "You are the Summarizer. After the evaluators' discussion, you compile its findings into the "
        "final evaluation report. Report the errors the discussion established; quote sentences exactly."),
    ask_one="Does the text contain errors of this type?",
    ask_many="Which errors of these types does the text contain?",
    type_line="- {code}: {description}",
    round="Round {number} of {rounds}. {question}",
    discussion_so_far="The discussion so far:",
    feedback_heading="Feedback on the previous round, for every evaluator:",
    statements_so_far="Statements already made in this round:",
    state_view=("State your view on this round's question only: say whether such errors occur, "
                "quote each erroneous sentence exactly, and explain why it is an error."),
    reflect=("The other evaluators said:\n{others}\n\nReflect on your statement in the light of "
             "theirs: keep what you can defend, correct what they showed to be wrong, add what you missed. "
             "Then give your final statement on this round's question, quoting erroneous sentences exactly."),
    history_entry="[Round {number}, {name}]: {content}",
    feedback_request=(
        "The evaluators' statements in this round:\n{statements}\n\n"
        "Judge this round: point out repetition, disagreements between the evaluators, errors they may "
        "have overlooked, and claims not backed by an exact quote. Say briefly how the next round "
        "should proceed to be efficient and reach a consensus."),
    discussion_heading="The evaluators' discussion:",
    write_report="Write the final evaluation report.",
    only_types="\nAnswer only the questions about these types: {types}.",
    report_format=ERROR_REPORT_FORMAT,
    scoring_rule=(
        "Scoring: each error type starts at 0 and every error deducts one point; a sentence counts once "
        "per type, however often it was mentioned. After the answers, give the score of each type and "
        "the total, e.g. 'Scores: REP -1, LINC 0, DCONT 0, ILC 0, FER 0. Total: -1'."),
    rewrite="Your report does not follow the required form. Write it again, exactly in this form:\n\n{form}",
)

CHINESE = Wording(
    type_names=CHINESE_ERROR_TYPES,
    descriptions=CHINESE_DESCRIPTIONS,
    evaluator_system=(
        "你是{name}，是{count}位共同讨论文本质量的评估者之一。你负责查找指定类型的错误。每当你指出一处错误，"
        "都要逐字引用原文中出错的句子，并说明它为什么是错误。"),
    feedback_system=(
        "你是评估小组的反馈者。你不亲自评估文本，而是评判评估者们讨论得如何，使下一轮讨论更高效，"
        "并帮助小组达成共识。"),
    summarizer_system=(
        "你是总结者。评估者们讨论结束后，你把讨论得出的结论整理成最终的评估报告。只报告讨论中确认的错误，"
        "并逐字引用原文句子。"),
    ask_one="文本中是否包含这一类型的错误？",
    ask_many="文本中包含以下哪些类型的错误？",
    type_line="- {code}（{name}）：{description}",
    round="第{number}轮（共{rounds}轮）。{question}",
    discussion_so_far="此前的讨论：",
    feedback_heading="上一轮的反馈（供所有评估者参考）：",
    statements_so_far="本轮已有的陈述：",
    state_view="只就本轮的问题陈述你的看法：说明是否存在此类错误，逐字引用每个出错的句子，并解释为什么是错误。",
    reflect=("其他评估者的陈述：\n{others}\n\n请参照他们的陈述反思你自己的陈述：保留你能坚持的观点，改正被指出的错误，"
             "补充遗漏之处。然后就本轮问题给出你的最终陈述，逐字引用出错的句子。"),
    history_entry="[第{number}轮，{name}]：{content}",
    feedback_request=(
        "本轮评估者的陈述：\n{statements}\n\n请评判这一轮讨论：指出重复的内容、评估者之间的分歧、可能被忽略的错误，"
        "以及没有逐字引用原文支持的说法。简要说明下一轮应如何进行，才能更高效地达成共识。"),
    discussion_heading="评估者们的讨论：",
    write_report="请撰写最终的评估报告。",
    only_types="\n只回答以下类型的问题：{types}。",
    report_format=_chinese_report_format(),
    scoring_rule="评分规则：每种错误类型从 0 分开始，每处错误扣 1 分；同一句子在同一类型中只计一次，无论被提到几次。",
    rewrite="你的报告不符合要求的格式。请严格按以下格式重写：\n\n{form}",
)


WORDINGS: dict[Language, Wording] = {"en": ENGLISH, "zh": CHINESE}
