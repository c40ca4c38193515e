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
    "azure": "AZURE_API_KEY",
    "azure_ai": "AZURE_AI_API_KEY",
    "bedrock": "AWS_ACCESS_KEY_ID",
    "vertex_ai": "GOOGLE_APPLICATION_CREDENTIALS",
}
"""Provider prefix -> the variable litellm reads its key from (None: no key needed)."""
CLOUD_CREDENTIALS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    "azure": (("AZURE_API_BASE", "AZURE_API_VERSION"), (),
              "litellm's Azure variables: the key, the resource's endpoint and the API version "
              "(api_base and api_version in config.toml do as well)"),
    "azure_ai": (("AZURE_AI_API_BASE",), (), "litellm's Azure AI variables: the key and the endpoint"),
    "bedrock": (("AWS_SECRET_ACCESS_KEY", "AWS_REGION_NAME"), ("AWS_PROFILE", "AWS_REGION_NAME"),
                "AWS credentials for Bedrock: an access key pair and a region, or AWS_PROFILE and a region "
                "(boto3 also finds an instance role)"),
    "vertex_ai": (("VERTEXAI_PROJECT", "VERTEXAI_LOCATION"), (),
                  "Google Vertex AI: a service-account file, the project and the region "
                  "(gcloud's application-default login works without the file)"),
}
"""Cloud providers whose credentials are several variables: provider -> (the others needed beside the main one,
another complete set that works instead, why)."""
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
    also: tuple[str, ...] = ()
    """Other variables the provider needs beside it (a cloud's endpoint, region or project)."""
    instead: tuple[str, ...] = ()
    """Another complete set of variables that works as well (Bedrock: AWS_PROFILE and a region)."""

    @property
    def variables(self) -> tuple[str, ...]:
        return ((self.variable,) if self.variable else ()) + self.also

    @property
    def shown(self) -> str:
        """"AZURE_API_KEY + AZURE_API_BASE + AZURE_API_VERSION", with the other way after " or "."""
        return " + ".join(self.variables) + (f" or {' + '.join(self.instead)}" if self.instead else "")

    @property
    def is_set(self) -> bool:
        def complete(names: tuple[str, ...]) -> bool:
            return bool(names) and all(os.environ.get(name) for name in names)

        return complete(self.variables) or complete(self.instead)

    def data(self) -> dict[str, object]:
        """For JSON: the variables' names, whether each is set, why these; never a value."""
        return {"variables": list(self.variables), "instead": list(self.instead), "set": self.is_set,
                "origin": self.origin, "missing": [name for name in self.variables if not os.environ.get(name)]}


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
    if provider in CLOUD_CREDENTIALS:
        also, instead, why = CLOUD_CREDENTIALS[provider]
        return KeySource(variable, why, also, instead)
    return KeySource(variable, "the provider's usual variable" if variable else "no key needed")
