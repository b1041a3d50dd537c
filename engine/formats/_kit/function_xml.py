"""The ``<function=NAME><parameter=KEY>VALUE</parameter></function>`` family, inside a format's block tags.

Qwen3-Coder / Qwen3.5 write it inside ``<tool_call>`` ... ``</tool_call>``,
Seed-OSS inside ``<seed:tool_call>`` ... ``</seed:tool_call>``; the rest is the
same, so a format module is this machine with its block tags and reasoning
tags as class attributes (:class:`FunctionXmlMachine`). One or more blocks,
content before them, optional reasoning first::

    BLOCK_OPEN <function=NAME> <parameter=KEY> VALUE </parameter> ... </function> ... BLOCK_CLOSE

The JSON arguments are built by :class:`~callscope.engine.formats._kit.xml_values.TypedArguments`
(``{`` and the name once ``<function=NAME>`` is complete, ``"KEY":`` once
``<parameter=KEY>`` is complete, the value typed by the request's schema as
it arrives, ``}`` at ``</function>``).

Whitespace: one newline (``\\n`` or ``\\r\\n``) right after ``<parameter=KEY>`` and one right
before ``</parameter>`` belong to the layout, not to the value (llama.cpp's grammar writes
``>\\n`` and ``\\n</parameter>\\n``). Whitespace between parameters, after the block opener and
between blocks is layout too; leading whitespace of content after a block or after the
reasoning closer is dropped.

Decided rules for text that does not follow the format (tested):

* ``</parameter>`` closes a value only when what follows it (after whitespace) is
  ``</function>``, the block closer, or ``<parameter=NAME>`` where NAME is one of the
  function's parameters when the schema lists them (any name otherwise), or the end of the
  generation; otherwise it is value text (a value may quote the closer, e.g. code that writes
  XML). ``</function>`` inside a value is value text.
* The block opener followed by anything but ``<function=`` (after whitespace) is content,
  markers included. A ``<function=NAME>`` in text without the block opener is a call all
  the same (a model that skipped ``<tool_call>``, as vLLM reads it); what follows its
  ``</function>`` is text again unless the block closer comes. A function or parameter name with a newline or ``<`` in it, an empty name
  or one longer than :data:`NAME_LIMIT` is malformed: its text goes to content.
* Text inside a function that is neither a parameter nor the closer is content.
* The block closer without ``</function>`` closes the call; a block without its closer ends
  at the first non-layout text, which is content.
* A stray reasoning closer in content is dropped (the generation started inside reasoning but
  the parser was not told so: the text before it already went out as content and stays there).
* Terminal parse: held-back text that turned out not to be a marker is released to content or
  reasoning; a half-typed closer never enters arguments; a call truncated mid-value keeps the
  arguments so far (a held value is written as far as it got); a truncated opener whose name
  never completed produces no call.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import ArgumentRules, CallBuilder, ParameterRule, lit, parameter_blocks
from callscope.engine.formats._kit.tagged_calls import BODY, PARAM_START, VALUE, TaggedCallMachine
from callscope.engine.formats._kit.text_machine import TEXT, ThinkTextMachine
from callscope.engine.formats._kit.xml_values import ValueEnd

FUNCTION = "<function="
FUNCTION_END = "</function>"
PARAMETER = "<parameter="
PARAMETER_END = "</parameter>"

#: Longest function or parameter name accepted; a longer one is malformed (bounds the hold-back).
NAME_LIMIT = 256

_NAME_STOP = re.compile(r"[>\n<]")
#: The name of a call written without its block opener: an identifier, so prose that mentions
#: ``<function=...>`` is less likely to be taken for a call.
_BARE_NAME = re.compile(r"[A-Za-z0-9_.:\-]+")

# parser states (besides ThinkTextMachine's start / reasoning / text)
_OPEN = "open"  # after the block opener: expecting <function=
_FN_NAME = "fn_name"
_PARAM_NAME = "param_name"
_BLOCK_NEXT = "block_next"  # after </function>: the block closer or another <function=


class FunctionXmlMachine(TaggedCallMachine):
    """Incremental parser of ``<function=...>`` calls inside ``block_open`` ... ``block_close``."""

    #: The tags around one or more functions (Qwen3-Coder: ``<tool_call>``).
    block_open: ClassVar[str] = "<tool_call>"
    block_close: ClassVar[str] = "</tool_call>"
    #: Control tokens dropped wherever they appear in content (Seed-OSS's ``<seed:eos>``).
    stray_markers: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._text_markers = (cls.block_open, cls._think_close, FUNCTION, *cls.stray_markers)
        cls._body_markers = (PARAMETER, FUNCTION_END, cls.block_close)
        cls._block_closes = (cls.block_close,)
        cls._value_end = ValueEnd(
            PARAMETER_END, ((PARAMETER, ">"),), (FUNCTION_END, cls.block_close), ("\n", "\r\n")
        )

    _body_markers: ClassVar[tuple[str, ...]]
    _layout_newlines = True
    _call_opener = FUNCTION

    def __init__(self, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> None:
        super().__init__(tools, thinking)
        self._bare = False  # the open function came without the block opener

    # End of generation (TaggedCallMachine._finish_in): a value closes or stays as far as it got;
    # in _OPEN/_FN_NAME/_PARAM_NAME a name never completed (nothing to show); elsewhere layout
    # or a half-typed marker, dropped.

    # ---------------------------------------------------------------- states
    # Each handler consumes what the buffer decides and returns True when it made progress
    # (the loop runs again), False when it needs more text.

    def _on_text_marker(self, marker: str) -> None:
        if marker == FUNCTION:  # a call without its block opener: read it all the same
            self._pending = marker
            self._bare = True
            self._begin_name(self._buf, _FN_NAME)
            return
        if marker != self.block_open:  # a stray control token: dropped
            return
        self._pending = marker
        self._bare = False
        self._state = _OPEN

    def _begin_call(self, rest: str) -> None:
        self._pending += FUNCTION
        self._begin_name(rest[len(FUNCTION) :], _FN_NAME)

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
        if done and not (self._bare and _BARE_NAME.fullmatch(self._name) is None):
            self._open_typed_call(self._name)
            self._state = BODY
            return True
        if done:
            self._pending += ">"  # the name's terminator was consumed with it
        return self._release_opener(TEXT)

    def _on_fn_body(self) -> bool:
        rest = self._take_layout()
        if not rest:
            return False
        for marker in self._body_markers:
            if rest.startswith(marker):
                self._marker_seen()
                rest = rest[len(marker) :]
                if marker == PARAMETER:
                    self._pending = PARAMETER
                    self._begin_name(rest, _PARAM_NAME)
                    return True
                self._args.close()
                self._buf = rest
                if marker == FUNCTION_END:
                    self._state = _BLOCK_NEXT
                    return True
                return self._back_to_text()  # the block closer without </function>
            if marker.startswith(rest):
                return False
        return self._body_junk(rest, self._body_markers)  # neither a parameter nor the closer: content

    def _on_param_name(self) -> bool:
        done = self._scan_name()
        if done is None:
            return False
        if done:
            self._pending = ""
            self._args.key(self._name)
            self._state = PARAM_START
            return True
        return self._release_opener(BODY)

    _handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        **ThinkTextMachine.think_handlers,
        _OPEN: TaggedCallMachine._on_open,
        _FN_NAME: _on_fn_name,
        BODY: _on_fn_body,
        _PARAM_NAME: _on_param_name,
        PARAM_START: TaggedCallMachine._on_param_start,
        VALUE: TaggedCallMachine._on_value,
        _BLOCK_NEXT: TaggedCallMachine._on_block_next,
    }


def function_call_grammar(block_open: str, block_close: str, value_newlines: bool) -> CallBuilder:
    """The forced-call syntax: the block, ``<function=NAME>``, one ``<parameter=KEY>`` per argument.

    ``value_newlines``: the value sits on its own lines (Qwen3-Coder's layout),
    else right between the tags (Seed-OSS's).
    """
    key_end, value_end = (">\n", "\n" + PARAMETER_END + "\n") if value_newlines else (">", PARAMETER_END + "\n")

    def parameter(param: ParameterRule) -> str:
        return " ".join((lit(PARAMETER + param.key + key_end), param.value, lit(value_end)))

    def build(name: str, args: ArgumentRules) -> str:
        head = lit(block_open + "\n" + FUNCTION + name + ">\n")
        return " ".join((head, parameter_blocks(args, parameter), lit(FUNCTION_END + "\n" + block_close)))

    return build


__all__ = [
    "FUNCTION",
    "FUNCTION_END",
    "NAME_LIMIT",
    "PARAMETER",
    "PARAMETER_END",
    "FunctionXmlMachine",
    "function_call_grammar",
]
