"""Display widgets, free of protocol logic: they are told what to show."""
