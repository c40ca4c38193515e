"""The litellm adapter: any provider litellm knows, imported only when first used.

`import litellm` costs seconds, so it never happens at package import; the
price table is read from litellm's bundled copy, never downloaded.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from debate_tui.domain import FinishReason, Usage
from debate_tui.endpoints import NO_KEY, NO_KEY_VALUE
from debate_tui.llm import DEFAULT_TIMEOUT_S
from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback, LLMError, TokenLogprobs
from debate_tui.llm.bounded_http import NOT_OPENAI_FORMAT, refusal_in
from debate_tui.llm.guard import plausible_usage
from debate_tui.llm.litellm_loader import load_litellm
from debate_tui.llm.tokens import ReplyMeter, prompt_tokens, reply_tokens
from debate_tui.redact import protect_env, redact

_UNPRICED: set[str] = set()
"""Models litellm's price table does not know: asked once, not on every call."""


def _cost(litellm: Any, model: str, usage: Usage) -> float:
    """The call's price: the one litellm already worked out when it did, else from its price table.

    litellm prices every call to a model it knows (`response_cost` of a
    response, `cost` in a stream's usage), which `known_cost` puts in
    `usage.cost_usd`; pricing it again cost about 0.9 ms a call. For a model
    without a price, its failing search is done once per model, not per call.
    """
    if usage.cost_usd > 0 or model in _UNPRICED:
        return usage.cost_usd
    try:
        prompt, completion = litellm.cost_per_token(
            model=model, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens
        )
    except Exception:  # unknown or local model: no price known
        _UNPRICED.add(model)
        return 0.0
    return float(prompt + completion)


def known_cost(value: Any) -> float:
    """A price litellm attached to a response or a stream's usage, or 0 when it attached none."""
    return float(value) if isinstance(value, (int, float)) and value > 0 else 0.0


def _retry_after(exc: Exception) -> float | None:
    """Seconds the server asked us to wait, if it said.

    litellm keeps the provider's headers on `litellm_response_headers`; the
    `response` it attaches is a stand-in without them. `retry-after-ms` is
    exact where `Retry-After` is rounded up to whole seconds (or an HTTP date).
    """
    for headers in (getattr(exc, "litellm_response_headers", None),
                    getattr(getattr(exc, "response", None), "headers", None)):
        if headers is not None and hasattr(headers, "get"):
            seconds = _seconds(headers.get("retry-after-ms"), 0.001) or _seconds(headers.get("retry-after"), 1.0)
            if seconds is not None:
                return seconds
    return None


def _seconds(value: Any, unit: float) -> float | None:
    if value is None:
        return None
    try:
        return max(float(value) * unit, 0.0)
    except (TypeError, ValueError):
        pass
    try:
        return max(parsedate_to_datetime(str(value)).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError, IndexError):
        return None


def _exception_class(litellm: Any, name: str) -> type | None:
    """litellm exports most exception classes at the top level, but not all (MidStreamFallbackError)."""
    found = getattr(litellm, name, None) or getattr(getattr(litellm, "exceptions", None), name, None)
    return found if isinstance(found, type) else None


_WRAPPER = re.compile(r"^\s*(?:litellm\.)?\w*(?:Error|Exception|Timeout)\s*(?::|-)\s*")
OVERFLOW = re.compile(r"(?i)context[ _](?:window|length)|exceeds? (?:the )?(?:model's )?(?:maximum )?context|"
                      r"maximum context|prompt is too long|too many tokens")
"""How servers say a prompt (and its reply) do not fit the model's window; llama.cpp does it inside a 200."""
UNREADABLE = re.compile(r"Invalid response object|Empty or invalid response from LLM endpoint")
"""How litellm says a 200's body is not a completion (a field of the wrong type, a body that is not JSON); its
message then goes on with a traceback and the body itself."""


def short_reason(message: str) -> str:
    """litellm's message as one short line: its wrappers ("litellm.APIError: APIError: OpenAIException - "),
    repeated for every layer, and the "Original exception" copy taken off."""
    text = message.split(" Original exception:", 1)[0].strip()
    text = text.splitlines()[0] if text else ""
    while (match := _WRAPPER.match(text)) and match.end() < len(text):
        text = text[match.end():]
    return text.strip()[:300]


