"""Renderers of a finished (or interrupted) session: Markdown for people, JSON for programs."""
