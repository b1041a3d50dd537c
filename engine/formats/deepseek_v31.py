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
* Text after the first call is not content: vLLM's DeepSeek V3.1 parser keeps only the text
  before the calls as content, and callscope follows it (a model that writes on after its
  calls is shown the same way everywhere). Another block opener still starts another block.
  Text inside a block before any call opened is content.
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
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import CallsLayout, Envelope, around_arguments, lit
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import TEXT as _TEXT
from callscope.engine.formats._kit.text_machine import THINK_END, ThinkTextMachine
from callscope.engine.formats._kit.writing import dumps

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

#: Longest function name accepted; a longer one is malformed (bounds the hold-back).
NAME_LIMIT = 256

_ARGS_CLOSERS = (CALL_END, CALLS_END)
_NAME_STOP = re.compile(r"[\n<]")

_BLOCK = "block"  # inside <｜tool▁calls▁begin｜>: a call, or the block's end
_NAME = "name"
_ARGS = "args"


class Parser(ThinkTextMachine):
    """Incremental DeepSeek V3.1 parser (see the module docstring for the rules)."""

    _text_markers = CALLS_BEGIN_VARIANTS + (THINK_END,)

    def __init__(self, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> None:
        super().__init__(tools, thinking)

    # End of generation (ThinkTextMachine._finish): in _BLOCK a half-typed marker, in _NAME no
    # complete name (no call), in _ARGS a half-typed closer and trailing layout: all dropped.

    def _say_content(self, text: str) -> None:
        """Content, only until the first call opened (vLLM drops the text after the calls)."""
        if not self.call_count:
            super()._say_content(text)

    # ---------------------------------------------------------------- states

    def _on_text_marker(self, marker: str) -> None:
        self._state = _BLOCK

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
            return self._back_to_text()
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
        rest = self._read_name(_NAME_STOP)
        if rest is None:  # wait for the separator, unless the name is already too long
            if len(self._name) <= NAME_LIMIT:
                return False
            return self._release_opener(_TEXT)
        if rest.startswith(SEP):
            name = self._name.strip()
            if not name or len(self._name) > NAME_LIMIT:
                return self._release_opener(_TEXT)
            self._open_raw_call(name, rest[len(SEP) :])
            self._state = _ARGS
            return True
        if SEP.startswith(rest):
            return False
        return self._release_opener(_TEXT)

    def _on_args(self) -> bool:
        marker = self._raw_arguments(_ARGS_CLOSERS)
        if marker is None:
            return False
        if marker == CALL_END:
            self._state = _BLOCK
            return True
        return self._back_to_text()

    _handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        **ThinkTextMachine.think_handlers,
        _BLOCK: _on_block,
        _NAME: _on_name,
        _ARGS: _on_args,
    }


# -------------------------------------------------------------------- spec

#: DeepSeek's end-of-turn token: a server that shows it as content leaks a control token.
END_OF_SENTENCE = "<｜end▁of▁sentence｜>"


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Reasoning closed by ``</think>`` (thinking mode), content, then one block of calls."""
    head = f"{reasoning}{THINK_END}" if reasoning else ""
    if not calls:
        return head + content
    body = "".join(f"{CALL_BEGIN}{name}{SEP}{dumps(args)}{CALL_END}" for name, args in calls)
    return head + content + CALLS_BEGIN + body + CALLS_END


SPEC = FormatSpec(
    id="deepseek_v31",
    description="DeepSeek V3.1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>...",
    parser=Parser,
    thinking=True,
    markers=Markers(
        leak=(*CALLS_BEGIN_VARIANTS, CALL_BEGIN, SEP, CALL_END, CALLS_END, END_OF_SENTENCE),
        markup=(r"</?think>",),
    ),
    write=write,
    envelopes=(
        Envelope(
            around_arguments(lambda name: f"{CALL_BEGIN}{name}{SEP}", CALL_END),
            layout=CallsLayout(open=lit(CALLS_BEGIN), close=lit(CALLS_END)),
            content=True,
        ),
    ),
    signs=(
        TemplateSign(
            100,
            "DeepSeek V3.1 prefix/thinking block (llama.cpp: DeepSeek V3.1)",
            ("message['prefix'] is defined and message['prefix'] and thinking",),
        ),
        TemplateSign(
            200, f"DeepSeek tool-call markers {CALLS_BEGIN} (llama.cpp: DeepSeek R1/V3 family)", (CALLS_BEGIN,)
        ),
    ),
    template="deepseek_v31.jinja",
)
