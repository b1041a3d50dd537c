"""Emulated tool calls for templates without tool support: ``TOOL_CALL {"name": ..., "arguments": {...}}``.

The convention the prompt teaches the model: one ``TOOL_CALL`` line per call,
anywhere in the text; everything else is content::

    content  ( TOOL_CALL [ws] [:] [ws] {call} [ws]  content )*

The original server only recognised a call once its JSON object had closed;
here the object is read by :class:`~engine.formats.json_calls.CallObjectScan`
as it is written, so the name goes out as soon as it is complete and the
arguments stream verbatim (see that module for the exact rules). Whitespace
after a call object is skipped. A trailing ``T``, ``TOOL_C``... is held back
from content until the next characters show it is not the marker.

Bad input, decided on the text alone:

* ``TOOL_CALL`` not followed (after whitespace and an optional ``:``) by
  ``{``, or followed by an object that stops looking like a call before the
  call opens (syntax error, non-string name, no name nor arguments), is
  content: the marker is released and scanning resumes right after it. So
  ``TOOL_CALLS are...`` or ``TOOL_CALL {"x": 1}`` stay prose.
* A syntax error after the call opened ends the call with its arguments so
  far; content resumes at the error.
* End of generation: a call that never opened is content; one cut mid-way
  keeps its arguments so far; a trailing ``TOOL_CA`` is content.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from engine.formats.base import FormatParser
from engine.formats.json_calls import CallObjectScan
from engine.formats.markers import held_back_from

MARKER = "TOOL_CALL"

_CONTENT, _MARKER, _CALL, _AFTER_CALL = range(4)


def _skip_space(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos].isspace():
        pos += 1
    return pos


class Parser(FormatParser):
    format_id = "emulated"
    description = 'prompt-taught convention: a line TOOL_CALL {"name": ..., "arguments": {...}} per call'

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        super().__init__(tools)
        self._state = _CONTENT
        self._pending = ""
        self._call: CallObjectScan | None = None
        self._held: list[str] = []  # the marker and the call so far, until the call opens
        self._colon_seen = False

    # ------------------------------------------------------------ driving

    def _feed(self, text: str) -> None:
        if self._pending:
            text = self._pending + text
            self._pending = ""
        self._run(text, 0)

    def _run(self, text: str, pos: int) -> None:
        handlers = self._handlers
        while pos < len(text):
            text, pos = handlers[self._state](self, text, pos)

    def _finish(self) -> None:
        while self._state in (_MARKER, _CALL) and (self._call is None or not self._call.opened):
            pending, self._pending = self._pending, ""
            self._run(*self._not_a_call(pending))
        if self._state == _CALL and self._call is not None:
            self._call.truncate()
            self._call = None
        pending, self._pending = self._pending, ""
        if self._state == _CONTENT:
            self._content(pending)

    # ------------------------------------------------------------ states

    def _in_content(self, text: str, pos: int) -> tuple[str, int]:
        at = text.find(MARKER, pos)
        if at < 0:
            hold = held_back_from(text, (MARKER,), pos)
            self._content(text[pos:hold])
            self._pending = text[hold:]
            return text, len(text)
        self._content(text[pos:at])
        self._state = _MARKER
        self._held = [MARKER]
        self._colon_seen = False
        return text, at + len(MARKER)

    def _after_marker(self, text: str, pos: int) -> tuple[str, int]:
        """Between the marker and the object: whitespace and an optional colon."""
        start = _skip_space(text, pos)
        if start < len(text) and text[start] == ":" and not self._colon_seen:
            self._colon_seen = True
            start = _skip_space(text, start + 1)
        if start >= len(text):
            self._held.append(text[pos:])
            return text, len(text)
        if text[start] != "{":
            return self._not_a_call(text[pos:])
        self._held.append(text[pos:start])
        self._state = _CALL
        self._call = CallObjectScan(self)
        return text, start

    def _in_call(self, text: str, pos: int) -> tuple[str, int]:
        call = self._call
        stop = call.feed(text, pos)
        if call.failed:
            return self._not_a_call(text[pos:])
        if call.done:
            self._state = _CONTENT if call.scanner.failed else _AFTER_CALL
            self._call = None
            self._held = []
            return text, stop
        if call.opened:
            self._held = []
        else:
            self._held.append(text[pos:])
        return text, len(text)

    def _not_a_call(self, rest: str) -> tuple[str, int]:
        """The marker starts no call: it is content, scanning resumes right after it."""
        held = "".join(self._held) + rest
        self._held = []
        self._call = None
        self._state = _CONTENT
        self._content(MARKER)
        return held[len(MARKER) :], 0

    def _after_call(self, text: str, pos: int) -> tuple[str, int]:
        pos = _skip_space(text, pos)
        if pos < len(text):
            self._state = _CONTENT
        return text, pos

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _CONTENT: _in_content,
        _MARKER: _after_marker,
        _CALL: _in_call,
        _AFTER_CALL: _after_call,
    }
