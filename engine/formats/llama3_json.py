"""Llama 3.1 / 3.2 JSON tool calls: ``{"name": ..., "parameters": {...}}``, ``;``-separated.

Grammar (llama.cpp's Llama 3.x handler, plus vLLM's ``;`` for parallel calls)::

    [ws] [<|python_tag|>] [ws] {call} ( [ws] ; [ws] {call} | [ws] {call} )*  [ws] content

The generation is a tool call only if it *starts* like one: after optional
whitespace and ``<|python_tag|>``, a JSON object. Any other start makes the
whole generation content (streamed at once, verbatim). ``<|python_tag|>`` is a
control token: it is never shown as content, and one written in the middle of
content starts a call attempt there, as at the start. The call object may use
``"parameters"`` (Llama's key) or ``"arguments"``; keys before ``"name"``
(``"type": "function"``) are allowed. Arguments stream verbatim: see
:mod:`engine.formats._kit.json_call_machine`.

Bad input, decided on the text alone:

* Until the call opens (name complete or arguments started) the attempt is
  held back; if it stops looking like a call first (JSON syntax error,
  non-string name, an object without name and arguments), the held text is
  content, verbatim (minus ``<|python_tag|>``), and so is everything after.
* After a call: whitespace is skipped; ``;`` or ``{`` starts the next attempt
  (held from the ``;``); anything else is content from there on.
* A JSON syntax error after a call opened ends that call with the arguments
  so far; the text from the error on is read as what follows a call.
* End of generation: a held attempt that never opened is content; a trailing
  ``;`` with nothing after it is dropped; a call cut mid-way keeps its
  arguments so far; a half-typed ``<|python_ta`` is content.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import CallsLayout, Envelope, around_arguments
from callscope.engine.formats._kit.json_call_machine import CallObjectMachine, CallObjectScan
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import skip_space
from callscope.engine.formats._kit.writing import dumps

PYTHON_TAG = "<|python_tag|>"

_START, _CONTENT, _CALL, _AFTER_CALL, _NEXT = range(5)


class Parser(CallObjectMachine):
    """Incremental Llama 3.x JSON parser (see the module docstring for the rules)."""

    _content_state = _CONTENT

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        super().__init__(tools, _START)
        self._tag_seen = False  # <|python_tag|> already consumed for the current attempt

    def _finish(self) -> None:
        self._settle_call()
        pending = self._take_pending()
        if self._state == _START:
            self._content("".join(self._held) + pending)
            self._held = []
        elif self._state == _CONTENT:
            self._content(pending)
        # _AFTER_CALL: whitespace; _NEXT: a trailing separator. Both dropped.

    # ------------------------------------------------------------ states

    def _at_start(self, text: str, pos: int) -> tuple[str, int]:
        """Before a call attempt: whitespace, an optional <|python_tag|>, then "{" or content."""
        start = skip_space(text, pos)
        rest = text[start:]
        if not rest:
            self._pending = text[pos:]
            return text, len(text)
        if not self._tag_seen:
            if rest.startswith(PYTHON_TAG):
                self._tag_seen = True
                self._held = [text[pos:start]]
                return text, start + len(PYTHON_TAG)
            if PYTHON_TAG.startswith(rest):
                self._pending = text[pos:]
                return text, len(text)
        if rest[0] == "{":
            self._begin_call(self._held + [text[pos:start]])
            return text, start
        held, self._held = "".join(self._held), []
        self._content(held)
        self._tag_seen = False
        self._state = _CONTENT
        return text, pos

    def _in_content(self, text: str, pos: int) -> tuple[str, int]:
        at = self._content_until(text, pos, PYTHON_TAG)
        if at < 0:
            return text, len(text)
        self._state = _START
        self._tag_seen = True
        self._held = []
        return text, at + len(PYTHON_TAG)

    def _begin_call(self, held: list[str]) -> None:
        self._state = _CALL
        self._call = CallObjectScan(self)
        self._held = held

    def _call_done(self, call: CallObjectScan) -> None:
        self._state = _AFTER_CALL
        self._tag_seen = False

    def _not_a_call(self, rest: str) -> tuple[str, int]:
        """The held attempt is not a call: it is content, and so is what follows."""
        held = "".join(self._held) + rest
        self._held = []
        self._call = None
        self._tag_seen = False
        self._state = _CONTENT
        return held, 0

    def _after_call(self, text: str, pos: int) -> tuple[str, int]:
        pos = skip_space(text, pos)
        if pos >= len(text):
            return text, pos
        c = text[pos]
        if c == ";":
            self._state = _NEXT
            self._held = [";"]
            return text, pos + 1
        if c == "{":
            self._begin_call([])
            return text, pos
        self._state = _CONTENT
        return text, pos

    def _next_call(self, text: str, pos: int) -> tuple[str, int]:
        start = skip_space(text, pos)
        self._held.append(text[pos:start])
        if start >= len(text):
            return text, start
        if text[start] == "{":
            self._begin_call(self._held)
            return text, start
        held, self._held = "".join(self._held), []
        self._state = _CONTENT
        self._content(held)
        return text, start

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _START: _at_start,
        _CONTENT: _in_content,
        _CALL: CallObjectMachine._in_call,
        _AFTER_CALL: _after_call,
        _NEXT: _next_call,
    }


# -------------------------------------------------------------------- spec


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """``<|python_tag|>`` and the calls separated by ``; `` (a generation is calls or content, not both)."""
    if not calls:
        return content
    return PYTHON_TAG + "; ".join(dumps({"name": name, "parameters": args}) for name, args in calls)


SPEC = FormatSpec(
    id="llama3_json",
    description='Llama 3.1/3.2: [<|python_tag|>]{"name": ..., "parameters": {...}} calls separated by ";"',
    parser=Parser,
    markers=Markers(leak=(PYTHON_TAG,)),
    write=write,
    envelopes=(
        Envelope(
            around_arguments(lambda name: f'{{"name": {json.dumps(name)}, "parameters": ', "}"),
            layout=CallsLayout(sep='";" space'),
        ),
    ),
    signs=(
        TemplateSign(
            1000,
            "<|start_header_id|>ipython<|end_header_id|> header (llama.cpp: Llama 3.x JSON tool calls)",
            ("<|start_header_id|>ipython<|end_header_id|>",),
        ),
    ),
    template="llama3_json.jinja",
)
