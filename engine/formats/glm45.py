"""GLM-4.5 / 4.6 / 4.7 tool calls: ``<tool_call>NAME`` then ``<arg_key>``/``<arg_value>`` pairs.

Wire format (content first, optional ``<think>`` reasoning before it; GLM-4.5/4.6 put each tag
on its own line, GLM-4.7 writes them without newlines, both are read)::

    CONTENT
    <tool_call>NAME
    <arg_key>KEY</arg_key>
    <arg_value>VALUE</arg_value>
    </tool_call>

As llama.cpp's GLM 4.5 handler and vLLM's ``glm45``/``glm47`` parsers read it:

* The name is the text after ``<tool_call>`` up to a newline, ``<arg_key>`` or ``</tool_call>``
  (``<tool_call>get_time</tool_call>`` is a call without arguments); it is final, and the call
  opens, only once one of those arrives (``<tool_call>get`` never names a call ``get``). A name
  with whitespace, ``<``, ``>``, ``{``, ``}`` or ``"`` in it, or longer than :data:`NAME_LIMIT`,
  is malformed: the opener is content.
* Each ``<arg_key>KEY</arg_key>`` followed (after whitespace) by ``<arg_value>`` starts a
  parameter: ``"KEY":`` goes out then, and the value streams as JSON typed by the request's
  schema (:class:`~callscope.engine.formats._kit.xml_values.TypedArguments`: a string is its raw text,
  escaped, with every space kept; another declared type its raw JSON; an undeclared one is held
  and written as JSON if it parses, else as a string; ``True``/``False``/``None`` become JSON).
* ``</arg_value>`` closes a value only when what follows it (after whitespace) is the next
  ``<arg_key>KEY</arg_key>`` (KEY one of the function's parameters when the schema lists them) or
  ``</tool_call>``, or the generation ends; otherwise it is value text.
* Whitespace between tags is layout; other text inside a call is content; a key that is not
  followed by ``<arg_value>`` is content. ``</tool_call>`` closes the call (``}``).
* Reasoning: ``<think>`` at the start (``Parser(tools, thinking=True)`` when the prompt ended
  with ``<think>``); tool calls inside reasoning are reasoning text. A stray ``</think>`` in
  content is dropped.
* Terminal parse: a call cut mid-value keeps its arguments so far; an opener whose name never
  completed produces no call; a held possible closer at the very end closes the value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import ArgumentRules, Envelope, ParameterRule, lit, parameter_blocks
from callscope.engine.formats._kit.marker_search import held_back_from
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.tagged_calls import BODY, VALUE, TaggedCallMachine
from callscope.engine.formats._kit.text_machine import TEXT, THINK_END, ThinkTextMachine
from callscope.engine.formats._kit.writing import dumps, think
from callscope.engine.formats._kit.xml_values import ValueEnd

TOOL_CALL = "<tool_call>"
TOOL_CALL_END = "</tool_call>"
ARG_KEY = "<arg_key>"
ARG_KEY_END = "</arg_key>"
ARGVALUE = "<arg_value>"
ARG_VALUE_END = "</arg_value>"

#: Longest function or parameter name accepted; a longer one is malformed (bounds the hold-back).
NAME_LIMIT = 256

_NAME_STOP = re.compile(r"[\n<]")
_BAD_NAME = re.compile(r'[\s<>{}"]')
_NAME_ENDS = (ARG_KEY, TOOL_CALL_END)
BODY_MARKERS = (ARG_KEY, TOOL_CALL_END)
_VALUE_END = ValueEnd(ARG_VALUE_END, ((ARG_KEY, ARG_KEY_END),), (TOOL_CALL_END,))

# states (besides ThinkTextMachine's start / reasoning / text)
_NAME = "name"  # after <tool_call>: the function name
_KEY = "key"  # after <arg_key>: the key up to </arg_key>
_KEY_END = "key_end"  # after </arg_key>: <arg_value> must follow


class Parser(TaggedCallMachine):
    """Incremental GLM-4.5 parser (see the module docstring for the rules)."""

    _text_markers = (TOOL_CALL, THINK_END)
    _value_end = _VALUE_END

    def __init__(self, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> None:
        super().__init__(tools, thinking)
        self._key = ""

    # End of generation (TaggedCallMachine._finish_in): a value closes or stays as far as it got;
    # _NAME: the name never completed, no call; _KEY/_KEY_END: the parameter never began;
    # BODY: layout or a half-typed marker. All dropped.

    # ---------------------------------------------------------------- states

    def _on_text_marker(self, marker: str) -> None:  # <tool_call>
        self._pending = marker
        self._name = ""
        self._state = _NAME

    def _on_name(self) -> bool:
        rest = self._read_name(_NAME_STOP)
        if rest is None:
            return False if len(self._name) <= NAME_LIMIT else self._release_opener(TEXT)
        name = self._name.strip()
        if rest[0] == "\n" and not name:  # a newline before the name is layout
            self._pending += "\n"
            self._buf = rest[1:]
            return True
        if rest[0] == "<":
            if not any(rest.startswith(m) for m in _NAME_ENDS):
                if any(m.startswith(rest) for m in _NAME_ENDS):
                    return False
                return self._release_opener(TEXT)
            if not name and rest.startswith(TOOL_CALL_END):  # <tool_call></tool_call>: an empty block
                self._pending = ""
                self._buf = rest[len(TOOL_CALL_END) :]
                return self._back_to_text()
        else:
            rest = rest[1:]  # the newline after the name
        if not name or len(self._name) > NAME_LIMIT or _BAD_NAME.search(name):
            return self._release_opener(TEXT)
        self._buf = rest
        self._open_typed_call(name)
        self._state = BODY
        return True

    def _on_body(self) -> bool:
        rest = self._take_layout()
        if not rest:
            return False
        if rest.startswith(ARG_KEY):
            self._marker_seen()
            self._pending = ARG_KEY
            self._name = ""
            self._buf = rest[len(ARG_KEY) :]
            self._state = _KEY
            return True
        if rest.startswith(TOOL_CALL_END):
            self._marker_seen()
            self._args.close()
            self._buf = rest[len(TOOL_CALL_END) :]
            return self._back_to_text()
        if ARG_KEY.startswith(rest) or TOOL_CALL_END.startswith(rest):
            return False
        return self._body_junk(rest, BODY_MARKERS)  # neither a parameter nor the closer: content

    def _on_key(self) -> bool:
        buf = self._buf
        end = buf.find(ARG_KEY_END)
        key = buf[: held_back_from(buf, (ARG_KEY_END,)) if end < 0 else end]
        if "\n" in key or "<" in key or len(key) > NAME_LIMIT or (end >= 0 and not key.strip()):
            return self._release_opener(BODY)  # not a key: content
        if end < 0:
            return False
        self._key = key.strip()
        self._pending += buf[: end + len(ARG_KEY_END)]
        self._buf = buf[end + len(ARG_KEY_END) :]
        self._state = _KEY_END
        return True

    def _on_key_end(self) -> bool:
        buf = self._buf
        rest = buf.lstrip()
        if rest.startswith(ARGVALUE):
            self._pending = ""
            self._args.key(self._key)
            self._buf = rest[len(ARGVALUE) :]
            self._state = VALUE
            return True
        if not rest or ARGVALUE.startswith(rest):
            return False
        self._pending += buf[: len(buf) - len(rest)]
        self._buf = rest
        return self._release_opener(BODY)  # a key without a value: content

    _handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        **ThinkTextMachine.think_handlers,
        _NAME: _on_name,
        BODY: _on_body,
        _KEY: _on_key,
        _KEY_END: _on_key_end,
        VALUE: TaggedCallMachine._on_value,
    }


# -------------------------------------------------------------------- spec


def _value(value: object) -> str:
    return value if isinstance(value, str) else dumps(value)


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Reasoning, content, then one ``<tool_call>`` per call, one tag per line as GLM-4.5's template writes them."""
    blocks = "".join(
        f"\n{TOOL_CALL}{name}\n"
        + "".join(f"{ARG_KEY}{key}{ARG_KEY_END}\n{ARGVALUE}{_value(value)}{ARG_VALUE_END}\n" for key, value in args.items())
        + TOOL_CALL_END
        for name, args in calls
    )
    if not content:
        blocks = blocks.removeprefix("\n")
    return think(reasoning) + content + blocks


