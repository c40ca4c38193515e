"""debate-tui: judge text with debating LLM agents (version: `debate-tui --version`, from the metadata)."""
