"""Reaching language models: one small client interface, a litellm adapter and an offline demo model."""

DEMO_MODEL = "demo/offline"
"""The offline demo model's name; here, not in `demo`, so the TUI's first frame need not import the model."""
DEFAULT_TIMEOUT_S = 120.0
"""Seconds one model call may take when the configuration says nothing (`limits.timeout`)."""
