"""The performance benchmarks of issue 7: `python -m benchmarks` runs them all and prints one table of ratios.

One module per target (startup, streaming, batch, tokens, sessions), each with
a `measure() -> Section`; docs/PERFORMANCE.md holds the latest table and what
was changed because of the measurements.
"""
