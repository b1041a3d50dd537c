"""Shipped data: the style, the built-in chat templates and the tool presets (found via callscope.engine.core.shipped)."""
