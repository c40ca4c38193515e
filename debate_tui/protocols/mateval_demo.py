"""MATEval as the offline demo model plays it (`SPEC.demo`): evaluators that find and quote repeated sentences,
a feedback agent that remarks on their agreement, and a summarizer that writes the
Q&A report, so that an offline run shows located errors end to end.

The demo only detects repetition (TextFacts.repeated); for every other error type
its evaluators honestly find nothing. It reads the error types a round discusses
from the round's question ("- REP: ..."), and those the report must answer from
the summarizer's request, as a model would.
"""

from __future__ import annotations

import re

from debate_tui.domain import CHINESE_ERROR_TYPES, ERROR_TYPES
from debate_tui.llm.base import ChatRequest, DemoPart
from debate_tui.llm.demo_reading import TextFacts
from debate_tui.protocols.mateval_prompts import CHINESE, ENGLISH

WORDINGS = (ENGLISH, CHINESE)


def _pattern(template: str, **fields: str) -> str:
    """A prompt's template as a regular expression: its words as written, each {field} as `fields` says."""
    pieces = re.split(r"\{(\w+)\}", template)
    return "".join(fields[piece] if i % 2 else re.escape(piece) for i, piece in enumerate(pieces))


_ROUND = re.compile("|".join(_pattern(w.round.split("{question}")[0], number=r"\d+", rounds=r"\d+")
                             for w in WORDINGS))
_ASKED = re.compile(r"^- ([A-Z]+)(?:: |（)", re.M)
_ONLY = re.compile("|".join(_pattern(w.only_types.strip(), types="([A-Z, ]+)") for w in WORDINGS))
_REFLECT = tuple(max(re.split(r"\{\w+\}", w.reflect), key=len) for w in WORDINGS)
"""The words of each wording's request to reflect, as written around what the others said."""


def _types(request: ChatRequest) -> list[str]:
    """The error types asked: the last round question's, the summarizer's list, else all of them."""
    asked = "\n\n".join(m["content"] for m in request.messages if m["role"] == "user")
    if only := _ONLY.search(asked):
        listed = next(group for group in only.groups() if group is not None)
        return [t.strip() for t in listed.split(",") if t.strip()]
    question = _ROUND.split(asked)[-1] if _ROUND.search(asked) else ""
    return [t for t in _ASKED.findall(question) if t in ERROR_TYPES] or list(ERROR_TYPES)


def _reflecting(request: ChatRequest) -> bool:
    last = request.messages[-1]["content"] if request.messages else ""
    return any(words in last for words in _REFLECT)


def _chinese(request: ChatRequest) -> bool:
    """Whether MATEval's Chinese prompts ask (its system prompts open with "你是..."): then the demo answers
    in Chinese, as a model does."""
    return any(m["role"] == "system" and m["content"].startswith("你是") for m in request.messages)


def _findings(types: list[str], facts: TextFacts, chinese: bool = False) -> list[str]:
    lines = []
    for kind in types:
        if chinese:
            name = f"{CHINESE_ERROR_TYPES.get(kind, kind)}（{kind}）"
            found = facts.repeated if kind == "REP" else ()
            lines += [f"{name}：是。“{sentence}”重复了前文已经说过的内容。" for sentence in found]
            lines += [] if found else [f"{name}：没有发现这类错误。"]
        elif kind == "REP" and facts.repeated:
            lines += [f'{ERROR_TYPES[kind]} ({kind}): yes. "{sentence}" says again what the text already said.'
                      for sentence in facts.repeated]
        else:
            lines.append(f"{ERROR_TYPES.get(kind, kind)} ({kind}): I find no such error.")
    return lines


_OPENINGS = {
    (False, False): "My view on this round's question:",
    (False, True): "Having read the other evaluators, I keep my view; we agree.",
    (True, False): "我对本轮问题的看法：",
    (True, True): "看过其他评估者的陈述后，我坚持我的看法；我们意见一致。",
}
"""An evaluator's first line: (Chinese prompts, reflecting) -> its words."""


def evaluator(request: ChatRequest, facts: TextFacts) -> str:
    chinese = _chinese(request)
    opening = _OPENINGS[chinese, _reflecting(request)]
    return "\n".join([opening, *_findings(_types(request), facts, chinese)])


def feedback(request: ChatRequest, facts: TextFacts) -> str:
    types = _types(request)
    if _chinese(request):
        agreed = (f"评估者们一致认为“{facts.repeated[0]}”是重复" if "REP" in types and facts.repeated else
                  f"评估者们一致认为没有{'、'.join(CHINESE_ERROR_TYPES.get(t, t) for t in types)}")
        return f"反馈：{agreed}，没有需要解决的分歧。发言有些重复：下一轮只说新的内容，并继续原样引用句子。"
    if "REP" in types and facts.repeated:
        agreed = f'the evaluators agree that "{facts.repeated[0]}" is a repetition'
    else:
        agreed = f"the evaluators agree that there is no {', '.join(types)} error"
    return (f"Feedback: {agreed}; there is no disagreement to settle. They repeat each other a little: "
            "next round, state only what is new, and keep quoting sentences exactly.")


def chinese_summarizer(asked: set[str], facts: TextFacts) -> str:
    """The report in MATEval's released Chinese form, asked for by the Chinese prompts."""
    lines, lost = ["最终评估报告："], []  # a line of its own before the questions, where the demo's label goes
    for kind, name in CHINESE_ERROR_TYPES.items():
        if kind not in asked:
            continue
        found = facts.repeated if kind == "REP" else ()
        lines += [f"问：上述故事中是否包含'{name}'？", "答：是" if found else "答：否"]
        lines += [f"“{sentence}”这句话重复了前文，没有增加新的内容。" for sentence in found]
        lines += [f"单项问题得分：{-len(found)}", ""]
        lost += [f" - {name}{len(found)}"] if found else []
    total = -len(facts.repeated) if "REP" in asked else 0
    return "\n".join([*lines, f"最终得分：{total} 分", f"计算过程：基础分0{''.join(lost)} = {total}分"])


def summarizer(request: ChatRequest, facts: TextFacts) -> str:
    asked = set(_types(request))
    if any("问：上述故事中是否包含" in m["content"] for m in request.messages):
        return chinese_summarizer(asked, facts)
    lines = ["Final evaluation report."]
    scores = []
    for kind, name in ERROR_TYPES.items():
        if kind not in asked:
            continue
        lines.append(f"Q: Does the text contain {name} ({kind}) errors?")
        found = facts.repeated if kind == "REP" else ()
        lines.append("A: Yes" if found else "A: No")
        for sentence in found:
            lines += [f'Location: "{sentence}"',
                      "Explanation: The sentence repeats one said just before and adds nothing.", "Deduction: -1"]
        scores.append(f"{kind} {-len(found)}")
    lines.append(f"Scores: {', '.join(scores)}. Total: {-len(facts.repeated) if 'REP' in asked else 0}")
    return "\n".join(lines)


PARTS: dict[str, DemoPart] = {"evaluator": evaluator, "feedback": feedback, "summarizer": summarizer}
"""Role -> the part the demo plays."""
