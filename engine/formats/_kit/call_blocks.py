"""Formats whose calls are one JSON array between markers, with reasoning in tags: a table per format, one parser.

Granite, Nemotron Nano v2, Apriel, Apertus and Command R7B differ only in
their marker strings and in the keys of their call objects::

    content  [THINK reasoning THINK_END]  content  OPEN [ws] [ {call}, ... ] [ws] CLOSE  content ...

A format subclasses :class:`CallBlockParser` and sets its markers as class
attributes; the rules are the same for all of them:

* Content streams as it is written; a possible marker at the end of a piece
  is held back until the next piece decides it, so no half-typed marker ever
  reaches content. ``dropped`` markers (a response wrapper such as Granite's
  ``<response>``) are removed; a ``dropped_spans`` span (a Command R7B
  citation's ``</co: 0:[1]>``) is removed with what is inside it, if its
  closer comes within 64 characters and no ``<`` before it (else its opener
  was text). Both apply
  inside reasoning too.
* ``think[0]`` anywhere in content opens reasoning until ``think[1]``.
  Reasoning is trimmed as llama.cpp does (leading whitespace dropped, trailing
  whitespace held until more reasoning follows, dropped at the closer);
  whitespace after the closer is layout. A stray closer in content is
  dropped the same way (the prompt opened the reasoning: ``thinking=True``
  starts the generation inside it).
* ``block_open`` starts the calls: a JSON array read by
  :class:`~callscope.engine.formats._kit.call_array.CallArrayScan` with the format's
  ``element`` reader. Until its first call opens the marker and the array are
  held back; if they stop looking like calls first, the marker is released as
  content and scanning resumes right after it (``<TOOLCALL>not json`` is
  content, verbatim). After the array, whitespace and ``block_close`` are
  consumed (no closer where one is expected: content resumes there), then
  whitespace. An array that ends early after a call (a later element that is
  not a call, a syntax error) is read to the closer and dropped when the
  format has one, else its rest is content.
* End of generation: held text that is not a marker is released; a call cut
  mid-way keeps its arguments so far; a half-typed closer is dropped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.call_array import CLOSED, NOT_A_CALL, RUNNING, CallArrayScan, ElementReader
from callscope.engine.formats._kit.gbnf import CallsLayout, Envelope, around_arguments, lit
from callscope.engine.formats._kit.json_call_machine import CallReader
from callscope.engine.formats._kit.marker_search import held_back_from
from callscope.engine.formats._kit.reasoning_text import TrimmedReasoning
from callscope.engine.formats._kit.text_machine import PieceMachine
from callscope.engine.formats._kit.writing import dumps

_CONTENT, _REASONING, _BLOCK, _AFTER_ARRAY, _SKIP_BLOCK, _LAYOUT, _SPAN = range(7)
_LONGEST_SPAN = 64  # a dropped span's inside is short (a citation's document list)


class CallBlockParser(TrimmedReasoning):
    """Incremental parser of a ``content OPEN [calls] CLOSE`` format (see the module docstring)."""

    #: ``(open, close)`` of a reasoning block; None: the format has no reasoning tags.
    think: ClassVar[tuple[str, str] | None] = None
    #: The marker before the calls' JSON array.
    block_open: ClassVar[str] = ""
    #: Other spellings of that marker that open the array the same way (Granite 3.1's plain ``<tool_call>``).
    block_open_alternates: ClassVar[tuple[str, ...]] = ()
    #: The marker after it ("" when the array ends the block).
    block_close: ClassVar[str] = ""
    #: Markers removed from content and reasoning.
    dropped: ClassVar[tuple[str, ...]] = ()
    #: ``(open, close)`` spans removed with their inside.
    dropped_spans: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: Reads one element of the array.
    element: ClassVar[ElementReader] = CallReader

    _content_state = _CONTENT
    _content_markers: ClassVar[tuple[str, ...]] = ()
    _reasoning_markers: ClassVar[tuple[str, ...]] = ()
    _span_ends: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        spans = tuple(open_ for open_, _ in cls.dropped_spans)
        think = cls.think or ("", "")
        cls._content_markers = tuple(
            m for m in (cls.block_open, *cls.block_open_alternates, *think, *cls.dropped, *spans) if m
        )
        cls._reasoning_markers = tuple(m for m in (think[1], *cls.dropped, *spans) if m)
        cls._span_ends = dict(cls.dropped_spans)

    def __init__(self, tools: list[dict[str, Any]] | None = None, *, thinking: bool = False) -> None:
        super().__init__(tools, _REASONING if thinking and self.think else _CONTENT)
        self._array: CallArrayScan | None = None
        self._opened_with = self.block_open  # the opener of the array being read
        self._span_open = ""  # the dropped span being read: its opener, closer and text so far
        self._span_end = ""
        self._span_text = ""
        self._span_from = _CONTENT  # the state a dropped span returns to

    def _finish(self) -> None:
        while True:
            if self._state == _SPAN:  # a span cut by the end: it was text
                self._run(self._release_span(self._take_pending()), 0)
            elif self._state == _BLOCK:
                scan = self._array
                scan.truncate()
                self._array = None
                if scan.status == CLOSED:
                    self._state = _LAYOUT
                    break
                self._run(*self._given_back(scan))
            else:
                break
        pending = self._take_pending()
        if self._state == _CONTENT:
            self._content(pending)
        elif self._state == _REASONING:
            self._say_reasoning(pending)
        # _AFTER_ARRAY: a half-typed closer; _SKIP_BLOCK: dropped text; _LAYOUT: whitespace

    # ------------------------------------------------------------ text

    def _in_content(self, text: str, pos: int) -> tuple[str, int]:
        found = self._content_until_first(text, pos, self._content_markers)
        if found is None:
            return text, len(text)
        at, marker = found
        after = at + len(marker)
        if marker == self.block_open or marker in self.block_open_alternates:
            self._opened_with = marker
            self._state = _BLOCK
            self._array = CallArrayScan(self, self.element)
        elif self.think and marker == self.think[0]:
            self._state = _REASONING
            self._begin_reasoning()
        elif self.think and marker == self.think[1]:
            self._state = _LAYOUT  # a stray closer: the prompt opened the reasoning
        elif marker in self._span_ends:
            self._open_span(marker, _CONTENT)
        return text, after

    def _in_reasoning(self, text: str, pos: int) -> tuple[str, int]:
        found = self._read_reasoning(text, pos, self._reasoning_markers)
        if found is None:
            return text, len(text)
        at, marker = found
        if marker == self.think[1]:
            self._end_reasoning()
            self._state = _LAYOUT
        elif marker in self._span_ends:
            self._open_span(marker, _REASONING)
        return text, at + len(marker)

    def _open_span(self, marker: str, back_to: int) -> None:
        self._span_open = marker
        self._span_end = self._span_ends[marker]
        self._span_text = ""
        self._span_from = back_to
        self._state = _SPAN

    def _in_span(self, text: str, pos: int) -> tuple[str, int]:
        """A dropped span (a citation's ``</co: 0:[1]>``): its closer within a short run, or it is text."""
        room = _LONGEST_SPAN - len(self._span_text)
        window = text[pos : pos + room + len(self._span_end)]
        end = window.find(self._span_end)
        tag = window.find("<")  # a span's inside holds no tag: a marker there means the span was text
        if end >= 0 and (tag < 0 or tag > end):
            self._state = self._span_from
            return text, pos + end + len(self._span_end)
        if tag < 0 and len(text) - pos <= room:
            self._span_text += text[pos:]
            return text, len(text)
        return self._release_span(text[pos:]), 0  # too long for a citation, or a tag inside: it was text

    def _release_span(self, rest: str) -> str:
        """The span is not one: its opener goes out as text; what followed it (returned) is read again."""
        self._state = self._span_from
        if self._state == _REASONING:
            self._say_reasoning(self._span_open)
        else:
            self._content(self._span_open)
        text, self._span_text = self._span_text + rest, ""
        return text

    # ------------------------------------------------------------ calls

    def _in_block(self, text: str, pos: int) -> tuple[str, int]:
        scan = self._array
        stop = scan.feed(text, pos)
        if scan.status == RUNNING:
            return text, len(text)
        self._array = None
        if scan.status == CLOSED:
            self._state = _AFTER_ARRAY if self.block_close else _LAYOUT
            return text, stop
        return self._given_back(scan)

    def _given_back(self, scan: CallArrayScan) -> tuple[str, int]:
        """The array stopped being calls: with no call yet its marker is released as content and its text
        read again; after a call the rest of the block is dropped to its closer, or is content."""
        if scan.status == NOT_A_CALL:
            self._content(self._opened_with)
            self._state = _CONTENT
        else:
            self._state = _SKIP_BLOCK if self.block_close else _CONTENT
        return scan.rest, 0

    def _after_array(self, text: str, pos: int) -> tuple[str, int]:
        return self._closer_or_content(text, pos, self.block_close, _LAYOUT)

    def _skip_block(self, text: str, pos: int) -> tuple[str, int]:
        end = text.find(self.block_close, pos)
        if end >= 0:
            self._state = _LAYOUT
            return text, end + len(self.block_close)
        self._pending = text[held_back_from(text, (self.block_close,), pos) :]
        return text, len(text)

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _CONTENT: _in_content,
        _REASONING: _in_reasoning,
        _BLOCK: _in_block,
        _AFTER_ARRAY: _after_array,
        _SKIP_BLOCK: _skip_block,
        _LAYOUT: PieceMachine._layout_then_content,
        _SPAN: _in_span,
    }


# ------------------------------------------------------------ the spec side


def named_call(name: str) -> str:
    """The head of a ``{"name": NAME, "arguments": ...}`` call object, up to its arguments."""
    return f'{{"name": {json.dumps(name)}, "arguments": '


def array_block(block_open: str, objects: list[Any], block_close: str = "") -> str:
    """What a writer writes for a block: the marker, the call objects as one JSON array, the closer."""
    return block_open + dumps(objects) + block_close


def array_envelope(block_open: str, block_close: str = "", head: Callable[[str], str] = named_call) -> Envelope:
    """The forced-call syntax of a block: ``OPEN[call, call]CLOSE``, each call ``head(name) ARGS }``."""
    return Envelope(
        around_arguments(head, "}"),
        layout=CallsLayout(open=lit(block_open + "["), sep=lit(", "), close=lit("]" + block_close)),
        content=True,
    )


__all__ = ["CallBlockParser", "array_block", "array_envelope", "named_call"]
