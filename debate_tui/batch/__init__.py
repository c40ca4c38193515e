"""Batch evaluation: many items through the same engine, concurrently, resumably, with a cache.

Each input item becomes an ordinary session (saved in the sessions directory,
resumable, reviewable); each finished item appends one line per criterion to
an append-only results file that `debate-tui meta` reads and `debate-tui
review` updates.
"""
