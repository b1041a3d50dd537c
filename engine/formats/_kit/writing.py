"""Helpers for a spec's writer: the text a model following a format would generate.

Writers are the inverse of the parsers; benchmarks, generated fixtures and
tests build their inputs with them, so they write the canonical spelling of a
format (the one its chat template teaches), not every variant its parser reads.
"""

from __future__ import annotations

import json
from typing import Any


def dumps(value: Any) -> str:
    """JSON as models write it: non-ASCII kept as is, ``", "`` and ``": "`` separators."""
    return json.dumps(value, ensure_ascii=False)


def think(reasoning: str) -> str:
    """A ``<think>`` block around ``reasoning`` (nothing when there is none)."""
    return f"<think>{reasoning}</think>" if reasoning else ""


def newline_between(content: str, calls: list[Any]) -> str:
    """The line break a model puts between content and the calls that follow it."""
    return "\n" if content and calls else ""


__all__ = ["dumps", "newline_between", "think"]
