"""`python -m debate_tui`: the same as the `debate-tui` command (what `serve` runs for each browser tab)."""

import sys

from debate_tui.cli import main

sys.exit(main())
