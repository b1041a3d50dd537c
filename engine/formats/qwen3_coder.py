"""Qwen3-Coder / Qwen3.5 XML tool calls, streamed as JSON arguments built append-only.

Wire format (one or more blocks, content before them, optional ``<think>`` first)::

    <tool_call>
    <function=NAME>
    <parameter=KEY>
    VALUE
    </parameter>
    </function>
    </tool_call>

The JSON arguments are built the way llama.cpp's PEG mapper builds them
(``common/chat-peg-parser.cpp``), but strictly append-only:

* ``{`` and the name once ``<function=NAME>`` is complete (the name is final at ``>``);
* ``"KEY":`` (``,"KEY":`` from the second parameter on) once ``<parameter=KEY>`` is complete;
* a ``string`` value (schema type from the request's tools): ``"`` when the value starts, then the
  text JSON-escaped as it arrives, the closing ``"`` only once the closer was seen;
* a value of any other declared type (integer, number, boolean, object, array, null): the raw
  text as it arrives, unquoted (``{"n":1`` then ``{"n":12``);
* a value whose type the tools do not declare: held until complete, then written once, raw if
  it parses as a JSON number/true/false/null/object/array, else as a JSON string. Never guessed
  and revised;
* ``}`` at ``</function>`` (llama.cpp closes the call at its TOOL_CLOSE tag, ``</function>``).

Whitespace: one newline (``\\n`` or ``\\r\\n``) right after ``<parameter=KEY>`` and one right
before ``</parameter>`` belong to the layout, not to the value (llama.cpp's grammar writes
``>\\n`` and ``\\n</parameter>\\n``). Whitespace between parameters, after ``<tool_call>`` and
between blocks is layout too; leading whitespace of content after a block or after
``</think>`` is dropped.

Decided rules for text that does not follow the format (tested):

* ``</parameter>`` closes a value only when followed by a newline, ``<parameter=``,
  ``</function>``, ``</tool_call>`` or the end of the generation; otherwise it is value text
  (a value may quote the closer, e.g. code that writes XML). The first ``</parameter>`` that
  qualifies closes the value; ``</function>`` inside a value is value text.
* ``<tool_call>`` followed by anything but ``<function=`` (after whitespace) is content, markers
  included. A function or parameter name with a newline or ``<`` in it, an empty name or one
  longer than :data:`NAME_LIMIT` is malformed: its text goes to content.
* Text inside a function that is neither a parameter nor the closer is content.
* ``</tool_call>`` without ``</function>`` closes the call; a block without ``</tool_call>``
  ends at the first non-layout text, which is content.
* A stray ``</think>`` in content is dropped (the generation started inside reasoning but the
  parser was not told so: the text before it already went out as content and stays there).
* Terminal parse: held-back text that turned out not to be a marker is released to content or
  reasoning; a half-typed closer never enters arguments; a call truncated mid-value keeps the
  arguments so far (a held value is written as far as it got); a truncated opener whose name
  never completed produces no call.

``Parser(tools, thinking=True)`` starts inside reasoning (a prompt that ends with ``<think>``,
Qwen3.5 thinking mode); by default reasoning exists only when the generation opens ``<think>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.core.json_text import is_json
from callscope.engine.formats._kit.gbnf import ArgumentRules, Envelope, lit
from callscope.engine.formats._kit.marker_search import find_first, held_back_from
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import TEXT as _TEXT
from callscope.engine.formats._kit.text_machine import THINK_END, ThinkTextMachine
from callscope.engine.formats._kit.writing import dumps, newline_between, think

TOOL_CALL = "<tool_call>"
TOOL_CALL_END = "</tool_call>"
FUNCTION = "<function="
FUNCTION_END = "</function>"
PARAMETER = "<parameter="
PARAMETER_END = "</parameter>"

#: Longest function or parameter name accepted; a longer one is malformed (bounds the hold-back).
NAME_LIMIT = 256

_TEXT_MARKERS = (TOOL_CALL, THINK_END)
_BODY_MARKERS = (PARAMETER, FUNCTION_END, TOOL_CALL_END)
_VALUE_CLOSERS = ("\n" + PARAMETER_END, "\r\n" + PARAMETER_END, PARAMETER_END)
_NAME_STOP = re.compile(r"[>\n<]")

# parser states (besides ThinkTextMachine's start / reasoning / text)
_OPEN = "open"  # after <tool_call>: expecting <function=
_FN_NAME = "fn_name"
_FN_BODY = "fn_body"  # between parameters
_PARAM_NAME = "param_name"
_PARAM_START = "param_start"  # after <parameter=KEY>: the layout newline?
_VALUE = "value"
_BLOCK_NEXT = "block_next"  # after </function>: </tool_call> or another <function=

# how the current parameter value is written
_STRING = "string"
_RAW = "raw"
_HELD = "held"


def _escape(text: str) -> str:
    """JSON string escaping of ``text`` without the quotes; escaping is per character, so pieces concatenate."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _json_literal(text: str) -> str | None:
    """``text`` stripped if it is a JSON number/true/false/null/object/array, else None.

    Checked with the grammar, not by building the value, so a deeply nested
    array stays an array (``json.loads`` would give up and make it a string).
    """
    stripped = text.strip()
    if not stripped or stripped[0] == '"' or not is_json(stripped, constants=False):
        return None
    return stripped


