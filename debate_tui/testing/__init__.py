"""Test doubles that exercise real code paths: a fake OpenAI-compatible server."""
