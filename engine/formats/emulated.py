"""Emulated tool calls for templates without tool support: ``TOOL_CALL {"name": ..., "arguments": {...}}``.

The convention the prompt teaches the model: one ``TOOL_CALL`` line per call,
anywhere in the text; everything else is content::

    content  ( TOOL_CALL [ws] [:] [ws] {call} [ws]  content )*

The original server only recognised a call once its JSON object had closed;
here the object is read by :class:`~callscope.engine.formats._kit.json_call_machine.CallObjectScan`
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

import json
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import Envelope, around_arguments
from callscope.engine.formats._kit.json_call_machine import CallObjectMachine, CallObjectScan
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import skip_space
from callscope.engine.formats._kit.writing import dumps

MARKER = "TOOL_CALL"

_CONTENT, _MARKER, _CALL, _AFTER_CALL = range(4)


class Parser(CallObjectMachine):
    """Incremental parser of ``TOOL_CALL`` lines (see the module docstring for the rules)."""

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


# -------------------------------------------------------------------- spec


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Content, then one ``TOOL_CALL {...}`` line per call."""
    lines = [content] if content else []
    lines += [f"{MARKER} {dumps({'name': name, 'arguments': args})}" for name, args in calls]
    return "\n".join(lines)


SPEC = FormatSpec(
    id="emulated",
    description='prompt-taught convention: a line TOOL_CALL {"name": ..., "arguments": {...}} per call',
    parser=Parser,
    markers=Markers(),  # TOOL_CALL is an ordinary word: flagging it in every server's content would be noise
    write=write,
    envelopes=(
        Envelope(
            around_arguments(lambda name: f'{MARKER} {{"name": {json.dumps(name)}, "arguments": ', "}"),
            content=True,
        ),
    ),
    signs=(
        TemplateSign(
            9900,
            "the template has no tool support; tools are taught in the prompt (callscope: emulated TOOL_CALL)",
            renders_tools=False,
        ),
    ),
    template="emulated.jinja",
)