def _strip_layout_newline(text: str) -> str:
    if text.endswith("\r\n"):
        return text[:-2]
    if text.endswith("\n"):
        return text[:-1]
    return text


def _closes_value(after: str) -> bool | None:
    """Does ``</parameter>`` followed by ``after`` close the value? None: the next piece decides."""
    if not after:
        return None
    if after[0] == "\n":
        return True
    if after[0] == "\r":
        return None if len(after) == 1 else after[1] == "\n"
    for marker in _BODY_MARKERS:
        if after.startswith(marker):
            return True
        if marker.startswith(after):
            return None
    return False


class Parser(ThinkTextMachine):
    """Incremental Qwen3-Coder XML parser (see the module docstring for the rules)."""

    _text_markers = _TEXT_MARKERS

    def __init__(self, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> None:
        super().__init__(tools, thinking)
        self._function = ""  # its name (for the parameter types)
        self._params = 0  # parameters written into the open call
        self._mode = _STRING  # how the current value is written
        self._held: list[str] = []  # value text of a parameter of undeclared type
        self._in_junk = False  # the last thing inside the function body was stray text

    def _finish_in(self, state: str, buf: str) -> None:
        if state == _VALUE:
            self._finish_value(buf)
        # _OPEN/_FN_NAME/_PARAM_NAME: a name never completed, nothing to show;
        # _FN_BODY/_BLOCK_NEXT/_PARAM_START: layout or a half-typed marker, dropped.

    def _finish_value(self, buf: str) -> None:
        closer = buf.find(PARAMETER_END)
        if closer >= 0:  # complete only at the end: the end of the generation decides it
            self._value_text(_strip_layout_newline(buf[:closer]))
            self._close_value()
        elif self._mode == _HELD:  # truncated: write the held value as far as it got
            text = "".join(self._held)
            literal = _json_literal(text)
            self._arguments(self._call, literal if literal is not None else '"' + _escape(text))
        # the held tail is a half-typed closer: it never enters the arguments

    def _take_layout(self) -> str:
        """Move leading whitespace of the buffer to ``_ws``; return the rest."""
        buf = self._buf
        rest = buf.lstrip()
        if len(rest) != len(buf):
            self._ws += buf[: len(buf) - len(rest)]
            self._buf = rest
        return rest

    # ---------------------------------------------------------------- states
    # Each handler consumes what the buffer decides and returns True when it made progress
    # (the loop runs again), False when it needs more text.

    def _on_text_marker(self, marker: str) -> None:  # <tool_call>
        self._pending = marker
        self._state = _OPEN

    def _on_open(self) -> bool:
        buf = self._buf
        rest = buf.lstrip()
        self._pending += buf[: len(buf) - len(rest)]
        self._buf = rest
        if not rest:
            return False
        if rest.startswith(FUNCTION):
            self._pending += FUNCTION
            self._begin_name(rest[len(FUNCTION) :], _FN_NAME)
            return True
        if rest.startswith(TOOL_CALL_END):  # an empty block
            self._pending = ""
            self._buf = rest[len(TOOL_CALL_END) :]
            return self._back_to_text()
        if FUNCTION.startswith(rest) or TOOL_CALL_END.startswith(rest):
            return False
        return self._release_opener(_TEXT)  # not a tool call after all

    def _begin_name(self, rest: str, state: str) -> None:
        self._buf = rest
        self._name = ""
        self._state = state

    def _scan_name(self) -> bool | None:
        """Read a name up to ``>``: True complete, False malformed (buffer at the fault), None need more."""
        rest = self._read_name(_NAME_STOP)
        if rest is None:
            return None if len(self._name) <= NAME_LIMIT else False
        name = self._name.strip()
        if rest[0] == ">" and name and len(self._name) <= NAME_LIMIT:
            self._name = name
            self._buf = rest[1:]
            return True
        return False

    def _on_fn_name(self) -> bool:
        done = self._scan_name()
        if done is None:
            return False
        if done:
            self._pending = ""
            self._call = self._open_call()
            self._function = self._name
            self._name_call(self._call, self._name)
            self._arguments(self._call, "{")
            self._params = 0
            self._ws = ""
            self._state = _FN_BODY
            return True
        return self._release_opener(_TEXT)

    def _on_fn_body(self) -> bool:
        rest = self._take_layout()
        if not rest:
            return False
        for marker in _BODY_MARKERS:
            if rest.startswith(marker):
                self._ws = ""
                self._in_junk = False
                rest = rest[len(marker) :]
                if marker == PARAMETER:
                    self._pending = PARAMETER
                    self._begin_name(rest, _PARAM_NAME)
                    return True
                self._arguments(self._call, "}")
                self._buf = rest
                if marker == FUNCTION_END:
                    self._state = _BLOCK_NEXT
                    return True
                return self._back_to_text()  # </tool_call> without </function>
            if marker.startswith(rest):
                return False
        # text that is neither a parameter nor the closer: content, its trailing layout held
        hit = find_first(rest, _BODY_MARKERS)
        cut = hit[0] if hit is not None else held_back_from(rest, _BODY_MARKERS)
        junk = rest[:cut]
        body = junk.rstrip()
        # whitespace between two pieces of junk is theirs; after a marker it is layout
        self._say_content((self._ws if self._in_junk else "") + body)
        self._in_junk = True
        self._ws = junk[len(body) :]
        self._buf = rest[cut:]
        return True

    def _on_param_name(self) -> bool:
        done = self._scan_name()
        if done is None:
            return False
        if done:
            key = self._name
            self._pending = ""
            prefix = "," if self._params else ""
            self._arguments(self._call, prefix + json.dumps(key, ensure_ascii=False) + ":")
            self._params += 1
            kind = self.parameter_type(self._function, key)
            self._mode = _HELD if kind is None else _STRING if kind == "string" else _RAW
            self._state = _PARAM_START
            return True
        return self._release_opener(_FN_BODY)

    def _on_param_start(self) -> bool:
        buf = self._buf
        if not buf:
            return False
        if buf[0] == "\n":
            buf = buf[1:]
        elif buf[0] == "\r":
            if len(buf) < 2:
                return False
            if buf[1] == "\n":
                buf = buf[2:]
        self._buf = buf
        if self._mode == _STRING:
            self._arguments(self._call, '"')
        self._held = []
        self._state = _VALUE
        return True

    def _on_value(self) -> bool:
        buf = self._buf
        start = 0
        while True:
            pos = buf.find(PARAMETER_END, start)
            if pos < 0:
                break
            after = buf[pos + len(PARAMETER_END) :]
            closes = _closes_value(after)
            if closes is False:  # the closer's text inside the value
                start = pos + 1
                continue
            head = _strip_layout_newline(buf[:pos])
            self._value_text(head)
            if closes is None:  # hold the closer (and its newline) until the next piece decides
                self._buf = buf[len(head) :]
                return False
            self._close_value()
            if after.startswith("\n"):
                after = after[1:]
            elif after.startswith("\r\n"):
                after = after[2:]
            self._buf = after
            self._ws = ""
            self._state = _FN_BODY
            return True
        cut = held_back_from(buf, _VALUE_CLOSERS)
        self._value_text(buf[:cut])
        self._buf = buf[cut:]
        return False

    def _value_text(self, text: str) -> None:
        if not text:
            return
        if self._mode == _STRING:
            self._arguments(self._call, _escape(text))
        elif self._mode == _RAW:
            self._arguments(self._call, text)
        else:
            self._held.append(text)

    def _close_value(self) -> None:
        if self._mode == _STRING:
            self._arguments(self._call, '"')
        elif self._mode == _HELD:
            text = "".join(self._held)
            self._held = []
            literal = _json_literal(text)
            self._arguments(self._call, literal if literal is not None else json.dumps(text, ensure_ascii=False))

    def _on_block_next(self) -> bool:
        rest = self._take_layout()
        if not rest:
            return False
        if rest.startswith(TOOL_CALL_END):
            self._ws = ""
            self._buf = rest[len(TOOL_CALL_END) :]
            return self._back_to_text()
        if rest.startswith(FUNCTION):  # several functions in one block
            self._ws = ""
            self._pending = FUNCTION
            self._begin_name(rest[len(FUNCTION) :], _FN_NAME)
            return True
        if TOOL_CALL_END.startswith(rest) or FUNCTION.startswith(rest):
            return False
        self._ws = ""  # the block was never closed: what follows is content
        return self._back_to_text()

    _handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        **ThinkTextMachine.think_handlers,
        _OPEN: _on_open,
        _FN_NAME: _on_fn_name,
        _FN_BODY: _on_fn_body,
        _PARAM_NAME: _on_param_name,
        _PARAM_START: _on_param_start,
        _VALUE: _on_value,
        _BLOCK_NEXT: _on_block_next,
    }


