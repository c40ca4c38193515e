"""The exceptions every refusal of input derives from: one line that the person reads.

They sit below both readers (`readfile`, which bounds every file, and `inputs`, built on it for the
texts a person hands us), so neither imports the other's way up.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad input: the message is the one-line reason shown to the person."""


class ConfigError(InputError):
    """A configuration that cannot be used; each line names a setting and where its value came from.

    Defined here, not in `config` (which builds pydantic models), so the command line can catch it
    without importing pydantic before the TUI's first frame.
    """
