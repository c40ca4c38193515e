"""Reaching language models: one small client interface, a litellm adapter and an offline demo model."""

DEMO_MODEL = "demo/offline"
"""The offline demo model's name; here, not in `demo`, so the TUI's first frame need not import the model."""
