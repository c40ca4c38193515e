"""What tests share, imported by name (`from tests.helpers import STORY`); test modules never import each other.

The constants are here; the helpers by area are in this package's modules (ui, batch, sessions, cli).
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
FAKE_KEY = "sk-test-not-a-real-key-0123456789"

STORY = (
    "Tom wanted to learn to swim. He went to the pool every morning. "
    "He went to the pool every morning. At first he was afraid of the water. "
    "After a month he could swim across the pool without stopping."
)
