"""Llama 3.1 / 3.2 JSON tool calls: ``{"name": ..., "parameters": {...}}``, ``;``-separated, and the built-in tools.

Grammar (llama.cpp's Llama 3.x handler, plus vLLM's ``;`` for parallel calls
and its calls after leading text)::

    [ws] [<|python_tag|>] [ws] {call} ( [ws] ; [ws] {call} | [ws] {call} )*  [ws] content
    <|python_tag|> NAME.call(key=value, ...)                       a built-in tool (brave_search, wolfram_alpha, ...)
    content {call} content                                          a call after leading text

JSON calls: the call object may use ``"parameters"`` (Llama's key) or
``"arguments"``; keys before ``"name"`` (``"type": "function"``) are allowed.
Arguments stream verbatim: see :mod:`callscope.engine.formats._kit.json_call_machine`.
``<|python_tag|>`` is a control token: it is never shown as content, and one
written in the middle of content starts a call attempt there, as at the start.
An object in content (``Here is the result: {"name": ...}``) is a call too,
if it starts like one: a member that is not ``name``, ``parameters``,
``arguments``, ``id`` or ``type`` before the call opens makes it prose, so
``{"query": ...}`` quoted in an answer is content at once.

Built-in tools (Llama 3.1's ``brave_search``, ``wolfram_alpha``,
``code_interpreter``, and ``python``): after ``<|python_tag|>``, ``NAME.call(``
with keyword arguments written as Python literals (llama.cpp reads them as
JSON values; both read the same for strings and numbers). They are read by
:class:`~callscope.engine.formats._kit.python_args.PythonCall`: the call is the
built-in tool's name, its arguments the JSON object of the keywords, opened
once the first value has begun validly.

Bad input, decided on the text alone:

* Until the call opens (name complete or arguments started) the attempt is
  held back; if it stops looking like a call first (JSON syntax error,
  non-string name, an object without name and arguments), the held text is
  content, verbatim (minus ``<|python_tag|>``), and scanning goes on after its
  ``{``.
* After a call: whitespace (and ``<|eom_id|>``) is skipped; ``;`` or ``{`` starts the next attempt
  (held from the ``;``); anything else is content from there on.
* A JSON syntax error after a call opened ends that call with the arguments
  so far; the text from the error on is read as what follows a call. A
  built-in call that breaks ends the same way; what follows is content.
* End of generation: a held attempt that never opened is content; a trailing
  ``;`` with nothing after it is dropped; a call cut mid-way keeps its
  arguments so far; a half-typed ``<|python_ta`` is content.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import CallsLayout, Envelope, around_arguments
from callscope.engine.formats._kit.json_call_machine import CallObjectMachine, CallObjectScan
from callscope.engine.formats._kit.marker_search import find_first, held_back_from
from callscope.engine.formats._kit.python_args import PythonCall
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import skip_space
from callscope.engine.formats._kit.writing import dumps

PYTHON_TAG = "<|python_tag|>"
EOM = "<|eom_id|>"  # ends the message of a built-in call (the model waits for the tool's answer)
#: Llama 3.1's built-in tools (any ``NAME.call(...)`` after the tag is read the same way).
BUILTIN_TOOLS = ("brave_search", "wolfram_alpha", "code_interpreter", "python")

_CONTENT_STOPS = (PYTHON_TAG, "{")
_WORD = re.compile(r"[A-Za-z_]")
#: ``NAME.call(`` complete, or a prefix of it.
_BUILTIN = re.compile(r"(\w+)\s*\.\s*call\(")
_BUILTIN_PREFIX = re.compile(r"\w+\s*(?:\.\s*(?:c(?:a(?:l(?:l)?)?)?)?)?")
_LONGEST_BUILTIN = 64

_START, _CONTENT, _CALL, _AFTER_CALL, _NEXT, _BUILTIN_NAME, _BUILTIN_ARGS = range(7)


class Parser(CallObjectMachine):
    """Incremental Llama 3.x JSON parser (see the module docstring for the rules)."""

    _content_state = _CONTENT

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        super().__init__(tools, _START)
        self._tag_seen = False  # <|python_tag|> already consumed for the current attempt
        self._in_prose = False  # the current attempt is an object met in content
        self._builtin = ""  # a built-in call's header (NAME.call), until its "("
        self._python: PythonCall | None = None

    def _finish(self) -> None:
        if self._state == _BUILTIN_ARGS:
            self._python.finish()
            if not self._python.opened:
                self._state = _CONTENT
                self._content("".join(self._held))
            self._held = []
        elif self._state == _BUILTIN_NAME:
            self._state = _CONTENT
            self._content("".join(self._held) + self._builtin)
            self._held = []
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
        """Before a call attempt: whitespace, an optional <|python_tag|>, then "{", a built-in call or content."""
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
        if self._tag_seen and _WORD.match(rest[0]):
            self._held = self._held + [text[pos:start]]
            self._state = _BUILTIN_NAME
            self._builtin = ""
            return text, start
        held, self._held = "".join(self._held), []
        self._content(held)
        self._tag_seen = False
        self._state = _CONTENT
        return text, pos

    def _in_content(self, text: str, pos: int) -> tuple[str, int]:
        found = find_first(text, _CONTENT_STOPS, pos)
        if found is None:
            hold = held_back_from(text, (PYTHON_TAG,), pos)
            self._content(text[pos:hold])
            self._pending = text[hold:]
            return text, len(text)
        at, marker = found
        self._content(text[pos:at])
        if marker == PYTHON_TAG:
            self._state = _START
            self._tag_seen = True
            self._held = []
            return text, at + len(PYTHON_TAG)
        self._begin_call([], in_prose=True)
        return text, at

    def _begin_call(self, held: list[str], in_prose: bool = False) -> None:
        self._state = _CALL
        self._call = CallObjectScan(self, strict=in_prose)
        self._in_prose = in_prose
        self._held = held

    def _call_done(self, call: CallObjectScan) -> None:
        self._state = _AFTER_CALL
        self._tag_seen = False

    def _not_a_call(self, rest: str) -> tuple[str, int]:
        """The held attempt is not a call: its text is content, and scanning goes on after its ``{``."""
        held = "".join(self._held) + rest
        self._held = []
        self._call = None
        self._tag_seen = False
        self._state = _CONTENT
        if self._in_prose:
            self._content("{")
            return held[1:], 0
        brace = held.find("{")
        self._content(held[: brace + 1])  # what came before the object, and its brace
        return held[brace + 1 :], 0

    def _after_call(self, text: str, pos: int) -> tuple[str, int]:
        pos = skip_space(text, pos)
        if pos >= len(text):
            return text, pos
        rest = text[pos:]
        if rest.startswith(EOM):  # the end of a built-in call's message
            return text, pos + len(EOM)
        if EOM.startswith(rest):
            self._pending = rest
            return text, len(text)
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

    # ------------------------------------------------------------ built-in tools

    def _in_builtin_name(self, text: str, pos: int) -> tuple[str, int]:
        header = self._builtin + text[pos:]
        m = _BUILTIN.match(header)
        if m is not None and m.end() <= _LONGEST_BUILTIN:
            self._held.append(header[: m.end()])
            self._builtin = ""
            self._state = _BUILTIN_ARGS
            self._python = PythonCall(self, m.group(1), lenient=False)
            return header, m.end()
        if _BUILTIN_PREFIX.fullmatch(header) and len(header) <= _LONGEST_BUILTIN:
            self._builtin = header
            return text, len(text)
        held, self._held = "".join(self._held), []  # not a built-in call: content, as written
        self._builtin = ""
        self._tag_seen = False
        self._state = _CONTENT
        self._content(held)
        return header, 0

    def _in_builtin_args(self, text: str, pos: int) -> tuple[str, int]:
        call = self._python
        stop = call.feed(text, pos)
        if call.opened:
            self._held = []
        else:
            self._held.append(text[pos:stop])
        if not call.done:
            return text, len(text)
        self._python = None
        self._tag_seen = False
        if call.opened:
            self._state = _CONTENT if call.broken else _AFTER_CALL
            return text, stop
        held, self._held = "".join(self._held), []  # never a call: content, verbatim
        self._state = _CONTENT
        self._content(held)
        return text, stop

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _START: _at_start,
        _CONTENT: _in_content,
        _CALL: CallObjectMachine._in_call,
        _AFTER_CALL: _after_call,
        _NEXT: _next_call,
        _BUILTIN_NAME: _in_builtin_name,
        _BUILTIN_ARGS: _in_builtin_args,
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
    markers=Markers(leak=(PYTHON_TAG, EOM)),
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
