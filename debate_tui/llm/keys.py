"""Which environment variable holds a model's key: provider knowledge, without reading any key."""

from __future__ import annotations

import os
from dataclasses import dataclass

PROVIDER_KEYS: dict[str, str | None] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "xai": "XAI_API_KEY",
    "cohere": "COHERE_API_KEY",
    "ollama": None,
    "ollama_chat": None,
}
"""Provider prefix -> the variable litellm reads its key from (None: no key needed)."""
BARE_MODEL_PROVIDERS = (("gpt-", "openai"), ("chatgpt-", "openai"), ("o1", "openai"), ("o3", "openai"),
                        ("o4", "openai"), ("claude-", "anthropic"))
"""Model names litellm accepts without a provider prefix, by how they start."""


@dataclass(frozen=True)
class KeySource:
    """Where a model's key comes from; the key itself is never read here."""

    variable: str | None
    """The environment variable's name, or None when no key is needed or the provider is unknown."""
    origin: str
    """Why this variable: the config's api_key_env, the provider's usual one, ..."""

    @property
    def is_set(self) -> bool:
        return bool(self.variable and os.environ.get(self.variable))


def key_source(model: str, api_key_env: str | None = None, named_in: str = "the model's api_key_env") -> KeySource:
    """Which environment variable `model`'s key is read from, and why that one.

    `api_key_env`: the variable the configuration names for the model (`named_in` says where), over the provider's.
    """
    if api_key_env:
        return KeySource(api_key_env, named_in)
    provider = model.split("/", 1)[0] if "/" in model else next(
        (name for prefix, name in BARE_MODEL_PROVIDERS if model.startswith(prefix)), None)
    if provider not in PROVIDER_KEYS:
        return KeySource(None, "unknown provider: litellm decides")
    variable = PROVIDER_KEYS[provider]
    return KeySource(variable, "the provider's usual variable" if variable else "no key needed")
