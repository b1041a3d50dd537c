"""Moonshot Kimi K2 tool calls: raw JSON arguments between ``<|tool_call_...|>`` markers, the model's own ids.

Wire format (content first, optional ``<think>`` reasoning before it)::

    CONTENT<|tool_calls_section_begin|>
    <|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{"json": "args"}<|tool_call_end|>
    <|tool_call_begin|>functions.NAME2:1<|tool_call_argument_begin|>{...}<|tool_call_end|>
    <|tool_calls_section_end|>

As llama.cpp's Kimi K2 handler and vLLM's ``kimi_k2`` parser read it:

* The text between ``<|tool_call_begin|>`` and ``<|tool_call_argument_begin|>`` is the call's id,
  ``functions.NAME:IDX`` (``NAME:IDX`` without the prefix is accepted too). It is the model's own
  id: the call opens with it once ``<|tool_call_argument_begin|>`` arrives, so the streamed id is
  that id from the first delta on and never changes. NAME is the id without ``functions.`` and
  ``:IDX``. A bare counter (``0``) names the request's only tool when it has exactly one. Any
  other id (no ``:IDX``, a newline or ``<`` in it, longer than :data:`ID_LIMIT`) is malformed:
  the call's text is content.
* The arguments are the raw text up to ``<|tool_call_end|>``, streamed append-only; surrounding
  whitespace is layout; a half-typed closer is held back and never enters them. The first
  ``<|tool_call_end|>`` (or ``<|tool_calls_section_end|>``) ends them even inside a JSON string:
  the model writes them as special tokens.
* ``<|tool_calls_section_begin|>`` is optional (llama.cpp accepts a bare ``<|tool_call_begin|>``);
  text inside a section that is not a call is content, and so is text after it. Some Kimi K2
  checkpoints write the singular ``<|tool_call_section_begin|>`` / ``<|tool_call_section_end|>``
  instead; they mean the same (vLLM's ``kimi_k2`` parser accepts both).
* Reasoning: ``<think>`` at the start (``Parser(tools, thinking=True)`` when the prompt opened
  it), or again between calls (Kimi K2 Thinking interleaves them). Kimi may call tools at the
  end of its reasoning without closing it, so a section or call
  opener also ends reasoning and is read as a call (llama.cpp does the same). A stray ``</think>``
  or ``<|tool_calls_section_end|>`` in content is dropped.
* Terminal parse: a call cut mid-arguments keeps its arguments so far; an id never completed
  produces no call.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import ArgumentRules, CallsLayout, Envelope, lit
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import REASONING, TEXT, THINK, THINK_END, ThinkTextMachine
from callscope.engine.formats._kit.writing import dumps, think

SECTION_BEGIN = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
#: The singular spellings some checkpoints write for the section markers.
SECTION_BEGIN_SINGULAR = "<|tool_call_section_begin|>"
SECTION_END_SINGULAR = "<|tool_call_section_end|>"
SECTION_BEGINS = (SECTION_BEGIN, SECTION_BEGIN_SINGULAR)
SECTION_ENDS = (SECTION_END, SECTION_END_SINGULAR)
CALL_BEGIN = "<|tool_call_begin|>"
ARGUMENT_BEGIN = "<|tool_call_argument_begin|>"
CALL_END = "<|tool_call_end|>"

#: Longest call id accepted; a longer one is malformed (bounds the hold-back).
ID_LIMIT = 256

_ID_STOP = re.compile(r"[\n<]")
_ID = re.compile(r"(?:functions\.)?([^\s:]+(?::[^\s:]+)*):(\d+)")
_ARGS_CLOSERS = (CALL_END, *SECTION_ENDS)

_SECTION = "section"  # inside <|tool_calls_section_begin|>: a call, or the section's end
_ID_STATE = "id"
_ARGS = "args"


class Parser(ThinkTextMachine):
    """Incremental Kimi K2 parser (see the module docstring for the rules)."""

    _text_markers = (*SECTION_BEGINS, CALL_BEGIN, *SECTION_ENDS, THINK, THINK_END)
    _reasoning_exits = (*SECTION_BEGINS, CALL_BEGIN)

    def __init__(self, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> None:
        super().__init__(tools, thinking)
        self._in_section = False

    # End of generation (ThinkTextMachine._finish): in _SECTION a half-typed marker, in _ID_STATE no
    # complete id (no call), in _ARGS a half-typed closer and trailing layout: all dropped.

    def _name_of(self, call_id: str) -> str | None:
        """The function a call id names, or None when it names none."""
        match = _ID.fullmatch(call_id)
        if match is not None:
            return match.group(1)
        if call_id.isdigit() and len(self.tools) == 1:  # a bare counter: the only tool
            fn = self.tools[0].get("function", self.tools[0]) if isinstance(self.tools[0], dict) else None
            name = fn.get("name") if isinstance(fn, dict) else None
            return name if isinstance(name, str) and name else None
        return None

    # ---------------------------------------------------------------- states

    def _on_text_marker(self, marker: str) -> None:
        if marker in SECTION_BEGINS:
            self._in_section = True
            self._state = _SECTION
        elif marker == CALL_BEGIN:  # a call without a section
            self._in_section = False
            self._begin_id()
        elif marker == THINK:  # Kimi K2 Thinking reasons again between its calls
            self._state = REASONING
            self._skip_ws = True
        else:  # a stray section end: dropped
            self._skip_ws = True

    def _begin_id(self) -> None:
        self._pending = CALL_BEGIN
        self._name = ""
        self._state = _ID_STATE

    def _on_section(self) -> bool:
        rest = self._buf.lstrip()  # whitespace between calls is layout
        self._buf = rest
        if not rest:
            return False
        if rest.startswith(CALL_BEGIN):
            self._buf = rest[len(CALL_BEGIN) :]
            self._begin_id()
            return True
        end = next((e for e in SECTION_ENDS if rest.startswith(e)), None)
        if end is not None:
            self._buf = rest[len(end) :]
            return self._back_to_text()
        if any(marker.startswith(rest) for marker in (CALL_BEGIN, *SECTION_ENDS)):
            return False
        self._state = TEXT  # not a call: content
        return True

    def _on_id(self) -> bool:
        rest = self._read_name(_ID_STOP)
        if rest is None:  # wait for the argument marker, unless the id is already too long
            return False if len(self._name) <= ID_LIMIT else self._release_opener(TEXT)
        if rest.startswith(ARGUMENT_BEGIN):
            call_id = self._name.strip()
            name = self._name_of(call_id) if len(self._name) <= ID_LIMIT else None
            if name is None:
                return self._release_opener(TEXT)
            self._open_raw_call(name, rest[len(ARGUMENT_BEGIN) :], call_id)
            self._state = _ARGS
            return True
        if ARGUMENT_BEGIN.startswith(rest):
            return False
        return self._release_opener(TEXT)

    def _on_args(self) -> bool:
        marker = self._raw_arguments(_ARGS_CLOSERS)
        if marker is None:
            return False
        if marker == CALL_END and self._in_section:
            self._state = _SECTION
            return True
        return self._back_to_text()

    _handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        **ThinkTextMachine.think_handlers,
        _SECTION: _on_section,
        _ID_STATE: _on_id,
        _ARGS: _on_args,
    }


# -------------------------------------------------------------------- spec


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Reasoning, content, then one section of calls with ids ``functions.NAME:i``, as Kimi's template writes them."""
    if not calls:
        return think(reasoning) + content
    body = "".join(
        f"{CALL_BEGIN}functions.{name}:{i}{ARGUMENT_BEGIN}{dumps(args)}{CALL_END}" for i, (name, args) in enumerate(calls)
    )
    return think(reasoning) + content + SECTION_BEGIN + body + SECTION_END


def grammar_call(name: str, args: ArgumentRules) -> str:
    """``<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>``."""
    head = lit(f"{CALL_BEGIN}functions.{name}:")
    return f"{head} [0-9]{{1,2}} {lit(ARGUMENT_BEGIN)} {args.json()} {lit(CALL_END)}"


SPEC = FormatSpec(
    id="kimi_k2",
    description="Kimi K2: <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}...",
    parser=Parser,
    thinking=True,
    markers=Markers(leak=(*SECTION_BEGINS, *SECTION_ENDS, CALL_BEGIN, ARGUMENT_BEGIN, CALL_END), markup=(r"</?think>",)),
    write=write,
    envelopes=(
        Envelope(grammar_call, layout=CallsLayout(open=lit(SECTION_BEGIN), close=lit(SECTION_END)), content=True),
    ),
    signs=(
        TemplateSign(
            893,
            f"tool_declare system role and {SECTION_BEGIN} (llama.cpp: Kimi K2)",
            ("<|im_system|>tool_declare<|im_middle|>", SECTION_BEGIN),
        ),
        TemplateSign(894, f"{SECTION_BEGIN} marker (llama.cpp: Kimi K2)", (SECTION_BEGIN,)),
    ),
    template="kimi_k2.jinja",
)
