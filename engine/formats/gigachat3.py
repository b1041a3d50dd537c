"""GigaChat 3 tool calls: ``<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{"name": ..., "arguments": {...}}``.

GigaChat's template gives the call a turn of its own: the assistant's content
ends with ``<|message_sep|>``, then the ``function call`` role writes one JSON
call object (llama.cpp's GigaChat V3 handler, vLLM's and SGLang's
``gigachat3`` parsers); GigaChat 3.1 writes ``<|function_call|>`` before the
object instead. The generation may end with ``</s>``::

    content [<|message_sep|> ws] function call<|role_sep|> ws {call} [ws </s> | <|message_sep|>] content
    content <|function_call|> ws {call} ...

The object is read by
:class:`~callscope.engine.formats._kit.json_call_machine.CallObjectScan` (arguments
stream verbatim). ``<|message_sep|>`` is never content; the whitespace after
it is layout. GigaChat calls one function per turn (the forced grammar asks
for one); a second header starts a second call.

Bad input, decided on the text alone (as the JSON formats do): the header and
the object are held back until the call opens; if the object stops looking
like a call first, the header is content, verbatim, and scanning resumes
after it. A syntax error after the call opened ends it with its arguments so
far; text after the object is content. End of generation: a held attempt is
content; a call cut mid-way keeps its arguments so far.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import CallsLayout, Envelope, around_arguments
from callscope.engine.formats._kit.json_call_machine import CallObjectMachine, CallObjectScan
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.writing import dumps

MESSAGE_SEP = "<|message_sep|>"
ROLE_SEP = "<|role_sep|>"
HEADER = "function call" + ROLE_SEP
FUNCTION_CALL = "<|function_call|>"
EOS = "</s>"
#: What the writer puts between content and a call: the end of the assistant turn, the call's role header.
CALL_TURN = f"{MESSAGE_SEP}\n\n{HEADER}\n"
_CONTENT_MARKERS = (MESSAGE_SEP, HEADER, FUNCTION_CALL)

_CONTENT, _CALL, _AFTER_CALL, _LAYOUT = range(4)


class Parser(CallObjectMachine):
    """Incremental GigaChat 3 parser (see the module docstring for the rules)."""

    _content_state = _CONTENT

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        super().__init__(tools, _CONTENT)
        self._opener = HEADER  # the header of the attempt being held (HEADER or FUNCTION_CALL)

    def _finish(self) -> None:
        self._settle_call()
        pending = self._take_pending()
        if self._state == _CONTENT:
            self._content(pending)
        # _AFTER_CALL: a half-typed </s>; _LAYOUT: whitespace. Both dropped.

    def _in_content(self, text: str, pos: int) -> tuple[str, int]:
        found = self._content_until_first(text, pos, _CONTENT_MARKERS)
        if found is None:
            return text, len(text)
        at, marker = found
        if marker == MESSAGE_SEP:
            self._state = _LAYOUT  # the end of the assistant turn: never content
            return text, at + len(marker)
        self._opener = marker
        self._state = _CALL
        self._call = CallObjectScan(self)
        self._held = [marker]
        return text, at + len(marker)

    def _call_done(self, call: CallObjectScan) -> None:
        self._state = _AFTER_CALL

    def _after_call(self, text: str, pos: int) -> tuple[str, int]:
        return self._closer_or_content(text, pos, EOS, _LAYOUT)

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _CONTENT: _in_content,
        _CALL: CallObjectMachine._in_call,
        _AFTER_CALL: _after_call,
        _LAYOUT: CallObjectMachine._layout_then_content,
    }


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Content, then each call in a ``function call`` turn of its own (GigaChat's template)."""
    return content + "".join(f"{CALL_TURN}{dumps({'name': name, 'arguments': args})}" for name, args in calls)


SPEC = FormatSpec(
    id="gigachat3",
    description='GigaChat 3: <|message_sep|> function call<|role_sep|> {"name": ..., "arguments": {...}}',
    parser=Parser,
    markers=Markers(leak=(MESSAGE_SEP, ROLE_SEP, FUNCTION_CALL)),
    write=write,
    envelopes=(
        Envelope(
            around_arguments(lambda name: f'{CALL_TURN}{{"name": {json.dumps(name)}, "arguments": ', "}"),
            layout=CallsLayout(),
            content=True,
            single_call=True,
        ),
    ),
    signs=(
        TemplateSign(
            869,
            "<|role_sep|> and <|message_sep|> markers (llama.cpp: GigaChat V3)",
            (ROLE_SEP, MESSAGE_SEP),
        ),
    ),
    template="gigachat3.jinja",
)
