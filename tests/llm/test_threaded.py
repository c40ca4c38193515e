"""Model calls on a loop of their own: deltas in order and on time, errors and cancellation carried across."""

from __future__ import annotations

import asyncio
import threading

import pytest

from debate_tui.domain import Usage
from debate_tui.llm.base import ChatRequest, Completion, LLMError
from debate_tui.llm.router import ModelRouter
from debate_tui.llm.threaded import ThreadedClient

PIECES = [f"word{n} " for n in range(200)]
REQUEST = ChatRequest(model="test/model", messages=[{"role": "user", "content": "Judge this."}])


class StreamingInner:
    """Streams PIECES from whatever thread runs it, then answers or fails; notes where and how it ran."""

    def __init__(self, fail: bool = False, hold: bool = False) -> None:
        self.fail, self.hold = fail, hold
        self.threads: list[str] = []
        self.started = threading.Event()
        self.cancelled = threading.Event()

    async def complete(self, request, on_delta=None) -> Completion:
        self.threads.append(threading.current_thread().name)
        try:
            for index, piece in enumerate(PIECES):
                on_delta(piece)
                if index % 7 == 0:
                    await asyncio.sleep(0)
            self.started.set()
            if self.hold:
                await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        if self.fail:
            raise LLMError("server", "the server broke", partial_text="".join(PIECES))
        return Completion(text="".join(PIECES), usage=Usage(calls=1, completion_tokens=len(PIECES)))


async def test_the_call_runs_in_its_thread_and_every_delta_arrives_in_order_before_it_returns():
    inner = StreamingInner()
    client = ThreadedClient(inner)
    seen: list[tuple[str, str]] = []
    try:
        done = await client.complete(REQUEST, lambda text: seen.append((threading.current_thread().name, text)))
    finally:
        client.close()
    assert inner.threads == ["model-calls"]
    assert done.text == "".join(PIECES) and done.usage.completion_tokens == len(PIECES)
    assert "".join(text for _, text in seen) == done.text, "every delta, in order, before the call returned"
    assert {name for name, _ in seen} == {threading.current_thread().name}, "delivered on the caller's loop"
    assert len(seen) < len(PIECES), "deltas that arrived together were handed over together"


async def test_an_error_reaches_the_caller_with_its_partial_text():
    client = ThreadedClient(StreamingInner(fail=True))
    seen: list[str] = []
    try:
        with pytest.raises(LLMError) as raised:
            await client.complete(REQUEST, seen.append)
    finally:
        client.close()
    assert raised.value.kind == "server" and raised.value.partial_text == "".join(PIECES) == "".join(seen)


async def test_cancelling_the_caller_cancels_the_call_and_nothing_arrives_after():
    inner = StreamingInner(hold=True)
    client = ThreadedClient(inner)
    seen: list[str] = []
    call = asyncio.create_task(client.complete(REQUEST, seen.append))
    try:
        while not inner.started.is_set():
            await asyncio.sleep(0.01)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await asyncio.to_thread(inner.cancelled.wait, 5), "the call in the other thread was cancelled"
        delivered = len(seen)
        await asyncio.sleep(0.05)
        assert len(seen) == delivered
    finally:
        client.close()


async def test_close_stops_the_thread_and_a_later_call_starts_a_new_one():
    client = ThreadedClient(ModelRouter(), name="calls-under-test")
    done = await client.complete(ChatRequest(model="demo/offline", messages=REQUEST.messages))
    assert done.text
    client.close()
    assert "calls-under-test" not in {thread.name for thread in threading.enumerate()}
    again = await client.complete(ChatRequest(model="demo/offline", messages=REQUEST.messages))
    client.close()
    assert again.text
