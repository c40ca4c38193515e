"""`--structured`: the answer line asked as a small JSON object, where the provider can constrain it to a schema.

The argument still streams as free text, as the papers' protocols have it;
then one more call, within the same turn, asks for the answer alone under a
JSON schema, the reason first so the model writes it before it commits:
{"reason": "...", "score": N} (a pair: "score_1" and "score_2"; a verdict:
"1", "2" or "0"). A MATEval report, already its own reasoning, is asked a
yes or no per error type and the sentence at fault: {"REP": "yes",
"REP_sentence": "...", "LINC": "no", "LINC_sentence": "", ...}. The JSON line
is added to the turn's text and its usage to the turn's, and its answer is the
turn's. A call that fails, or JSON that does not answer within the scale (a
report: every asked type), leave the free-text answer in force.

When, and whom (`Generation.structured`): `True` asks on every turn that
gives a score, a verdict or a report; `"auto"` only where the free text gives none (a
reply that rambled to its cap, or never said its score), in place of the
reminder the turn would otherwise be asked again with, so a readable reply
costs nothing more. Both ask a model litellm says follows response schemas
and a server of the user's own (`api_base`: llama.cpp, vLLM, ...), which is
tried once per model, first in OpenAI's form (`json_schema`), then in
llama-cpp-python's (`json_object` with a schema); a server that refuses
both, or answers with no JSON at all, gets free text for the rest of the
session. `True` also asks a hosted model litellm does not know, in OpenAI's
form. `session.state["answer_format"]` says which was used, per model.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

from debate_tui.domain import AgentSpec, Criterion, Session, Turn
from debate_tui.llm import DEMO_MODEL
from debate_tui.llm.base import ChatRequest, Completion, LLMError, Message

Expect = Literal["text", "score", "pair", "verdict", "no_issue", "report"]
"""What a turn is asked for; a "report" is MATEval's, answering a question per error type, read by its protocol."""
ANSWER_FORMAT_KEY: Final = "answer_format"
"""Key in `session.state`: model -> "json_schema", "json_object" or "free text"."""
FREE_TEXT = "free text"
FORMATS = ("json_schema", "json_object")
"""The response formats asked, in the order a server of the user's own is tried."""
REFUSED = ("bad_request", "server")
"""How a server says it does not take a response format (llama-cpp-python: a 500 naming the field)."""
ASKED = ("score", "pair", "verdict", "report")
"""The kinds of turn whose answer can be asked as JSON; free text and a Critic's NO ISSUE stay as they are."""
REASON = {"type": "string", "description": "one short sentence"}
REASON_CHARS = 300
SENTENCE_CHARS = 200
"""A report's quoted sentence, in llama-cpp-python's form: long enough for a sentence, short enough for five to
fit the tokens a report's answers are given."""
REPORT_TOKENS_PER_TYPE = 80
"""Tokens a report's JSON may take per asked type (its yes or no, and a sentence of up to SENTENCE_CHARS), however
short the reply's cap: SmolLM2-135M's answers to five types ran past a cap of 100 and were lost."""


