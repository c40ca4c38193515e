"""`--structured`: the answer line asked as a small JSON object, where the provider supports a response schema.

The argument still streams as free text, as the papers' protocols have it;
then one more call, within the same turn, asks for the answer alone under a
JSON schema: {"score": N, "reason": "..."} (a pair: "score_1" and "score_2";
a verdict: "1", "2" or "0"). The JSON line is added to the turn's text and
its usage to the turn's, and its answer is the turn's. A provider without
response schemas (litellm says which), a call that fails, or JSON that does
not answer within the scale leave the free-text answer line in force.
`session.state["answer_format"]` says which was used, per model.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from debate_tui.domain import AgentSpec, Criterion, Session, Turn
from debate_tui.llm import DEMO_MODEL
from debate_tui.llm.base import ChatRequest, Completion, LLMError, Message

ANSWER_FORMAT_KEY = "answer_format"
"""Key in `session.state`: model -> "json_schema" or "free text"."""
ASKED = ("score", "pair", "verdict")
"""The kinds of turn whose answer can be asked as JSON; free text and a Critic's NO ISSUE stay as they are."""
REASON = {"type": "string", "description": "one short sentence"}


def schema_for(expect: str) -> dict[str, Any]:
    """The JSON schema of the answer (strict: every property required, no others)."""
    if expect == "verdict":
        answer: dict[str, Any] = {"verdict": {"type": "string", "enum": ["1", "2", "0"]}}
    elif expect == "pair":
        answer = {"score_1": {"type": "number"}, "score_2": {"type": "number"}}
    else:
        answer = {"score": {"type": "number"}}
    properties = {**answer, "reason": REASON}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def request_text(expect: str, criterion: Criterion | None) -> str:
    low, high = (criterion.low, criterion.high) if criterion else (1, 5)
    if expect == "verdict":
        what = '"verdict": "1" if text 1 is better, "2" if text 2 is better, "0" for a tie'
    elif expect == "pair":
        what = f'"score_1" and "score_2": your scores of text 1 and text 2, each from {low:g} to {high:g}'
    else:
        what = f'"score": your score, from {low:g} to {high:g}'
    return f'Now give your final answer alone, as a JSON object with {what}, and "reason": one short sentence.'


def read(text: str, expect: str, criterion: Criterion | None) -> dict[str, Any] | None:
    """The answer the JSON gives, checked against the scale; None when it gives none."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    low, high = (criterion.low, criterion.high) if criterion else (1, 5)
    keys = ("verdict",) if expect == "verdict" else ("score_1", "score_2") if expect == "pair" else ("score",)
    values = [data.get(key) for key in keys]
    if expect == "verdict":
        return data if values[0] in ("1", "2", "0") else None
    in_scale = all(isinstance(v, (int, float)) and not isinstance(v, bool) and low <= v <= high for v in values)
    return data if in_scale else None


def supported(model: str) -> bool:
    """Whether litellm says the model follows a JSON schema response format."""
    if model == DEMO_MODEL:
        return False
    from debate_tui.llm.litellm_loader import load_litellm

    try:
        return bool(load_litellm().supports_response_schema(model=model))
    except Exception:  # a model litellm does not know
        return False


async def answer(complete: Callable[[ChatRequest], Awaitable[Completion]], session: Session, spec: AgentSpec,
                 messages: list[Message], turn: Turn, expect: str, criterion: Criterion | None) -> None:
    """Ask `turn`'s answer as JSON where the model supports it, and take it; record which format was used."""
    formats = session.state.setdefault(ANSWER_FORMAT_KEY, {})
    if not supported(spec.model):
        formats[spec.model] = "free text"
        return
    formats[spec.model] = "json_schema"
    follow_up = [*messages, {"role": "assistant", "content": turn.content},
                 {"role": "user", "content": request_text(expect, criterion)}]
    response_format = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema_for(expect),
                                                              "strict": True}}
    try:
        completion = await complete(ChatRequest(model=spec.model, messages=follow_up,
                                                params={**spec.params, "response_format": response_format}))
    except LLMError:
        return  # the free-text answer line stands
    turn.usage.add(completion.usage)
    data = read(completion.text, expect, criterion)
    if data is None:
        return
    turn.content = f"{turn.content.rstrip()}\n{json.dumps(data, ensure_ascii=False)}"
    if expect == "verdict":
        turn.verdict = data["verdict"]
    elif expect == "pair":
        turn.score, turn.score_b = float(data["score_1"]), float(data["score_2"])
    else:
        turn.score = float(data["score"])