STATUS_KINDS = {401: "auth", 403: "auth", 404: "not_found", 408: "timeout", 429: "rate_limit"}
"""HTTP statuses whose meaning does not depend on the body."""


def _kind_by_status(exc: Exception, kind: str) -> str:
    """For a request litellm calls bad (or a generic server error), the HTTP status wins where it is known:
    litellm calls a 403 or a 503 whose body says "invalid_request_error" a BadRequestError, which would
    neither say "check the key" nor be retried."""
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int) or kind not in ("bad_request", "server"):
        return kind
    if status in STATUS_KINDS:
        return STATUS_KINDS[status]
    return "server" if status >= 500 else kind


def server_address(api_base: object) -> str | None:
    """The host:port of an api_base, for an error that says where it could not get (never the path, a query or
    credentials written in the URL); None without an api_base (the provider's own address) or a readable host."""
    if not isinstance(api_base, str) or not api_base:
        return None
    parts = urlsplit(api_base if "//" in api_base else f"//{api_base}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{host}:{port}" if port else host


UNREACHED = ("connection", "timeout")
"""The kinds of error where the address tried is the first thing to check."""


def classify(exc: Exception, partial_text: str = "", api_base: object = None) -> LLMError:
    """Map litellm's exception zoo onto our few kinds, with secrets scrubbed from the one-line message; a
    connection error or a timeout names the server it tried (`api_base`'s host:port)."""
    error = _classify(exc, partial_text)
    if error.kind in UNREACHED and (address := server_address(api_base)) is not None:
        error = LLMError(error.kind, f"{error} (trying {address})", partial_text=error.partial_text,
                         retry_after=error.retry_after)
    return error


def _classify(exc: Exception, partial_text: str = "") -> LLMError:
    if (refused := refusal_in(exc)) is not None:  # a bound or a shape of ours ended the read: it says which
        return LLMError("reply", str(refused), partial_text=partial_text)
    if UNREADABLE.search(str(exc)):
        return LLMError("reply", f"{NOT_OPENAI_FORMAT} (litellm could not read the reply as a completion)",
                        partial_text=partial_text)
    litellm = load_litellm()
    reason = short_reason(redact(str(exc)))  # scrubbed whole: a key cut in two would no longer look like one
    message = f"{type(exc).__name__}: {reason}" if reason else type(exc).__name__
    checks: list[tuple[str, str]] = [
        ("ContextWindowExceededError", "context_window"),
        ("AuthenticationError", "auth"),
        ("PermissionDeniedError", "auth"),
        ("NotFoundError", "not_found"),
        ("RateLimitError", "rate_limit"),
        ("Timeout", "timeout"),
        ("MidStreamFallbackError", "stream"),
        ("APIConnectionError", "connection"),
        ("BadRequestError", "bad_request"),
        ("UnprocessableEntityError", "bad_request"),
        ("InternalServerError", "server"),
        ("ServiceUnavailableError", "server"),
        ("BadGatewayError", "server"),
        ("APIError", "server"),
    ]
    matched = (kind for name, kind in checks
               if (cls := _exception_class(litellm, name)) is not None and isinstance(exc, cls))
    fallback = "timeout" if isinstance(exc, asyncio.TimeoutError) else "stream" if partial_text else "connection"
    kind = _kind_by_status(exc, next(matched, fallback))
    if kind == "server" and "Connection error" in str(exc):
        kind = "connection"  # litellm wraps a dropped connection of a plain call as an InternalServerError
    if kind == "server" and "Missing credentials" in str(exc):
        kind = "auth"  # ... and the openai SDK's "no key at all" the same way: no retry can supply one
    if OVERFLOW.search(reason):
        kind = "context_window"  # however it came: a 400, or an error event inside a 200 stream
    return LLMError(kind, message, partial_text=partial_text, retry_after=_retry_after(exc))  # type: ignore[arg-type]


def _field(obj: Any, name: str) -> Any:
    """litellm hands back pydantic objects from most providers and plain dicts from some."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def token_logprobs(logprobs: Any) -> list[TokenLogprobs]:
    """OpenAI's `choices[0].logprobs.content` as TokenLogprobs; [] when absent.

    The generated token is added to its own alternatives when the provider left
    it out of the top ones, so every place has at least one probability.
    """
    entries = _field(logprobs, "content") if logprobs is not None else None
    tokens = []
    for entry in entries or []:
        token = _field(entry, "token")
        if not isinstance(token, str):
            continue
        top: dict[str, float] = {}
        for alternative in [*(_field(entry, "top_logprobs") or []), entry]:  # the generated token last: setdefault
            name, logprob = _field(alternative, "token"), _field(alternative, "logprob")
            if isinstance(name, str) and isinstance(logprob, (int, float)):
                top.setdefault(name, float(logprob))
        tokens.append(TokenLogprobs(token=token, top=top))
    return tokens


def key_from_env(name: str) -> str:
    """The key held by the variable a config's `api_key_env` names, read at call time and never kept."""
    protect_env(name)
    value = os.environ.get(name)
    if not value:
        raise LLMError("auth", f"environment variable {name} named in the config is not set")
    return value


class LiteLLMClient:
    """Calls through litellm; retries are the runner's job, so litellm's own are off.

    Without `timeout_s` (the configuration's `limits.timeout`, which the front ends pass), a call may take
    DEFAULT_TIMEOUT_S.
    """

    def __init__(self, timeout_s: float | None = None):
        self.timeout_s = timeout_s or DEFAULT_TIMEOUT_S
        self.overran: set[tuple[str, str]] = set()
        """(model, api_base) whose plain call ran into the deadline: its calls stream from then on."""

    def _kwargs(self, request: ChatRequest) -> dict[str, Any]:
        params = dict(request.params)
        key_env = params.pop("api_key_env", None)
        if params.pop(NO_KEY, False):  # an endpoint a file chose (endpoints.py): none of the person's keys
            params["api_key"] = NO_KEY_VALUE
        elif key_env:
            params["api_key"] = key_from_env(key_env)
        return {"timeout": self.timeout_s, **params, "num_retries": 0}

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        """One call: plain unless a reply is watched (`on_delta`), or the server has run past a deadline.

        A plain call is a third of a streamed one's CPU (9 against 26 ms measured), so a batch calls plainly.
        At its deadline the connection is closed either way, but a server may go on generating a plain reply
        it can no longer send (llama-cpp-python's does, to the reply's cap: the next call then waited 115 s
        for its first token, measured); a closed stream it stops at once (1.8 s). So after the first plain
        call of a model and server that overran, their calls stream."""
        kwargs = self._kwargs(request)
        litellm = load_litellm()
        server = (request.model, str(request.params.get("api_base") or ""))
        if on_delta is None and server in self.overran:
            on_delta = _unread
        if on_delta is None:
            try:
                async with asyncio.timeout(self.timeout_s):  # httpx's timeout is per read, this one per call
                    response = await litellm.acompletion(model=request.model, messages=request.messages, **kwargs)
            except Exception as exc:
                error = classify(exc, api_base=request.params.get("api_base"))
                if error.kind == "timeout":
                    self.overran.add(server)
                raise error from None
            choice = first_choice(response)
            text = choice.message.content or ""
            tokens = token_logprobs(getattr(choice, "logprobs", None))
            raw = getattr(response, "usage", None)
            usage = Usage(
                calls=1,
                prompt_tokens=getattr(raw, "prompt_tokens", 0) or 0,
                completion_tokens=getattr(raw, "completion_tokens", 0) or 0,
                cost_usd=known_cost((getattr(response, "_hidden_params", None) or {}).get("response_cost")),
            )
            finish = finish_reason(getattr(choice, "finish_reason", None))
        else:
            text, usage, tokens, finish = await self._stream(litellm, request, kwargs, on_delta)
        usage = plausible_usage(usage, request, text)
        usage.cost_usd = _cost(litellm, request.model, usage)
        return Completion(text=text, usage=usage, top_logprobs=tokens or None, finish_reason=finish)

    async def _stream(
        self, litellm: Any, request: ChatRequest, kwargs: dict[str, Any], on_delta: DeltaCallback
    ) -> tuple[str, Usage, list[TokenLogprobs], FinishReason]:
        """Streamed text, usage, the log-probabilities each chunk carries, and how the reply ended.

        The whole call, streaming included, must end by the deadline (`timeout_s`), and the reply
        at its cap (`max_tokens`, counted by `ReplyMeter`) even when the server ignores it: either
        way the stream is closed, which tells the server to stop generating, and the text so far
        is the reply. A stream that ends without a finish reason is "cut".
        """
        parts: list[str] = []
        tokens: list[TokenLogprobs] = []
        usage = Usage(calls=1)
        meter = ReplyMeter(request.model, request.params.get("max_tokens"))
        provider_finish: Any = None
        ended: FinishReason | None = None
        stream = None
        try:
            async with asyncio.timeout(self.timeout_s):
                stream = await litellm.acompletion(
                    model=request.model, messages=request.messages, stream=True,
                    stream_options={"include_usage": True}, **kwargs,
                )
                async for chunk in stream:
                    if chunk.choices:
                        choice = chunk.choices[0]
                        delta = choice.delta.content
                        provider_finish = choice.finish_reason or provider_finish
                        tokens += token_logprobs(getattr(choice, "logprobs", None))
                        if delta is not None and not isinstance(delta, str):  # litellm passes a chunk's fields on
                            raise LLMError("reply", f"{NOT_OPENAI_FORMAT} (a streamed chunk whose content is not text)")
                        if delta:
                            parts.append(delta)
                            on_delta(delta)
                            if meter.add(parts):
                                ended = "length"
                                break
                    raw = getattr(chunk, "usage", None)
                    if raw:
                        usage.prompt_tokens = _count(raw.prompt_tokens)
                        usage.completion_tokens = _count(raw.completion_tokens)
                        usage.cost_usd = known_cost(getattr(raw, "cost", None))
        except TimeoutError as exc:
            if not parts:
                raise classify(exc, api_base=request.params.get("api_base")) from None
            ended = "deadline"
        except LLMError:
            raise
        except Exception as exc:
            if not (parts and ENDED_WITHOUT_FINISH in str(exc)):
                raise classify(exc, partial_text="".join(parts), api_base=request.params.get("api_base")) from None
            ended = "cut"
        finally:
            if stream is not None and hasattr(stream, "aclose"):
                await stream.aclose()  # the server sees the connection close and stops generating
        text = "".join(parts)
        if not usage.completion_tokens and text:  # closed early: no usage chunk came
            usage.completion_tokens = reply_tokens(request.model, text)
            if ended == "length":  # cut at the cap: the last delta may have carried the count a token or two past it
                usage.completion_tokens = min(usage.completion_tokens, meter.cap or usage.completion_tokens)
            usage.prompt_tokens = usage.prompt_tokens or prompt_tokens(request.model, request.messages)
        return text, usage, tokens, ended or finish_reason(provider_finish)


def _count(value: Any) -> int:
    """A token count as a stream's usage gave it; anything but a whole number (a string, a list) counts 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def first_choice(response: Any) -> Any:
    """A plain reply's first choice; a reply with none (`choices: []`) is not OpenAI's format."""
    choices = getattr(response, "choices", None)
    if not choices:
        raise LLMError("reply", f"{NOT_OPENAI_FORMAT} (a reply with no choices)")
    return choices[0]


def _unread(delta: str) -> None:
    """The deltas of a call streamed only so that closing it stops the server."""


ENDED_WITHOUT_FINISH = "Stream ended before a finish_reason was received"
"""How litellm says a stream stopped with neither a finish reason nor an end marker."""


def finish_reason(provider: Any) -> FinishReason:
    """A provider's finish reason in our terms: none at all means the reply was cut off."""
    if provider is None:
        return "cut"
    if provider in ("length", "max_tokens"):
        return "length"
    if provider == "content_filter":
        return "cut"
    return "stop"