@dataclass(frozen=True)
class Question:
    """What a turn answers, as its JSON is asked and read: the kind of answer, the scale, a report's error types."""

    expect: Expect
    criterion: Criterion | None = None
    types: tuple[str, ...] = ()
    """A report's asked error types, in order."""

    def schema(self) -> dict[str, Any]:
        """The JSON schema of the answer (strict: every property required, no others)."""
        if self.expect == "report":
            properties: dict[str, Any] = {}
            for kind in self.types:
                properties |= {kind: {"type": "string", "enum": ["yes", "no"]}, f"{kind}_sentence": {"type": "string"}}
        elif self.expect == "verdict":
            properties = {"reason": REASON, "verdict": {"type": "string", "enum": ["1", "2", "0"]}}
        elif self.expect == "pair":
            properties = {"reason": REASON, "score_1": {"type": "number"}, "score_2": {"type": "number"}}
        else:
            properties = {"reason": REASON, "score": {"type": "number"}}
        return {"type": "object", "properties": properties, "required": list(properties),
                "additionalProperties": False}

    def request(self) -> str:
        low, high = scale_of(self.criterion)
        if self.expect == "report":
            return ("Now give your report's answers alone, as a JSON object with, for each error type in this order ("
                    f'{", ".join(self.types)}): "TYPE": "yes" if the text has an error of that type, else "no", then '
                    '"TYPE_sentence": the sentence with the error, copied exactly from the text, or "" when there '
                    "is none.")
        if self.expect == "verdict":
            what = '"verdict": "1" if text 1 is better, "2" if text 2 is better, "0" for a tie'
        elif self.expect == "pair":
            what = f'"score_1" and "score_2": your scores of text 1 and text 2, each from {low:g} to {high:g}'
        else:
            what = f'"score": your score, from {low:g} to {high:g}'
        return f'Now give your final answer alone, as a JSON object with "reason": one short sentence, then {what}.'

    def read(self, text: str) -> dict[str, Any] | None:
        """The answer the JSON gives, checked against the scale (a report: a yes or no per type); None when it
        gives none.

        A line break inside a string is let through (`strict=False`): llama-cpp-python's grammar allows one,
        and SmolLM2-135M wrote one in 4 of 24 JSON answers of a probe, which would otherwise cost the answer
        that follows it."""
        try:
            data = json.loads(text, strict=False)
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        if self.expect == "report":
            said = all(data.get(kind) in ("yes", "no") and isinstance(data.get(f"{kind}_sentence"), str)
                       for kind in self.types)
            return data if self.types and said else None
        if self.expect == "verdict":
            return data if data.get("verdict") in ("1", "2", "0") else None
        low, high = scale_of(self.criterion)
        values = [data.get(key) for key in self._score_keys()]
        in_scale = all(isinstance(v, (int, float)) and not isinstance(v, bool) and low <= v <= high for v in values)
        return data if in_scale else None

    def response_format(self, kind: str) -> dict[str, Any]:
        """The request's `response_format` in OpenAI's form or in llama-cpp-python's.

        The latter also bounds what its grammar can and OpenAI's strict schemas refuse: the length of each
        string (a small model's reason, asked first, can otherwise run to the reply's cap and leave the JSON
        without its answer), and a score on a scale of whole numbers to those numbers (SmolLM2-135M otherwise
        put 4 of 12 scores of a probe off the scale: "1000.2" for 1-3, "0.2" and "50" for 1-10)."""
        schema = self.schema()
        if kind != "json_object":
            return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}
        properties = schema["properties"]
        for key, value in properties.items():
            if key == "reason" or key.endswith("_sentence"):
                properties[key] = {**value, "maxLength": REASON_CHARS if key == "reason" else SENTENCE_CHARS}
        if choices := whole_scores(self.criterion):
            properties.update({key: {"enum": choices} for key in self._score_keys()})
        return {"type": "json_object", "schema": schema}

    def params(self, params: dict[str, Any], kind: str) -> dict[str, Any]:
        """The JSON call's parameters: the reply's, in `kind`'s response format; a report's cap raised to what its
        answers need, so a short cap meant for the argument does not cut the answers asked after it."""
        asked = {**params, "response_format": self.response_format(kind)}
        if self.expect == "report" and params.get("max_tokens"):
            asked["max_tokens"] = max(params["max_tokens"], REPORT_TOKENS_PER_TYPE * len(self.types))
        return asked

    def take(self, turn: Turn, data: dict[str, Any] | None) -> None:
        """The JSON's answer as the turn's, its line added to the turn's text (nothing when it gave none).

        A report's answers are read from that line by its protocol (MATEval's `read_report`)."""
        if data is None:
            return
        turn.content = f"{turn.content.rstrip()}\n{json.dumps(data, ensure_ascii=False)}"
        give(turn, self.expect, self.answer(data))

    def answer(self, data: dict[str, Any]) -> Any:
        """What `read` checked, in `parsing.read_answer`'s form: a verdict, a pair of scores or a score (a report's
        answers: None, its protocol reads them)."""
        if self.expect == "verdict":
            return data["verdict"]
        if self.expect == "pair":
            return float(data["score_1"]), float(data["score_2"])
        return float(data["score"]) if self.expect == "score" else None

    def _score_keys(self) -> tuple[str, ...]:
        return ("score_1", "score_2") if self.expect == "pair" else ("score",) if self.expect == "score" else ()


