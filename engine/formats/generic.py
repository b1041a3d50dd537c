"""llama.cpp's generic JSON format: the whole generation is one JSON object.

Three shapes (llama.cpp ``common_chat_params_init_generic``; the grammar asks
for exactly one, this parser reads whichever members appear, in order)::

    {"tool_calls": [{"name": ..., "arguments": {...}, "id": ...}, ...]}   parallel calls
    {"tool_call": {"name": ..., "arguments": {...}}}                       one call
    {"response": "..."}                                                    a plain answer

Calls are read by :class:`~callscope.engine.formats._kit.json_call_machine.CallReader` (arguments
stream verbatim; an ``"id"`` counts only if written before the name and
arguments, and llama.cpp's schema puts it last). ``"response"`` is content:
a string streams decoded as it arrives; any other value streams as its raw
JSON text (llama.cpp re-serialises it; we never re-serialise). Other members
are ignored.

Bad input, decided on the text alone:

* A generation that does not start (after whitespace) with ``{`` is content,
  all of it, verbatim.
* The object is held back until something is committed: a call opens (name
  complete or arguments started) or the response value starts. If it stops
  looking like one of the shapes first (a syntax error, the object closing
  with nothing committed, a ``tool_call`` that is not a call), the whole
  generation is content, verbatim.
* After a commit, a ``tool_calls`` element that is not a call is content from
  that element on; a syntax error ends an open call with its arguments so far
  and makes the rest of the text content. Text after the object is content
  (leading whitespace skipped).
* End of generation: a held object is content; a call cut mid-way keeps its
  arguments so far; a cut response keeps what was decoded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import CallsLayout, Envelope, around_arguments, lit
from callscope.engine.formats._kit.json_call_machine import CallReader
from callscope.engine.formats._kit.json_scanner import VALUE_END, VALUE_START, JsonScanner, JsonStringDecoder
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import PieceMachine, skip_space
from callscope.engine.formats._kit.writing import dumps

_START, _OBJECT, _AFTER, _CONTENT = range(4)

TOOL_CALLS = "tool_calls"
TOOL_CALL = "tool_call"
RESPONSE = "response"


def _descend(depth: int, slot: object) -> bool:
    """Read inside the wrapper members and the call objects, skip everything else."""
    if depth == 0:
        return True
    if depth == 1:
        return slot == TOOL_CALLS or slot == TOOL_CALL
    return depth == 2 and isinstance(slot, int)  # an element of "tool_calls"


class Parser(PieceMachine):
    """Incremental generic JSON parser (see the module docstring for the rules)."""

    _content_state = _CONTENT

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        super().__init__(tools, _START)
        self._scanner = JsonScanner(report_depth=3, descend=_descend)
        self._top_key: object = None  # the member of the wrapper object being read
        self._reader: CallReader | None = None
        self._member_depth = 0  # depth of the current call object's members
        self._held: list[str] = []  # the text not yet shown to be a call / response
        self._holding = True
        self._committed = False
        self._response: JsonStringDecoder | None = None
        self._response_raw = False
        self._response_from = 0

    def _finish(self) -> None:
        if self._state == _START:
            self._content(self._take_pending())
        elif self._state == _OBJECT:
            if self._holding:
                self._run(*self._give_up_held(""))
            if self._reader is not None:
                self._reader.truncate()
            self._end_response()

    # ------------------------------------------------------------ states

    def _at_start(self, text: str, pos: int) -> tuple[str, int]:
        start = skip_space(text, pos)
        if start >= len(text):
            self._pending = text[pos:]
            return text, len(text)
        if text[start] == "{":
            self._state = _OBJECT
            return text, pos  # the scanner skips the whitespace; it is held with the object
        self._state = _CONTENT
        return text, pos

    def _in_content(self, text: str, pos: int) -> tuple[str, int]:
        self._content(text[pos:])
        return text, len(text)

    def _in_object(self, text: str, pos: int) -> tuple[str, int]:
        events, stop = self._scanner.feed(text, pos)
        hold_from = pos
        for event in events:
            kind, depth = event[0], event[1]
            reader = self._reader
            if kind == VALUE_START:
                at, first = event[2], event[3]
                if depth == 1:
                    self._top_key = event[4]
                    if self._top_key == RESPONSE:
                        self._start_response(at, first)
                        if self._holding:
                            self._commit()
                    elif self._top_key == TOOL_CALL and first == "{":
                        self._reader = CallReader(self)
                        self._member_depth = 2
                elif depth == 2 and self._top_key == TOOL_CALLS:
                    if first != "{":
                        return self._element_not_a_call(text, hold_from if self._holding else at)
                    self._reader = CallReader(self)
                    self._member_depth = 3
                    if not self._holding:
                        self._holding = True
                        self._held = []
                        hold_from = at
                elif reader is not None and depth == self._member_depth:
                    reader.value_start(event[4], at, first)
            elif kind == VALUE_END:
                at = event[2]
                if reader is not None and depth == self._member_depth:
                    reader.value_end(text, at)
                elif reader is not None and depth == self._member_depth - 1:
                    reader.close()
                    if not reader.failed:
                        self._reader = None
                elif depth == 1 and self._top_key == RESPONSE:
                    self._emit_response(text, at - 1 if self._response is not None else at)
                    self._end_response()
                elif depth == 0:
                    if not self._committed:
                        return self._give_up_held(text[hold_from:])
                    self._state = _AFTER
                    return text, at
            else:  # a syntax error
                if reader is not None and reader.opened:
                    reader.abort(text, event[2])
                    self._reader = None
                if self._holding:
                    return self._give_up_held(text[hold_from:])
                self._emit_response(text, event[2])
                self._end_response()
                self._state = _CONTENT
                return text, event[2]
            if reader is not None:
                if reader.failed:
                    return self._element_not_a_call(text, hold_from)
                if reader.opened and self._holding:
                    self._commit()
        if self._reader is not None:
            self._reader.flush(text, stop)
        self._emit_response(text, stop)
        self._response_from = 0
        if self._holding:
            self._held.append(text[hold_from:stop])
        return text, len(text)

    # ------------------------------------------------------------ helpers

    def _commit(self) -> None:
        self._holding = False
        self._held = []
        self._committed = True

    def _start_response(self, at: int, first: str) -> None:
        if first == '"':
            self._response = JsonStringDecoder()
            self._response_from = at + 1
        else:
            self._response_raw = True
            self._response_from = at

    def _emit_response(self, text: str, end: int) -> None:
        if self._response is not None:
            self._content(self._response.feed(text[self._response_from : end]))
        elif self._response_raw:
            self._content(text[self._response_from : end])

    def _end_response(self) -> None:
        if self._response is not None:
            self._content(self._response.finish())
        self._response = None
        self._response_raw = False

    def _element_not_a_call(self, text: str, hold_from: int) -> tuple[str, int]:
        return self._give_up_held(text[hold_from:])

    def _give_up_held(self, rest: str) -> tuple[str, int]:
        """The held text is not a call: before any commit that is the whole generation."""
        held = "".join(self._held) + rest
        self._held = []
        self._holding = False
        self._reader = None
        self._end_response()
        self._state = _CONTENT
        return held, 0

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _START: _at_start,
        _OBJECT: _in_object,
        _AFTER: PieceMachine._layout_then_content,
        _CONTENT: _in_content,
    }


# -------------------------------------------------------------------- spec


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """One JSON object: ``{"response": ...}``, ``{"tool_call": {...}}`` or ``{"tool_calls": [...]}``."""
    if not calls:
        return dumps({RESPONSE: content})
    if len(calls) == 1:
        return dumps({TOOL_CALL: {"name": calls[0][0], "arguments": calls[0][1]}})
    return dumps({TOOL_CALLS: [{"name": name, "arguments": args} for name, args in calls]})


SPEC = FormatSpec(
    id="generic",
    description='llama.cpp generic JSON: {"tool_calls": [...]} / {"tool_call": {...}} / {"response": "..."}',
    parser=Parser,
    markers=Markers(),  # plain JSON: nothing that could not be content
    write=write,
    envelopes=(
        Envelope(
            around_arguments(lambda name: f'{{"name": {json.dumps(name)}, "arguments": ', "}"),
            layout=CallsLayout(open=lit(f'{{"{TOOL_CALLS}": ['), sep='"," space', close=lit("]}")),
        ),
    ),
    signs=(
        TemplateSign(
            9000,
            "the template renders tools but has no known call markers (llama.cpp: Generic JSON fallback)",
            renders_tools=True,
        ),
    ),
    template="generic.jinja",
)