def _parameter(param: ParameterRule) -> str:
    key = lit(f"{ARG_KEY}{param.key}{ARG_KEY_END}\n{ARGVALUE}")
    return f"{key} {param.value} {lit(ARG_VALUE_END + chr(10))}"


def grammar_call(name: str, args: ArgumentRules) -> str:
    """``<tool_call>NAME`` then one ``<arg_key>``/``<arg_value>`` pair per argument, as llama.cpp's grammar writes them."""
    return " ".join((lit(f"{TOOL_CALL}{name}\n"), parameter_blocks(args, _parameter), lit(TOOL_CALL_END)))


SPEC = FormatSpec(
    id="glm45",
    description="GLM-4.5/4.6/4.7: <tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>...</tool_call>",
    parser=Parser,
    thinking=True,
    markers=Markers(
        leak=(TOOL_CALL, TOOL_CALL_END, ARG_KEY, ARG_KEY_END, ARGVALUE, ARG_VALUE_END),
        markup=(r"</?think>",),
    ),
    write=write,
    envelopes=(Envelope(grammar_call, content=True),),
    signs=(
        TemplateSign(
            487,
            f"{ARG_KEY} and {ARGVALUE} tags (llama.cpp: GLM 4.5, checked before Hermes' {TOOL_CALL})",
            (ARG_KEY, ARGVALUE),
        ),
    ),
    template="glm45.jinja",
)
