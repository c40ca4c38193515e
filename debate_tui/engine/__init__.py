"""Runs protocols: turns every `await turn(...)` into events, saves, and obeys the human."""
