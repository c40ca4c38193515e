"""Meta-evaluation: how well a protocol agrees with human judgments.

`datasets` turns public data sets into batch input lines with the human
scores attached; `evaluate` correlates batch results with them, using
`stats`; `reference_parsers` holds two published score-parsing rules, kept
only to reproduce published figures. The trust ladder lives beside its
statistics: `trust` calibrates thresholds and `audit` checks them; `ladder`
runs a policy's tiers over a batch, `climb` one text up the tiers, and
`review` is the queue where a person answers what no tier trusted. Nothing here is imported eagerly: the
statistics need scipy, which must stay off the TUI's start-up path.
"""
