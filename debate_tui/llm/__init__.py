"""Reaching language models: one small client interface, a litellm adapter and an offline demo model."""
