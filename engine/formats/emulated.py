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

from callscope.engine.formats.json_calls import CallObjectMachine, CallObjectScan
from callscope.engine.formats.text_state import skip_space

MARKER = "TOOL_CALL"

_CONTENT, _MARKER, _CALL, _AFTER_CALL = range(4)


class Parser(CallObjectMachine):
    format_id = "emulated"
    description = 'prompt-taught convention: a line TOOL_CALL {"name": ..., "arguments": {...}} per call'

    _content_state = _CONTENT
    _opener = MARKER

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        super().__init__(tools, _CONTENT)
        self._colon_seen = False

    def _finish(self) -> None:
        self._settle_call()
        pending = self._take_pending()
        if self._state == _CONTENT:
            self._content(pending)

    def _holding_attempt(self) -> bool:
        return self._state == _MARKER or super()._holding_attempt()

    # ------------------------------------------------------------ states

    def _in_content(self, text: str, pos: int) -> tuple[str, int]:
        at = self._content_until(text, pos, MARKER)
        if at < 0:
            return text, len(text)
        self._state = _MARKER
        self._held = [MARKER]
        self._colon_seen = False
        return text, at + len(MARKER)

    def _after_marker(self, text: str, pos: int) -> tuple[str, int]:
        """Between the marker and the object: whitespace and an optional colon."""
        start = skip_space(text, pos)
        if start < len(text) and text[start] == ":" and not self._colon_seen:
            self._colon_seen = True
            start = skip_space(text, start + 1)
        if start >= len(text):
            self._held.append(text[pos:])
            return text, len(text)
        if text[start] != "{":
            return self._not_a_call(text[pos:])
        self._held.append(text[pos:start])
        self._state = _CALL
        self._call = CallObjectScan(self)
        return text, start

    def _call_done(self, call: CallObjectScan) -> None:
        self._state = _CONTENT if call.scanner.failed else _AFTER_CALL

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _CONTENT: _in_content,
        _MARKER: _after_marker,
        _CALL: CallObjectMachine._in_call,
        _AFTER_CALL: CallObjectMachine._layout_then_content,
    }
