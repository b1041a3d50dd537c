"""DeepSeek R1 / V3 tool calls: the function's name on the separator's line, its JSON in a code fence.

Wire format (``｜`` is U+FF5C, ``▁`` is U+2581; content first, R1's ``<think>`` reasoning before it)::

    CONTENT<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
    ```json
    {"json": "args"}
    ```<｜tool▁call▁end｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME2
    ```json
    {...}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

As llama.cpp's DeepSeek R1 handler and vLLM's ``deepseek_v3`` parser read it:

* The block opener may be spelt like V3.1's (``<｜tool_calls_begin｜>``, ``<｜tool▁calls｜>``, ...),
  and ``<｜tool▁call▁begin｜>`` is optional. The call type before ``<｜tool▁sep｜>`` (``function``)
  is at most :data:`NAME_LIMIT` characters without newline or ``<``.
* The name is the rest of the separator's line; the call opens, named, at that newline (a name
  with ``<`` in it, empty or longer than :data:`NAME_LIMIT` is malformed: the opener is content).
  A code fence (three backticks and a language, ``json``) may follow on the next line; it is layout.
* The arguments are the raw text after the fence up to ``<｜tool▁call▁end｜>``, streamed
  append-only, without the closing fence and the whitespace around it (llama.cpp's close regex is
  ``\\s*```\\s*<｜tool▁call▁end｜>``): trailing whitespace and backticks are held back until the
  next text shows they are not the closing fence. The first ``<｜tool▁call▁end｜>`` (or
  ``<｜tool▁calls▁end｜>``) ends the arguments even inside a JSON string: it is a special token.
* Text after ``<｜tool▁calls▁end｜>`` is content (leading whitespace dropped); text inside a block
  that is not a call is content.
* Reasoning: ``<think>`` at the start (``Parser(tools, thinking=True)`` when the prompt ended with
  ``<think>``, as R1's template does); calls inside reasoning are reasoning text. A stray
  ``</think>`` in content is dropped.
* Terminal parse: held-back text that is not a marker is released; a call truncated mid-arguments
  keeps the arguments so far (a trailing fence is dropped); an opener without a complete name
  produces no call.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import CallsLayout, Envelope, around_arguments, lit
from callscope.engine.formats._kit.marker_search import find_first, held_back_from
from callscope.engine.formats._kit.spec import Call, FormatSpec, TemplateSign
from callscope.engine.formats._kit.text_machine import TEXT, THINK_END, ThinkTextMachine
from callscope.engine.formats._kit.writing import dumps, think
from callscope.engine.formats.deepseek_v31 import (
    CALL_BEGIN,
    CALL_END,
    CALLS_BEGIN,
    CALLS_BEGIN_VARIANTS,
    CALLS_END,
    SEP,
)
from callscope.engine.formats.deepseek_v31 import SPEC as V31_SPEC

FUNCTION = "function"
FENCE = "```"
JSON_FENCE = "```json\n"

#: Longest call type or function name accepted; a longer one is malformed (bounds the hold-back).
NAME_LIMIT = 256

_ARGS_CLOSERS = (CALL_END, CALLS_END)
_TYPE_STOP = re.compile(r"[\n<]")
_NAME_STOP = re.compile(r"[\n<]")
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\r?\n")
_FENCE_LIMIT = 32  # longest opening fence line waited for
_TAIL_CHARS = frozenset("` \t\r\n")

_BLOCK = "block"  # inside the block: a call, or the block's end
_TYPE = "type"  # the call type up to <｜tool▁sep｜>
_NAME = "name"  # the name up to the end of its line
_FENCE_STATE = "fence"  # after the name's line: an optional code fence
_ARGS = "args"


def _fence_tail(text: str) -> int:
    """Index from which ``text`` might be the closing fence: whitespace, up to three backticks, whitespace."""
    i = len(text)
    while i and text[i - 1].isspace():
        i -= 1
    ticks = 0
    while i and ticks < 3 and text[i - 1] == "`":
        i -= 1
        ticks += 1
    if ticks:
        while i and text[i - 1].isspace():
            i -= 1
    return i


def _without_fence(text: str) -> str:
    """The arguments before their closer: the closing fence and the whitespace around it removed."""
    body = text.rstrip()
    if body.endswith(FENCE):
        body = body[: -len(FENCE)].rstrip()
    return body


class Parser(ThinkTextMachine):
    """Incremental DeepSeek R1/V3 parser (see the module docstring for the rules)."""

    _text_markers = CALLS_BEGIN_VARIANTS + (THINK_END,)

    def __init__(self, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> None:
        super().__init__(tools, thinking)

    def _finish_in(self, state: str, buf: str) -> None:
        if state == _ARGS:  # truncated mid-arguments: the held tail, less a closing fence and layout
            self._say_arguments(_without_fence(buf[: held_back_from(buf, _ARGS_CLOSERS)]))
        # _BLOCK: a half-typed marker; _TYPE/_NAME: no complete name (no call); _FENCE_STATE: layout.

    # ---------------------------------------------------------------- states

    def _on_text_marker(self, marker: str) -> None:
        self._state = _BLOCK

    def _on_block(self) -> bool:
        rest = self._buf.lstrip()  # whitespace between calls is layout
        self._buf = rest
        if not rest:
            return False
        if rest.startswith(CALL_BEGIN):
            self._begin(CALL_BEGIN, rest[len(CALL_BEGIN) :])
            return True
        if rest.startswith(CALLS_END):
            self._buf = rest[len(CALLS_END) :]
            return self._back_to_text()
        if CALL_BEGIN.startswith(rest) or CALLS_END.startswith(rest):
            return False
        if rest[0] != "<":  # a call without <｜tool▁call▁begin｜>, as llama.cpp accepts
            self._begin("", rest)
            return True
        self._state = TEXT  # not a call: content
        return True

    def _begin(self, opener: str, rest: str) -> None:
        self._pending = opener
        self._name = ""
        self._buf = rest
        self._state = _TYPE

    def _on_type(self) -> bool:
        rest = self._read_name(_TYPE_STOP)
        if rest is None:
            return False if len(self._name) <= NAME_LIMIT else self._release_opener(TEXT)
        if rest.startswith(SEP) and self._name.strip() and len(self._name) <= NAME_LIMIT:
            self._pending += SEP
            self._name = ""
            self._buf = rest[len(SEP) :]
            self._state = _NAME
            return True
        if SEP.startswith(rest):
            return False
        return self._release_opener(TEXT)

    def _on_name(self) -> bool:
        rest = self._read_name(_NAME_STOP)
        if rest is None:
            return False if len(self._name) <= NAME_LIMIT else self._release_opener(TEXT)
        name = self._name.strip()
        if rest[0] != "\n" or not name or len(self._name) > NAME_LIMIT:
            return self._release_opener(TEXT)
        self._pending = ""
        self._call = self._open_call()
        self._name_call(self._call, name)
        self._buf = rest[1:]
        self._state = _FENCE_STATE
        return True

    def _on_fence(self) -> bool:
        buf = self._buf
        rest = buf.lstrip(" \t")
        if not rest:
            return False
        fence = _FENCE.match(rest)
        if fence is not None:
            self._buf = rest[fence.end() :]
        elif FENCE.startswith(rest[:3]) and "\n" not in rest and len(rest) <= _FENCE_LIMIT:
            return False  # maybe a fence still being written
        self._ws = ""
        self._skip_ws = True
        self._state = _ARGS
        return True

    def _on_args(self) -> bool:
        buf = self._buf
        found = find_first(buf, _ARGS_CLOSERS)
        if found is None:
            cut = held_back_from(buf, _ARGS_CLOSERS)
            keep = _fence_tail(buf[:cut]) if cut and buf[cut - 1] in _TAIL_CHARS else cut
            self._say_arguments(buf[:keep])
            self._buf = buf[keep:]
            return False
        hit, closer = found
        self._say_arguments(_without_fence(buf[:hit]))
        self._buf = buf[hit + len(closer) :]
        self._ws = ""  # whitespace before the closing fence is layout
        self._skip_ws = False
        if closer == CALL_END:
            self._state = _BLOCK
            return True
        return self._back_to_text()

    _handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        **ThinkTextMachine.think_handlers,
        _BLOCK: _on_block,
        _TYPE: _on_type,
        _NAME: _on_name,
        _FENCE_STATE: _on_fence,
        _ARGS: _on_args,
    }


# -------------------------------------------------------------------- spec


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """``<think>`` reasoning, content, then one block of fenced calls, as DeepSeek R1's template writes them."""
    if not calls:
        return think(reasoning) + content
    body = "".join(
        f"{CALL_BEGIN}{FUNCTION}{SEP}{name}\n{JSON_FENCE}{dumps(args)}\n{FENCE}{CALL_END}" for name, args in calls
    )
    return think(reasoning) + content + CALLS_BEGIN + body + CALLS_END


SPEC = FormatSpec(
    id="deepseek_v3",
    description="DeepSeek R1/V3: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME ```json {json} ```...",
    parser=Parser,
    thinking=True,
    markers=V31_SPEC.markers,  # the same special tokens
    write=write,
    envelopes=(
        Envelope(
            around_arguments(lambda name: f"{CALL_BEGIN}{FUNCTION}{SEP}{name}\n{JSON_FENCE}", f"\n{FENCE}{CALL_END}"),
            layout=CallsLayout(open=lit(CALLS_BEGIN), close=lit(CALLS_END)),
            content=True,
        ),
    ),
    signs=(
        TemplateSign(
            195,
            f"DeepSeek tool-call markers {CALLS_BEGIN} with ```json fenced arguments (llama.cpp: DeepSeek R1)",
            (CALLS_BEGIN, "```json"),
        ),
    ),
    template="deepseek_v3.jinja",
)
