"""One module per screen: setup, debate, report, sessions, and the small modal dialogs."""
