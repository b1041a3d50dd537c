"""Every dialog of the window, one module each. Dialogs only collect values; the window (or the
live controller) validates them and reports problems through the error reporter."""
