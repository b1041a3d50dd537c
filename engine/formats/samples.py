"""Rendering tool calls in each wire format: the inverse of the parsers.

Used to build benchmark inputs, generated fixtures and tests: given content and
calls, produce the text a model following that format would generate. Each
format's writer is part of its spec (:attr:`FormatSpec.write`).
"""

from __future__ import annotations

from callscope.engine.formats import get_spec
from callscope.engine.formats._kit.spec import Call


def render(format_id: str, calls: list[Call], content: str = "", reasoning: str = "") -> str:
    """The generation of a model that writes ``reasoning``, ``content`` and then ``calls`` in ``format_id``."""
    return get_spec(format_id).write(calls, content, reasoning)
