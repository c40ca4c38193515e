"""Where a run is put together, once, for every front end.

`run`, `resume`, `fork`, `run --policy`, `batch` (and `probe`) and the TUI each
parse what the person asked for and present what happens; what runs in between
is assembled here: the model client (the demo model or litellm, a litellm
Router, the TUI's threaded client), the retry policy and the budget from the
limits, the response cache, and a batch's backend (this process, worker
processes, Ray tasks, a provider's batch jobs). So a limit, a client or a
backend means the same whichever front end asked for it.

Below the front ends (cli, ui), above what it assembles (meta's ladder, batch,
the session factory, the resolved configuration); nothing below imports it
(an import-linter contract in pyproject.toml), and it knows nothing of
argparse or Textual.
"""
