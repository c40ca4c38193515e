"""The human review queue's screen (`debate-tui review`), self-contained: its own small App."""
