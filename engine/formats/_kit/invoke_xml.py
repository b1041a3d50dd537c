"""The ``<invoke name="NAME"><parameter name="KEY">VALUE</parameter></invoke>`` family, inside block tags.

MiniMax-M2 writes it inside ``<minimax:tool_call>`` ... ``</minimax:tool_call>``; DeepSeek V3.2
writes the same shape with DSML tags (``<｜DSML｜invoke name="...">``, ``<｜DSML｜parameter
name="..." string="true">``) inside ``<｜DSML｜function_calls>``. A format module is
:class:`InvokeXmlMachine` with its tags as class attributes. One or more blocks, each with one
or more invokes, content before them, optional reasoning first::

    <minimax:tool_call>
    <invoke name="NAME">
    <parameter name="KEY">VALUE</parameter>
    </invoke>
    </minimax:tool_call>

Rules (tested per format):

* The call opens, named, once ``<invoke name="NAME">`` is complete (a name with a newline, ``<``
  or ``>`` in it, empty or longer than :data:`NAME_LIMIT` is malformed: its text is content).
* ``<parameter name="KEY">`` starts a parameter: ``"KEY":`` goes out and the value streams as
  JSON (:class:`~callscope.engine.formats._kit.xml_values.TypedArguments`). The request's schema types it
  when it declares KEY (a string is its raw text, another single type its raw JSON, a union is
  held and written as JSON if it parses, else as a string), whatever a ``string="..."``
  attribute says (vLLM coerces to the schema the same way); a parameter the schema does not
  declare is a string when marked ``string="true"``, else held and written as JSON if it
  parses. Python's ``True``/``False``/``None`` become JSON.
* The parameter's closer closes a value only when what follows it (after whitespace) is the
  next ``<parameter name="KEY"`` (KEY one of the function's parameters when the schema lists
  them), ``</invoke>`` or the block closer, or the generation ends; otherwise it is value text.
* ``</invoke>`` (or the block closer, when ``</invoke>`` is missing) closes the call (``}``).
  Whitespace between tags is layout; other text inside an invoke is content; a block opener
  not followed by ``<invoke`` is content; an unclosed block ends at the first text that is not
  another invoke, which is content.
* ``_layout_newlines``: one newline right after the parameter's opening tag and one right
  before its closer are layout (MiniMax); otherwise the value is exactly the text between them.
* Reasoning and stray closers: as :class:`~callscope.engine.formats._kit.text_machine.ThinkTextMachine`
  (``_reasoning_exits`` lets a format open its calls right inside reasoning).
* Terminal parse: a call cut mid-value keeps its arguments so far; an opener whose name never
  completed produces no call.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import ArgumentRules, ParameterRule, lit, parameter_blocks
from callscope.engine.formats._kit.spec import Call
from callscope.engine.formats._kit.tagged_calls import BODY, PARAM_START, VALUE, TaggedCallMachine
from callscope.engine.formats._kit.text_machine import TEXT, ThinkTextMachine
from callscope.engine.formats._kit.writing import dumps
from callscope.engine.formats._kit.xml_values import STRING, ValueEnd

#: Longest function or parameter name (with its attributes) accepted; a longer one is malformed.
NAME_LIMIT = 256

_NAME_STOP = re.compile(r'["\n<>]')
_HEAD_STOP = re.compile(r"[>\n<]")
_ATTRIBUTES = re.compile(r'\s*(?:string\s*=\s*"(true|false)"\s*)?')

# states (besides ThinkTextMachine's start / reasoning / text)
_OPEN = "open"  # after a block opener: an invoke must follow
_INVOKE = "invoke"  # after <invoke name=": the name
_PARAM = "param"  # after <parameter name=": the key and attributes up to >
_BLOCK_NEXT = "block_next"  # after </invoke>: another invoke or the block closer


class InvokeXmlMachine(TaggedCallMachine):
    """Incremental parser of ``<invoke>`` calls inside one of ``block_opens`` ... ``block_closes``."""

    block_opens: ClassVar[tuple[str, ...]] = ()
    block_closes: ClassVar[tuple[str, ...]] = ()
    invoke: ClassVar[str] = '<invoke name="'
    invoke_end: ClassVar[str] = "</invoke>"
    parameter: ClassVar[str] = '<parameter name="'
    parameter_end: ClassVar[str] = "</parameter>"
    #: The format marks each value ``string="true"`` or ``string="false"`` (DSML); for its writer and grammar.
    string_attribute: ClassVar[bool] = False

    _body_markers: ClassVar[tuple[str, ...]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._text_markers = (*cls.block_opens, cls._think_close)
        cls._body_markers = (cls.parameter, cls.invoke_end, *cls.block_closes)
        cls._call_opener, cls._block_closes = cls.invoke, cls.block_closes
        layout = ("\n", "\r\n") if cls._layout_newlines else ()
        cls._value_end = ValueEnd(cls.parameter_end, ((cls.parameter, '"'),), (cls.invoke_end, *cls.block_closes), layout)

    def __init__(self, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> None:
        super().__init__(tools, thinking)

    # End of generation (TaggedCallMachine._finish_in): a value closes or stays as far as it got;
    # in _OPEN/_INVOKE/_PARAM a name never completed (nothing to show); elsewhere layout or a
    # half-typed marker, dropped.

    # ---------------------------------------------------------------- states

    def _on_text_marker(self, marker: str) -> None:  # a block opener
        self._pending = marker
        self._state = _OPEN

    def _begin_call(self, rest: str) -> None:
        self._pending += self.invoke
        self._buf = rest[len(self.invoke) :]
        self._name = ""
        self._state = _INVOKE

    def _on_invoke(self) -> bool:
        rest = self._read_name(_NAME_STOP)
        if rest is None:
            return False if len(self._name) <= NAME_LIMIT else self._release_opener(TEXT)
        name = self._name.strip()
        if rest[0] != '"' or not name or len(self._name) > NAME_LIMIT:
            return self._release_opener(TEXT)
        tail = rest[1:].lstrip()
        if not tail:
            return False
        if tail[0] != ">":
            return self._release_opener(TEXT)
        self._buf = tail[1:]
        self._open_typed_call(name)
        self._state = BODY
        return True

    def _on_body(self) -> bool:
        rest = self._take_layout()
        if not rest:
            return False
        for marker in self._body_markers:
            if rest.startswith(marker):
                self._marker_seen()
                self._buf = rest[len(marker) :]
                if marker == self.parameter:
                    self._pending = marker
                    self._name = ""
                    self._state = _PARAM
                    return True
                self._args.close()
                if marker == self.invoke_end:
                    self._state = _BLOCK_NEXT
                    return True
                return self._back_to_text()  # the block closer without </invoke>
            if marker.startswith(rest):
                return False
        return self._body_junk(rest, self._body_markers)  # neither a parameter nor the closer: content

    def _on_param(self) -> bool:
        buf = self._buf
        found = _HEAD_STOP.search(buf)
        if found is None:
            return False if len(buf) <= NAME_LIMIT else self._release_opener(BODY)
        head = buf[: found.start()]
        quote = head.find('"')
        key = head[:quote].strip() if quote >= 0 else ""
        attributes = _ATTRIBUTES.fullmatch(head, quote + 1) if quote >= 0 else None
        if found.group() != ">" or not key or attributes is None or len(head) > NAME_LIMIT:
            return self._release_opener(BODY)  # not a parameter: content
        self._pending = ""
        self._buf = buf[found.end() :]
        self._args.key(key, self._mode(key, attributes.group(1)))
        self._state = PARAM_START
        return True

    def _mode(self, key: str, string: str | None) -> str | None:
        """How the value is written: by the schema when it declares the parameter, else by ``string="..."``.

        The schema wins (vLLM coerces a ``string="true"`` 42 to the integer the
        schema asks for); a parameter it does not declare is a string when
        marked ``string="true"``, else JSON if it parses.
        """
        if self._args.declares(key):
            return None
        return STRING if string == "true" else None

    # ---------------------------------------------------------------- writing

    @classmethod
    def invokes_text(cls, calls: list[Call]) -> str:
        """The invokes of ``calls``, one tag per line, strings bare and other values as JSON, as the templates write them."""
        out = []
        for name, args in calls:
            out.append(f'{cls.invoke}{name}">\n')
            for key, value in args.items():
                text = value if isinstance(value, str) else dumps(value)
                out.append(f'{cls.parameter}{key}"{cls._attributes(isinstance(value, str))}>{text}{cls.parameter_end}\n')
            out.append(f"{cls.invoke_end}\n")
        return "".join(out)

    @classmethod
    def grammar_call(cls, name: str, args: ArgumentRules) -> str:
        """The forced-call syntax of one invoke: ``<invoke name="NAME">``, one parameter line per argument."""

        def parameter(param: ParameterRule) -> str:
            head = lit(f'{cls.parameter}{param.key}"{cls._attributes(param.kind == "string")}>')
            return " ".join((head, param.value, lit(cls.parameter_end + "\n")))

        return " ".join((lit(f'{cls.invoke}{name}">\n'), parameter_blocks(args, parameter), lit(cls.invoke_end)))

    @classmethod
    def _attributes(cls, is_string: bool) -> str:
        if not cls.string_attribute:
            return ""
        return ' string="true"' if is_string else ' string="false"'

    _handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        **ThinkTextMachine.think_handlers,
        _OPEN: TaggedCallMachine._on_open,
        _INVOKE: _on_invoke,
        BODY: _on_body,
        _PARAM: _on_param,
        PARAM_START: TaggedCallMachine._on_param_start,
        VALUE: TaggedCallMachine._on_value,
        _BLOCK_NEXT: TaggedCallMachine._on_block_next,
    }


__all__ = ["NAME_LIMIT", "InvokeXmlMachine"]
