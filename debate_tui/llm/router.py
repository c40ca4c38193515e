"""One client for every model string: the demo model offline, everything else through litellm."""

from __future__ import annotations

from debate_tui.llm import DEMO_MODEL
from debate_tui.llm.base import ChatRequest, Completion, DeltaCallback, LLMClient
from debate_tui.llm.demo import DemoClient


class ModelRouter:
    """Sends each request to the client its model needs; litellm is created only when first needed."""

    def __init__(self, demo_delay_s: float = 0.0, timeout_s: float | None = None):
        self.demo = DemoClient(delay_s=demo_delay_s)
        self.timeout_s = timeout_s
        self._litellm: LLMClient | None = None

    def _remote(self) -> LLMClient:
        if self._litellm is None:
            from debate_tui.llm.guard import GuardedClient
            from debate_tui.llm.litellm_client import LiteLLMClient

            self._litellm = GuardedClient(LiteLLMClient(timeout_s=self.timeout_s))
        return self._litellm

    async def complete(self, request: ChatRequest, on_delta: DeltaCallback | None = None) -> Completion:
        client = self.demo if request.model == DEMO_MODEL else self._remote()
        return await client.complete(request, on_delta)
