"""callscope's engine: pure Python, never imports Qt. Everything the GUI shows is computed here."""

__version__ = "0.1.0"
