"""The Textual TUI: screens that consume the engine's events and pull RunControl's levers.

Nothing here runs a protocol: the engine does, in the app's event loop, and
the UI only renders what it emits. Model and user text is always data, never
markup (see `ui.literal`).
"""
