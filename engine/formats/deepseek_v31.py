"""DeepSeek V3.1 tool calls: raw JSON arguments between fullwidth-bar markers.

Wire format (content first, optional reasoning ended by ``</think>``)::

    CONTENT<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{"json": "args"}<｜tool▁call▁end｜>
    <｜tool▁call▁begin｜>NAME2<｜tool▁sep｜>{...}<｜tool▁call▁end｜><｜tool▁calls▁end｜>

(``｜`` is U+FF5C, ``▁`` is U+2581.) As in llama.cpp (``common_chat_parse_deepseek_v3_1``), the
block opener may also be spelt ``<｜tool_calls_begin｜>``, ``<｜tool calls begin｜>``,
``<｜tool\\_calls\\_begin｜>`` or ``<｜tool▁calls｜>``, and ``<｜tool▁call▁begin｜>`` is optional.

* The name is final once ``<｜tool▁sep｜>`` arrives; it is the text before it, without newline or
  ``<``, at most :data:`NAME_LIMIT` characters (otherwise the opener is content).
* The arguments are the raw text between ``<｜tool▁sep｜>`` and ``<｜tool▁call▁end｜>``, streamed
  append-only; surrounding whitespace is layout (llama.cpp's close regex is ``\\s*<｜tool▁call▁end｜>``).
  A half-typed closer is held back and never enters the arguments. The first
  ``<｜tool▁call▁end｜>`` ends the arguments even inside a JSON string: a text-level parser cannot
  tell the special token from the same characters (vLLM's regex does the same), and the model
  writes it as one special token, never inside a string. ``<｜tool▁calls▁end｜>`` without the
  call's end closes both.
* Text after ``<｜tool▁calls▁end｜>`` is content (leading whitespace dropped); another block
  opener starts another block. Text inside a block that is not a call is content.
* Reasoning: a generation that opens with ``<think>`` reasons until ``</think>``.
  ``Parser(tools, thinking=True)`` starts inside reasoning (thinking mode: the prompt ends with
  ``<think>``, the generation only closes it). Tool calls are only parsed outside reasoning
  (V3.1 calls tools in non-thinking mode). A stray ``</think>`` in content is dropped: the text
  before it already went out as content and stays there (never revised).
* Terminal parse: held-back text that is not a marker is released to content or reasoning; a
  call truncated mid-arguments keeps the arguments so far; a truncated opener without a complete
  name produces no call.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from engine.formats.base import FormatParser
from engine.formats.markers import find_first, held_back_from

CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
#: Every spelling of the block opener llama.cpp accepts (distilled models vary).
CALLS_BEGIN_VARIANTS = (
    CALLS_BEGIN,
    "<｜tool_calls_begin｜>",
    "<｜tool calls begin｜>",
    "<｜tool\\_calls\\_begin｜>",
    "<｜tool▁calls｜>",
)
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"
THINK = "<think>"
THINK_END = "</think>"

#: Longest function name accepted; a longer one is malformed (bounds the hold-back).
NAME_LIMIT = 256

_TEXT_MARKERS = CALLS_BEGIN_VARIANTS + (THINK_END,)
_ARGS_CLOSERS = (CALL_END, CALLS_END)
_NAME_STOP = re.compile(r"[\n<]")

_START = "start"
_REASONING = "reasoning"
_TEXT = "text"
_BLOCK = "block"  # inside <｜tool▁calls▁begin｜>: a call, or the block's end
_NAME = "name"
_ARGS = "args"


class Parser(FormatParser):
    """Incremental DeepSeek V3.1 parser (see the module docstring for the rules)."""

    format_id = "deepseek_v31"
    description = (
        "DeepSeek V3.1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>..."
    )

    def __init__(self, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> None:
        super().__init__(tools)
        self._thinking = thinking
        self._buf = ""  # unresolved text: a bounded tail between feeds
        self._state = _START
        self._ws = ""  # trailing whitespace held until the next non-space decides
        self._skip_ws = False  # drop the leading whitespace of the next content/reasoning/arguments
        self._pending = ""  # raw opener text of a call whose name is not complete yet
        self._name = ""
        self._call = -1
        self._handlers: dict[str, Callable[[], bool]] = {
            _START: self._on_start,
            _REASONING: self._on_reasoning,
            _TEXT: self._on_text,
            _BLOCK: self._on_block,
            _NAME: self._on_name,
            _ARGS: self._on_args,
        }

    # ------------------------------------------------------------------ driving

    def _feed(self, text: str) -> None:
        self._buf += text
        handlers = self._handlers
        while handlers[self._state]():
            pass

    def _finish(self) -> None:
        state, buf = self._state, self._buf
        self._buf = ""
        if state == _START:
            (self._say_reasoning if self._thinking else self._say_content)(buf)
        elif state == _REASONING:
            self._say_reasoning(buf)
        elif state == _TEXT:
            self._say_content(buf)
        # _BLOCK: a half-typed marker; _NAME: no complete name, no call;
        # _ARGS: a half-typed closer and trailing layout never enter the arguments.

    # ------------------------------------------------------------ text sinks

    def _lstrip_once(self, text: str) -> str:
        if self._skip_ws:
            text = text.lstrip()
            if text:
                self._skip_ws = False
        return text

    def _say_content(self, text: str) -> None:
        self._content(self._lstrip_once(text))

    def _say_trimmed(self, text: str, sink: Callable[[str], None]) -> None:
        """Send ``text`` to ``sink`` with leading (``_skip_ws``) and trailing whitespace held."""
        text = self._lstrip_once(text)
        body = text.rstrip()
        if body:
            sink(self._ws + body)
            self._ws = text[len(body) :]
        else:
            self._ws += text

    def _say_reasoning(self, text: str) -> None:
        self._say_trimmed(text, self._reasoning)

    def _say_arguments(self, text: str) -> None:
        self._say_trimmed(text, self._append_arguments)

    def _append_arguments(self, text: str) -> None:
        self._arguments(self._call, text)

    # ---------------------------------------------------------------- states

    def _on_start(self) -> bool:
        rest = self._buf.lstrip()
        if not rest:
            return False
        if rest.startswith(THINK):
            self._buf = rest[len(THINK) :]
            self._state = _REASONING
            self._skip_ws = True
            return True
        if THINK.startswith(rest):
            return False
        self._state = _REASONING if self._thinking else _TEXT
        self._skip_ws = self._thinking
        return True

    def _on_reasoning(self) -> bool:
        buf = self._buf
        end = buf.find(THINK_END)
        if end >= 0:
            self._say_reasoning(buf[:end])
            self._ws = ""
            self._buf = buf[end + len(THINK_END) :]
            self._state = _TEXT
            self._skip_ws = True
            return True
        cut = held_back_from(buf, (THINK_END,))
        self._say_reasoning(buf[:cut])
        self._buf = buf[cut:]
        return False

    def _on_text(self) -> bool:
        buf = self._buf
        hit = find_first(buf, _TEXT_MARKERS)
        if hit is not None:
            pos, marker = hit
            self._say_content(buf[:pos])
            self._buf = buf[pos + len(marker) :]
            if marker == THINK_END:
                self._skip_ws = True
            else:
                self._state = _BLOCK
            return True
        cut = held_back_from(buf, _TEXT_MARKERS)
        self._say_content(buf[:cut])
        self._buf = buf[cut:]
        return False

    def _on_block(self) -> bool:
        rest = self._buf.lstrip()  # whitespace between calls is layout
        self._buf = rest
        if not rest:
            return False
        if rest.startswith(CALL_BEGIN):
            self._pending = CALL_BEGIN
            self._name = ""
            self._buf = rest[len(CALL_BEGIN) :]
            self._state = _NAME
            return True
        if rest.startswith(CALLS_END):
            self._buf = rest[len(CALLS_END) :]
            self._state = _TEXT
            self._skip_ws = True
            return True
        if CALL_BEGIN.startswith(rest) or CALLS_END.startswith(rest):
            return False
        if rest[0] != "<":  # a call without <｜tool▁call▁begin｜>, as llama.cpp accepts
            self._pending = ""
            self._name = ""
            self._state = _NAME
            return True
        self._state = _TEXT  # not a call: content
        return True

    def _on_name(self) -> bool:
        buf = self._buf
        stop = _NAME_STOP.search(buf)
        if stop is None:
            self._name += buf
            self._pending += buf
            self._buf = ""
            if len(self._name) <= NAME_LIMIT:
                return False
            return self._malformed_name()
        pos = stop.start()
        self._name += buf[:pos]
        self._pending += buf[:pos]
        rest = buf[pos:]
        if rest.startswith(SEP):
            name = self._name.strip()
            if not name or len(self._name) > NAME_LIMIT:
                self._buf = rest
                return self._malformed_name()
            self._pending = ""
            self._call = self._open_call()
            self._name_call(self._call, name)
            self._buf = rest[len(SEP) :]
            self._ws = ""
            self._skip_ws = True
            self._state = _ARGS
            return True
        self._buf = rest
        if SEP.startswith(rest):
            return False
        return self._malformed_name()

    def _malformed_name(self) -> bool:
        self._say_content(self._pending)
        self._pending = ""
        self._state = _TEXT
        return True

    def _on_args(self) -> bool:
        buf = self._buf
        hit = find_first(buf, _ARGS_CLOSERS)
        if hit is not None:
            pos, marker = hit
            self._say_arguments(buf[:pos])
            self._ws = ""  # whitespace before the closer is layout
            self._skip_ws = False
            self._buf = buf[pos + len(marker) :]
            if marker == CALL_END:
                self._state = _BLOCK
            else:
                self._state = _TEXT
                self._skip_ws = True
            return True
        cut = held_back_from(buf, _ARGS_CLOSERS)
        self._say_arguments(buf[:cut])
        self._buf = buf[cut:]
        return False
