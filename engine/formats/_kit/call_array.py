"""A JSON array of tool calls after a marker, read as it is written: ``[{...}, {...}]``.

Granite's ``<|tool_call|>[...]``, Nemotron's ``<TOOLCALL>[...]``, Apriel's
``<tool_calls>[...]``, Apertus's ``<|tools_prefix|>[...]``, Command R7B's
``<|START_ACTION|>[...]`` and Mistral's ``[TOOL_CALLS][...]`` all write the
calls of a turn as one JSON array. :class:`CallArrayScan` follows that array
with one :class:`~callscope.engine.formats._kit.json_scanner.JsonScanner` (array at depth
0, call objects at 1, their members at 2; anything deeper is skipped, so a
32 KB argument object costs a couple of regular-expression searches per
piece) and hands each element to an element reader:
:class:`~callscope.engine.formats._kit.json_call_machine.CallReader` for
``{"name": ..., "arguments": ...}`` objects (with the format's
:class:`~callscope.engine.formats._kit.json_call_machine.CallKeys`), or
:class:`NameKeyReader` for Apertus's ``{"NAME": {...}}``.

What the array turned out to be, decided on the text alone (``status``):

* ``RUNNING``: it wants more text (everything fed was consumed);
* ``CLOSED``: the array closed; the format's own text resumes at the stop
  :meth:`CallArrayScan.feed` returned;
* ``NOT_A_CALL``: it stopped looking like calls before the first call opened
  (not an array, an element that is not a call object, a syntax error):
  nothing was emitted and ``rest`` is all of its text from the ``[`` on, for
  the format to read again (as content, after releasing its marker);
* ``ENDED``: it stopped after a call had opened: a later element that is not
  a call (``rest`` is the text from that element on), or a syntax error
  (an open call keeps its arguments so far; ``rest`` is the text from the
  error on). ``broken`` says which.

Until its first call opens the array is held back (``held``), so every prefix
parses the same fed at once or piece by piece.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from callscope.engine.formats._kit.json_call_machine import CallReader
from callscope.engine.formats._kit.json_scanner import VALUE_END, VALUE_START, JsonScanner

if TYPE_CHECKING:
    from callscope.engine.formats._kit.parser import FormatParser

RUNNING, CLOSED, NOT_A_CALL, ENDED = range(4)


class NameKeyReader(CallReader):
    """One ``{"NAME": {...arguments...}}`` element (Apertus): the member's key is the call's name.

    The key is complete when its value starts, so the call opens named and its
    arguments stream at once (a JSON string value streams decoded, as
    ``CallReader`` does). Further members are ignored; an element without a
    member, or whose key is empty, is not a call.
    """

    __slots__ = ()

    def value_start(self, key: object, pos: int, first: str) -> None:
        if self.opened:
            self.skip_member()  # a second member is not part of the call
            return
        if not isinstance(key, str) or not key:
            self._not_a_call()
            return
        self.name = key
        self._open_arguments(pos, first)


ElementReader = Callable[["FormatParser"], CallReader]


class CallArrayScan:
    """A JSON array whose elements are tool calls (see the module docstring for the outcomes)."""

    __slots__ = ("broken", "calls", "held", "holding", "make_reader", "parser", "reader", "rest", "scanner", "status")

    def __init__(self, parser: FormatParser, make_reader: ElementReader = CallReader) -> None:
        self.parser = parser
        self.make_reader = make_reader
        self.scanner = JsonScanner(report_depth=2)
        self.reader: CallReader | None = None
        self.holding = True  # nothing shown to be a call yet (or the current element has not opened)
        self.held: list[str] = []  # the text held since the array (or the current element) began
        self.calls = 0
        self.status = RUNNING
        self.rest = ""
        self.broken = False

    def feed(self, text: str, pos: int = 0) -> int:
        """Scan ``text[pos:]``; return where the format's text resumes (``len(text)`` unless ``CLOSED``)."""
        events, stop = self.scanner.feed(text, pos)
        hold_from = pos
        for event in events:
            kind, depth = event[0], event[1]
            reader = self.reader
            if kind == VALUE_START:
                if depth == 0:
                    if event[3] != "[":
                        return self._give_up(text, hold_from)
                    continue
                if depth == 1:
                    if event[3] != "{":
                        return self._give_up(text, hold_from if self.holding else event[2])
                    reader = self.reader = self.make_reader(self.parser)
                    if not self.holding:
                        self.holding = True
                        self.held = []
                        hold_from = event[2]
                elif depth == 2 and reader is not None:
                    reader.value_start(event[4], event[2], event[3])
            elif kind == VALUE_END:
                if depth == 2 and reader is not None:
                    reader.value_end(text, event[2])
                elif depth == 1 and reader is not None:
                    reader.close()
                    if not reader.failed:
                        self.reader = None
                elif depth == 0:
                    self.status = CLOSED
                    self.held = []
                    return event[2]
            else:  # a syntax error
                if reader is not None and reader.opened:
                    reader.abort(text, event[2])
                    return self._end(text, event[2])
                if self.holding:
                    return self._give_up(text, hold_from)
                return self._end(text, event[2])
            if reader is not None:
                if reader.failed:
                    return self._give_up(text, hold_from)
                if reader.opened and self.holding:
                    self.holding = False
                    self.held = []
                    self.calls += 1
        if self.reader is not None:
            self.reader.flush(text, stop)
        if self.holding:
            self.held.append(text[hold_from:stop])
        return len(text)

    def truncate(self) -> None:
        """End of generation inside the array: an open call keeps what it has; held text is given back."""
        reader = self.reader
        if reader is not None and reader.opened:
            reader.truncate()
            self.status = CLOSED
        elif self.holding:
            self._give_up("", 0)
        else:
            self.status = CLOSED

    def _give_up(self, text: str, hold_from: int) -> int:
        """What is held is not a call: the whole array (no call yet) or the current element."""
        self.rest = "".join(self.held) + text[hold_from:]
        self.held = []
        self.reader = None
        self.status = NOT_A_CALL if self.calls == 0 else ENDED
        return len(text)

    def _end(self, text: str, at: int) -> int:
        """A syntax error at ``at`` after a call opened: the array ends, the text from the error on is given back."""
        self.rest = text[at:]
        self.broken = True
        self.reader = None
        self.status = ENDED
        return len(text)


__all__ = ["CLOSED", "ENDED", "NOT_A_CALL", "RUNNING", "CallArrayScan", "ElementReader", "NameKeyReader"]
