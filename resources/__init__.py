"""Shipped data: the style, the built-in chat templates and the tool presets (found via callscope.engine.core.shipped)."""

if __name__ != "callscope.resources":  # the checkout's folder imported by its own name: a second copy of every module in it
    raise ImportError(f"import callscope.resources, not {__name__}: resources/ installs as callscope.resources (`pip install -e .`)")