def give(turn: Turn, expect: Expect, answer: Any) -> None:
    """An answer in `parsing.read_answer`'s form on the turn's fields: whether a Critic accepts, a verdict, a pair
    of scores or a score (None leaves them as they are)."""
    if expect == "no_issue":
        turn.no_issue = bool(answer)
    elif expect == "verdict":
        turn.verdict = answer
    elif isinstance(answer, tuple):
        turn.score, turn.score_b = answer
    elif answer is not None:
        turn.score = float(answer)


def scale_of(criterion: Criterion | None) -> tuple[float, float]:
    """The asked scale's ends: the criterion's, or 1-5 where a turn has none."""
    return (criterion.low, criterion.high) if criterion else (1, 5)


def whole_scores(criterion: Criterion | None) -> list[int]:
    """The whole numbers of a scale whose ends are whole (at most 101 of them), else [] (any number)."""
    low, high = scale_of(criterion)
    if not (float(low).is_integer() and float(high).is_integer()) or high - low > 100:
        return []
    return list(range(int(low), int(high) + 1))


def wanted(mode: bool | str, expect: str, answered: Callable[[], bool]) -> bool:
    """Whether a turn's answer is asked as JSON: always with `True`, where the free text gave none with "auto"
    (`answered` is asked only then: reading a report for it is not free)."""
    return bool(mode) and expect in ASKED and (mode is True or not answered())


def supported(model: str) -> bool:
    """Whether litellm says the model follows a JSON schema response format."""
    if model == DEMO_MODEL:
        return False
    from debate_tui.llm.litellm_loader import load_litellm

    try:
        return bool(load_litellm().supports_response_schema(model=model))
    except Exception:  # a model litellm does not know
        return False


def formats_to_try(spec: AgentSpec, mode: bool | str) -> tuple[str, ...]:
    """The response formats to ask `spec`'s model in, in order; () for free text."""
    if spec.model == DEMO_MODEL or not mode:
        return ()
    if supported(spec.model):
        return FORMATS[:1]
    if spec.params.get("api_base"):
        return FORMATS
    return FORMATS[:1] if mode is True else ()


async def answer(complete: Callable[[ChatRequest], Awaitable[Completion]], session: Session, spec: AgentSpec,
                 messages: list[Message], turn: Turn, question: Question, mode: bool | str,
                 probing: dict[str, asyncio.Lock]) -> None:
    """Ask `turn`'s answer as JSON where the model can give it, and take it; record which format was used.

    While a model's format is unknown its turns ask one at a time (`probing`: a lock per model), so turns
    answering at once (samples, simultaneous talk) do not each try every form."""
    formats = session.state.setdefault(ANSWER_FORMAT_KEY, {})
    if spec.model in formats:
        await _ask(complete, formats, spec, messages, turn, question, mode)
        return
    async with probing.setdefault(spec.model, asyncio.Lock()):
        await _ask(complete, formats, spec, messages, turn, question, mode)


async def _ask(complete: Callable[[ChatRequest], Awaitable[Completion]], formats: dict[str, str], spec: AgentSpec,
               messages: list[Message], turn: Turn, question: Question, mode: bool | str) -> None:
    known = formats.get(spec.model)
    candidates = () if known == FREE_TEXT else (known,) if known else formats_to_try(spec, mode)
    follow_up = [*messages, {"role": "assistant", "content": turn.content},
                 {"role": "user", "content": question.request()}]
    for kind in candidates:
        params = question.params(spec.params, kind)
        try:
            completion = await complete(ChatRequest(model=spec.model, messages=follow_up, params=params))
        except LLMError as exc:
            if known or exc.kind not in REFUSED:
                return  # a passing fault: the free-text answer line stands, the format is asked again next turn
            continue  # this server does not take this format: the next one
        if turn.reply_tokens is None:
            turn.reply_tokens = turn.usage.completion_tokens
        turn.usage.add(completion.usage)
        if not known and not completion.text.lstrip().startswith("{"):
            break  # accepted but ignored: the server does not constrain its answers
        formats[spec.model] = kind
        question.take(turn, question.read(completion.text))
        return
    formats[spec.model] = FREE_TEXT
