"""Functionary v3.1 (Llama 3.1 based) tool calls: ``<function=NAME>{json}</function>``, and raw Python after ``<|python_tag|>``.

Wire format (content around the calls, any number of them)::

    CONTENT<function=get_weather>{"city": "Paris"}</function><function=NAME2>{...}</function>
    <|python_tag|>print("raw code, to the end of the generation")

As llama.cpp's Functionary v3.1 handler reads it (``common_chat_parse_functionary_v3_1_llama_3_1``):

* ``<function=NAME>`` opens a call named NAME (``[A-Za-z0-9_.-]+``, at most :data:`NAME_LIMIT`
  characters; anything else and the marker is content, scanning resumes right after it). The
  JSON value after ``>`` streams verbatim as the arguments, read by the resumable JSON scanner
  (:class:`~callscope.engine.formats._kit.json_call_machine.ArgumentsValueScan`), so ``</function>`` inside
  a JSON string is argument text. ``</function>`` must follow the value (after whitespace);
  otherwise the call ends with the value and what follows is content. A JSON syntax error ends
  the call with the arguments so far and content resumes at the error.
* ``<|python_tag|>``: Llama 3.1's code interpreter call. Everything after it is Python code: a
  call named ``python`` whose arguments are ``{"code": CODE}``, streamed as the code is written
  (its closing ``"}`` at the end of the generation), as llama.cpp wraps it.
* Whitespace after ``</function>`` is layout. Text between calls is content.
* Terminal parse: a call cut mid-arguments keeps its arguments so far; a trailing half-typed
  marker is content; an opener whose name never completed is content.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import CallsLayout, Envelope, around_arguments
from callscope.engine.formats._kit.json_call_machine import ArgumentsValueScan
from callscope.engine.formats._kit.marker_search import find_first, held_back_from
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import PieceMachine, skip_space
from callscope.engine.formats._kit.writing import dumps
from callscope.engine.formats._kit.xml_values import escape

FUNCTION = "<function="
FUNCTION_END = "</function>"
PYTHON_TAG = "<|python_tag|>"
PYTHON = "python"

#: Longest function name accepted; a longer one is malformed (bounds the hold-back).
NAME_LIMIT = 256

_OPENERS = (FUNCTION, PYTHON_TAG)
_NAME = re.compile(r"[A-Za-z0-9_.\-]*")

_CONTENT, _OPENER, _ARGS, _AFTER_CALL, _AFTER_CLOSE, _CODE = range(6)


class Parser(PieceMachine):
    """Incremental Functionary v3.1 parser (see the module docstring for the rules)."""

    _content_state = _CONTENT

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        super().__init__(tools, _CONTENT)
        self._opener = ""  # <function=NAME so far, until its > shows it is a call
        self._args: ArgumentsValueScan | None = None
        self._code_call = -1  # the python call, once <|python_tag|> was seen

    def _finish(self) -> None:
        if self._state == _OPENER:  # the name never completed: the marker is content
            self._content(FUNCTION + self._opener)
        elif self._state == _ARGS and self._args is not None:
            self._args.truncate()
        pending = self._take_pending()
        if self._state in (_CONTENT, _OPENER):
            self._content(pending)
        if self._code_call >= 0:
            self._arguments(self._code_call, '"}')
        # _AFTER_CALL: a half-typed </function>, dropped.

    # ------------------------------------------------------------ states

    def _in_content(self, text: str, pos: int) -> tuple[str, int]:
        hit = find_first(text, _OPENERS, pos)
        if hit is None:
            hold = held_back_from(text, _OPENERS, pos)
            self._content(text[pos:hold])
            self._pending = text[hold:]
            return text, len(text)
        at, marker = hit
        self._content(text[pos:at])
        if marker == PYTHON_TAG:
            self._code_call = self._open_call()
            self._name_call(self._code_call, PYTHON)
            self._arguments(self._code_call, '{"code":"')
            self._state = _CODE
        else:
            self._opener = ""
            self._state = _OPENER
        return text, at + len(marker)

    def _in_opener(self, text: str, pos: int) -> tuple[str, int]:
        block = self._opener + text[pos:]
        end = _NAME.match(block).end()
        if end == len(block) and end <= NAME_LIMIT:  # the name may go on
            self._opener = block
            return text, len(text)
        self._opener = ""
        if end == 0 or end > NAME_LIMIT or block[end] != ">":  # not a call: the marker is content
            self._content(FUNCTION)
            self._state = _CONTENT
            return block, 0
        index = self._open_call()
        self._name_call(index, block[:end])
        self._args = ArgumentsValueScan(self, index)
        self._state = _ARGS
        return block, end + 1

    def _in_args(self, text: str, pos: int) -> tuple[str, int]:
        args = self._args
        stop = args.feed(text, pos)
        if not args.done:
            return text, len(text)
        self._args = None
        self._state = _CONTENT if args.broken else _AFTER_CALL
        return text, stop

    def _after_call(self, text: str, pos: int) -> tuple[str, int]:
        pos = skip_space(text, pos)
        rest = text[pos:]
        if rest.startswith(FUNCTION_END):
            self._state = _AFTER_CLOSE
            return text, pos + len(FUNCTION_END)
        if FUNCTION_END.startswith(rest):  # also an empty rest: the next piece decides
            self._pending = rest
            return text, len(text)
        self._state = _CONTENT  # the closer is missing: content resumes here
        return text, pos

    def _in_code(self, text: str, pos: int) -> tuple[str, int]:
        self._arguments(self._code_call, escape(text[pos:]))
        return text, len(text)

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _CONTENT: _in_content,
        _OPENER: _in_opener,
        _ARGS: _in_args,
        _AFTER_CALL: _after_call,
        _AFTER_CLOSE: PieceMachine._layout_then_content,
        _CODE: _in_code,
    }


# -------------------------------------------------------------------- spec


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Content, then one ``<function=NAME>{json}</function>`` per call, as Functionary's template writes them."""
    return content + "".join(f"{FUNCTION}{name}>{dumps(args)}{FUNCTION_END}" for name, args in calls)


SPEC = FormatSpec(
    id="functionary_v3_1",
    description="Functionary v3.1 (Llama 3.1): <function=NAME>{json}</function>, and <|python_tag|> code",
    parser=Parser,
    markers=Markers(leak=(FUNCTION, FUNCTION_END, PYTHON_TAG), markup=(r"<function=[A-Za-z0-9_.\-]*>",)),
    write=write,
    envelopes=(
        Envelope(around_arguments(lambda name: f"{FUNCTION}{name}>", FUNCTION_END), layout=CallsLayout(), content=True),
    ),
    signs=(
        TemplateSign(
            963,
            "<|start_header_id|> with <function=...> (llama.cpp: Functionary v3.1 Llama 3.1)",
            ("<|start_header_id|>", FUNCTION),
        ),
    ),
    template="functionary_v3_1.jinja",
)
