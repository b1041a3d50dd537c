"""callscope's application layer: the CLI entry (Qt-free) and the Qt GUI (imported only by `callscope gui`)."""

if __name__ != "callscope":  # the checkout's folder imported by its own name: a second copy of every module in it
    raise ImportError(f"import callscope, not {__name__}: app/ installs as callscope (`pip install -e .`)")
