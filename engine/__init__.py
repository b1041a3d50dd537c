"""callscope's engine: pure Python, never imports Qt. Everything the GUI shows is computed here."""

if __name__ != "callscope.engine":  # the checkout's folder imported by its own name: a second copy of every module in it
    raise ImportError(f"import callscope.engine, not {__name__}: engine/ installs as callscope.engine (`pip install -e .`)")

__version__ = "0.1.0"
