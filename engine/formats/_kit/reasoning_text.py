"""Reasoning between tags, read piece by piece and trimmed as llama.cpp trims it.

For :class:`~callscope.engine.formats._kit.text_machine.PieceMachine` formats whose
reasoning has its own tags (Granite's ``<think>``, Apertus's
``<|inner_prefix|>``, Command R7B's ``<|START_THINKING|>``, Solar Open's
``<|think|>``): leading whitespace of the block is dropped, trailing
whitespace is held until more reasoning follows and is dropped at the closer
(llama.cpp ``string_strip``s reasoning), and no half-typed marker ever reaches
the reasoning text.
"""

from __future__ import annotations

from typing import Any

from callscope.engine.formats._kit.marker_search import find_first, held_back_from
from callscope.engine.formats._kit.text_machine import PieceMachine, skip_space


class TrimmedReasoning(PieceMachine):
    """A piece-style parser with a trimmed reasoning block (see the module docstring)."""

    def __init__(self, tools: list[dict[str, Any]] | None, state: int) -> None:
        super().__init__(tools, state)
        self._begun = False  # the block's leading whitespace is behind us
        self._ws = ""  # trailing reasoning whitespace, out only if more reasoning follows

    def _begin_reasoning(self) -> None:
        """A reasoning block opens: its leading whitespace is layout."""
        self._begun = False

    def _end_reasoning(self) -> None:
        """The block's closer was read: its held trailing whitespace is layout."""
        self._ws = ""

    def _read_reasoning(self, text: str, pos: int, markers: tuple[str, ...]) -> tuple[int, str] | None:
        """Reasoning from ``pos`` to the first of ``markers``: ``(index, marker)`` once one is found (the
        text before it said), else None: said up to what might begin a marker, which is pending."""
        if not self._begun:
            pos = skip_space(text, pos)
            if pos >= len(text):
                return None
            self._begun = True
        found = find_first(text, markers, pos)
        if found is None:
            hold = held_back_from(text, markers, pos)
            self._say_reasoning(text[pos:hold])
            self._pending = text[hold:]
            return None
        self._say_reasoning(text[pos : found[0]])
        return found

    def _say_reasoning(self, text: str) -> None:
        body = text.rstrip()
        if body:
            self._reasoning(self._ws + body)
            self._ws = text[len(body) :]
        else:
            self._ws += text


__all__ = ["TrimmedReasoning"]
