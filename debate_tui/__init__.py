"""debate-tui: judge text with debating LLM agents."""
__version__ = "0.1.0"
