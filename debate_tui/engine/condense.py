"""A long debate history is condensed, never cut: older rounds become a summary.

Before an agent is asked, its prompt is measured against its *history budget*:
the model's input window (from litellm's model table) less room for the reply,
or `--max-history-tokens` when that is smaller. When the prompt would pass it,
the older part of the history is summarized by an extra model call (role
"summarizer", recorded as a turn, so a resumed run replays it instead of asking
again) and replaced by that summary, marked as one. The brief (the text being
judged) and the latest exchange are never condensed; when they alone do not
fit, the run fails and says so. Nothing is dropped without a word.

With `--condense digest`, `condense_log` first tries the extractive digest of
engine.digest (no call); only a digest that still does not fit is summarized.

How a protocol adopts it: keep each history in the protocol (a message list or
a list of text entries), and before asking an agent store back

    self.dialogue = await condense(ctx, "Scorer", self.dialogue, round=r)
    self.log = await condense_log(ctx, "Critic", self.log, around=frame, round=r)

`around` is the rest of the prompt the log is pasted into. Both return their
input unchanged while it fits (checked by a cheap upper bound of its size, and
a tokenizer pass only when the bound is over the budget), and a condensed list
once it does not; storing it back makes the summary once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from debate_tui.domain import AgentSpec, CondenseMode, HistorySettings, Session
from debate_tui.engine.digest import digest_log
from debate_tui.inputs import InputError
from debate_tui.llm import tokens
from debate_tui.llm.base import LLMError, Message

if TYPE_CHECKING:
    from debate_tui.engine.runner import Context

CONDENSER_SYSTEM = (
    "You condense the transcript of an evaluation debate so the debaters can go on within a limited context. "
    "Keep every score or verdict given and who gave it, every objection with its reason, and every concession. "
    "Add nothing, judge nothing."
)
SUMMARY_HEADER = "[Condensed history: a summary of {count} earlier messages, made to fit the context window]"


def history_budget(ctx: Context, agent: str) -> int | None:
    """Tokens `agent`'s prompt may use: its window less room for the reply (its cap, for a configured window),
    capped by --max-history-tokens."""
    limits: list[int] = []
    window, reply = tokens.window_for(ctx.session.agent(agent))
    if window:
        limits.append(window - (reply or tokens.output_reserve(window)))
    configured = ctx.session.history.max_history_tokens
    if configured:
        limits.append(configured)
    return min(limits) if limits else None


def condense_mode(session: Session) -> CondenseMode:
    """How `condense_log` reduces older entries: a summary by a model call, or a digest without one."""
    return session.history.condense


async def condense(ctx: Context, agent: str, messages: list[Message], *, round: int, keep_tail: int = 2,
                   budget_tokens: int | None = None) -> list[Message]:
    """`messages` if they fit `agent`'s budget, else the same dialogue with its middle summarized.

    Kept as they are: the leading system messages with the first user message
    (the brief), and the last `keep_tail` messages (the exchange being answered).
    """
    budget = budget_tokens if budget_tokens is not None else history_budget(ctx, agent)
    model = ctx.session.agent(agent).model
    if budget is None or tokens.fits(model, messages, budget):
        return messages
    head_end = _brief_end(messages)
    tail_start = max(head_end, len(messages) - keep_tail)
    head, older, tail = messages[:head_end], messages[head_end:tail_start], messages[tail_start:]
    fixed = tokens.prompt_tokens(model, [*head, *tail])
    if not older or fixed >= budget:
        raise _too_long(agent, fixed, budget)
    summary = await summarize(ctx, agent, older, round=round, budget_tokens=budget,
                              target_tokens=(budget - fixed) // 2)
    condensed = [*head, {"role": "user", "content": summary}, *tail]
    _announce(ctx, agent, len(older), budget)
    size = tokens.prompt_tokens(model, condensed)
    if size > budget:
        raise _too_long(agent, size, budget, condensed=True)
    return condensed


async def condense_log(ctx: Context, agent: str, entries: list[str], *, round: int,
                       around: Sequence[Message] = (), keep_tail: int = 1,
                       budget_tokens: int | None = None) -> list[str]:
    """`entries` (a transcript pasted into one prompt) if they fit with `around`, else older entries summarized."""
    budget = budget_tokens if budget_tokens is not None else history_budget(ctx, agent)
    model = ctx.session.agent(agent).model

    def prompt(items: list[str]) -> list[Message]:
        return [*around, {"role": "user", "content": "\n\n".join(items)}]

    def size(items: list[str]) -> int:
        return tokens.prompt_tokens(model, prompt(items))

    if budget is None or tokens.fits(model, prompt(entries), budget):
        return entries
    tail_start = max(0, len(entries) - keep_tail)
    older, tail = entries[:tail_start], entries[tail_start:]
    fixed = size(tail)
    if not older or fixed >= budget:
        raise _too_long(agent, fixed, budget)
    if condense_mode(ctx.session) == "digest":
        digested = [digest_log(older), *tail]
        if size(digested) <= budget:
            _announce(ctx, agent, len(older), budget, "digested (no call; the digest is in the next prompt)")
            return digested
    older_messages: list[Message] = [{"role": "user", "content": entry} for entry in older]
    summary = await summarize(ctx, agent, older_messages, round=round, budget_tokens=budget,
                              target_tokens=(budget - fixed) // 2)
    condensed = [summary, *tail]
    _announce(ctx, agent, len(older), budget)
    if size(condensed) > budget:
        raise _too_long(agent, size(condensed), budget, condensed=True)
    return condensed


async def summarize(ctx: Context, agent: str, messages: list[Message], *, round: int, budget_tokens: int,
                    target_tokens: int) -> str:
    """One summary of `messages` in about `target_tokens`, by `agent`'s model, in as many calls as its budget needs."""
    spec = ctx.session.agent(agent)
    condenser = AgentSpec(name=f"Condenser for {agent}", role="summarizer", model=spec.model, params=spec.params,
                          context_window=spec.context_window)
    chunk_budget = budget_tokens - tokens.prompt_tokens(spec.model, _condenser_prompt("", budget_tokens))
    parts: list[str] = []
    chunks = _chunks(spec.model, messages, chunk_budget, agent)
    for chunk in chunks:
        transcript = "\n\n".join(f"{m.get('role', 'user')}: {m.get('content') or ''}" for m in chunk)
        turn = await ctx.turn(condenser, _condenser_prompt(transcript, target_tokens // len(chunks)), round=round)
        if turn.unscored or not turn.content.strip():
            raise LLMError("empty", f"{condenser.name}: no summary after a reminder, so {agent}'s history "
                                    "cannot be condensed; resume to try again")
        parts.append(turn.content.strip())
    return SUMMARY_HEADER.format(count=len(messages)) + "\n" + "\n\n".join(parts)


def preflight(session: Session) -> None:
    """Refuse, before any call, a text that cannot fit some agent's window even with no debate history."""
    from debate_tui.domain import task_block

    brief = [{"role": "user", "content": task_block(session.task)}]
    for model in session.models:
        window = tokens.context_window(model)
        configured = session.history.max_history_tokens
        limits = [(window - tokens.output_reserve(window), f"the {window:,}-token input window of {model}")] \
            if window else []
        if configured:
            limits.append((configured, f"--max-history-tokens {configured:,}"))
        if not limits:
            continue
        size = tokens.prompt_tokens(model, brief)
        budget, why = min(limits)
        if size > budget:
            raise InputError(f"the text to judge is about {size:,} tokens, over {why} (less room for the reply: "
                             f"{budget:,}); shorten it or use a model with a larger window")


def _condenser_prompt(transcript: str, target_tokens: int) -> list[Message]:
    words = max(50, target_tokens * 3 // 4)
    return [
        {"role": "system", "content": CONDENSER_SYSTEM},
        {"role": "user", "content": f"Condense this earlier part of the debate into at most {words} words.\n\n"
                                    f"[Earlier debate]\n{transcript}\n[End of earlier debate]"},
    ]


def _chunks(model: str, messages: list[Message], budget: int, agent: str) -> list[list[Message]]:
    """Consecutive groups of messages, each small enough for one condenser call."""
    chunks: list[list[Message]] = [[]]
    for message in messages:
        if chunks[-1] and tokens.prompt_tokens(model, [*chunks[-1], message]) > budget:
            chunks.append([])
        chunks[-1].append(message)
        if tokens.prompt_tokens(model, chunks[-1]) > budget:
            raise _too_long(agent, tokens.prompt_tokens(model, [message]), budget, single=True)
    return chunks


def _brief_end(messages: list[Message]) -> int:
    """Index after the leading system messages and the first user message (the brief)."""
    index = 0
    while index < len(messages) and messages[index].get("role") == "system":
        index += 1
    return min(index + 1, len(messages))


def _announce(ctx: Context, agent: str, count: int, budget: int,
              how: str = "condensed into a summary (the summary is in the transcript)") -> None:
    ctx.notice(f"{agent}'s history: {count} older messages {how} to fit {budget:,} tokens")


def _too_long(agent: str, size: int, budget: int, *, condensed: bool = False, single: bool = False) -> LLMError:
    what = ("even condensed, the prompt" if condensed else "one message of the history" if single
            else "without its history, the prompt")
    return LLMError("context_window", f"{agent}: {what} is about {size:,} tokens, over its budget of {budget:,} "
                                      "tokens (the model's window less the reply, or --max-history-tokens); nothing "
                                      "was cut. Shorten the text, or use a model with a larger window")


def history_state(max_history_tokens: int | None, condense: CondenseMode) -> HistorySettings:
    """--max-history-tokens and --condense as kept in a session (`Session.keep_history`) so a resume condenses
    alike (`run`, `tui`)."""
    if max_history_tokens is not None and max_history_tokens <= 0:
        raise InputError("--max-history-tokens: must be a positive number of tokens")
    return HistorySettings(max_history_tokens=max_history_tokens, condense=condense)