# -------------------------------------------------------------------- spec


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """``<think>`` reasoning, content, then one XML block per call: strings bare, other values as JSON."""
    blocks = []
    for name, args in calls:
        params = "".join(
            f"{PARAMETER}{key}>\n{value if isinstance(value, str) else dumps(value)}\n{PARAMETER_END}\n"
            for key, value in args.items()
        )
        blocks.append(f"{TOOL_CALL}\n{FUNCTION}{name}>\n{params}{FUNCTION_END}\n{TOOL_CALL_END}")
    return think(reasoning) + content + newline_between(content, calls) + "\n".join(blocks)


def grammar_call(name: str, args: ArgumentRules) -> str:
    """``<function=NAME>`` then one ``<parameter=KEY>`` block per argument (optional ones may be left out)."""
    parts = []
    for param in args.parameters():
        block = f"{lit(f'{PARAMETER}{param.key}>' + chr(10))} {param.value} {lit(chr(10) + PARAMETER_END + chr(10))}"
        parts.append(block if param.required else f"({block})?")
    head = lit(f"{TOOL_CALL}\n{FUNCTION}{name}>\n")
    return f"{head} {' '.join(parts)} {lit(FUNCTION_END + chr(10) + TOOL_CALL_END)}"


SPEC = FormatSpec(
    id="qwen3_coder",
    description="Qwen3-Coder / Qwen3.5 XML: <tool_call><function=NAME><parameter=KEY>VALUE</parameter>...</tool_call>",
    parser=Parser,
    thinking=True,
    markers=Markers(
        leak=(TOOL_CALL, TOOL_CALL_END, FUNCTION, FUNCTION_END, PARAMETER, PARAMETER_END),
        markup=(r"<(?:function|parameter)=[^<>\n]*>", r"</?think>"),
    ),
    write=write,
    envelopes=(Envelope(grammar_call, content=True),),
    signs=(
        TemplateSign(
            600,
            "<tool_call> with <function=...> and <parameter=...> blocks (llama.cpp: Qwen3-Coder XML)",
            (TOOL_CALL, FUNCTION, PARAMETER),
        ),
    ),
    template="qwen3_coder.jinja",
)
