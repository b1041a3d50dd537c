"""Functionary v3.2 tool calls: one segment per recipient, ``>>>get_weather\\n{...}`` and ``>>>all\\n`` for text.

Grammar (llama.cpp's Functionary v3.2 handler; Functionary's own prompt ends
with ``>>>``, so the first recipient comes without it)::

    [>>>] segment (>>> segment)*
    segment := all\\n content             text for the user, up to the next >>>
             | NAME\\n [ws] {...} [ws]   a call: the JSON object is its arguments
             | python\\n code            a call to python: everything after is code, {"code": ...}

The call opens at its ``{`` with its name complete and the model's object
streams verbatim as the arguments (see
:class:`~callscope.engine.formats._kit.json_call_machine.ArgumentsValueScan`). Raw
``python`` code streams as the JSON of ``{"code": "..."}``: the head at
once, every character escaped as it arrives, ``"}`` at the end of generation.
A recipient header is never content.

Bad input, decided on the text alone: a recipient that is not a name followed
by a newline, or a name whose newline is not followed by ``{``, is content,
verbatim (``a >>> b`` in prose stays as written); a syntax error inside the object ends the call
with its arguments so far and what follows is content. End of generation: a
held recipient is content; a call cut mid-way keeps its arguments so far.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import ArgumentRules, CallsLayout, CannotForce, Envelope, lit
from callscope.engine.formats._kit.json_call_machine import ArgumentsValueMachine
from callscope.engine.formats._kit.python_args import json_string_body
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import PieceMachine, skip_space
from callscope.engine.formats._kit.writing import dumps

PROMPT = ">>>"
ALL = "all"
PYTHON = "python"

_RECIPIENT = re.compile(r"[A-Za-z0-9_.\-]*")
_LONGEST_NAME = 256

_START, _RECIPIENT_NAME, _OBJECT, _CONTENT, _ARGS, _CODE, _AFTER_CALL = range(7)


class Parser(ArgumentsValueMachine):
    """Incremental Functionary v3.2 parser (see the module docstring for the rules)."""

    _content_state = _CONTENT
    _after_arguments = _AFTER_CALL

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        super().__init__(tools, _START)
        self._held = ""  # the recipient header (``>>>NAME\\n`` and whitespace) not yet shown to be one
        self._name = ""
        self._header = 0  # length of the header in ``_held`` (what follows it is whitespace)
        self._index = -1

    def _finish(self) -> None:
        pending = self._take_pending()
        if self._state == _ARGS:
            self._truncate_arguments()
        elif self._state == _CODE:
            self._arguments(self._index, '"}')
        elif self._state in (_RECIPIENT_NAME, _OBJECT):
            self._content(self._held + pending)
        elif self._state in (_START, _CONTENT):
            self._content(pending)

    # ------------------------------------------------------------ recipients

    def _at_start(self, text: str, pos: int) -> tuple[str, int]:
        rest = text[pos:]
        if rest.startswith(PROMPT):
            return self._begin_recipient(PROMPT, text, pos + len(PROMPT))
        if PROMPT.startswith(rest):
            self._pending = rest
            return text, len(text)
        return self._begin_recipient("", text, pos)  # the prompt ended with >>>

    def _begin_recipient(self, held: str, text: str, pos: int) -> tuple[str, int]:
        self._state = _RECIPIENT_NAME
        self._held = held
        self._name = ""
        return text, pos

    def _in_recipient(self, text: str, pos: int) -> tuple[str, int]:
        end = _RECIPIENT.match(text, pos).end()
        self._name += text[pos:end]
        self._held += text[pos:end]
        if len(self._name) > _LONGEST_NAME:  # no recipient is that long: prose
            return self._not_a_segment(text, end)
        if end >= len(text):
            return text, end
        if text[end] != "\n" or not self._name:
            return self._not_a_segment(text, end)
        self._held += "\n"
        if self._name == ALL:
            self._held = ""
            self._state = _CONTENT
        else:
            self._state = _OBJECT
            self._header = len(self._held)
        return text, end + 1

    def _at_object(self, text: str, pos: int) -> tuple[str, int]:
        start = skip_space(text, pos)
        self._held += text[pos:start]
        if start >= len(text):
            return text, start
        if text[start] == "{":
            self._open(self._name)
            self._start_arguments(self._index, _ARGS)
            return text, start
        if self._name == PYTHON:  # raw code: the whitespace after the header is its first text
            indent = self._held[self._header :]
            self._open(PYTHON)
            self._arguments(self._index, '{"code": "' + json_string_body(indent))
            self._state = _CODE
            return text, start
        return self._not_a_segment(text, start)

    def _open(self, name: str) -> None:
        self._index = self._open_call()
        self._name_call(self._index, name)
        self._held = ""

    def _not_a_segment(self, text: str, pos: int) -> tuple[str, int]:
        """Not a recipient header: its text is content, verbatim, and so is what follows, up to ``>>>``."""
        self._content(self._held)
        self._held = ""
        self._state = _CONTENT
        return text, pos

    # ------------------------------------------------------------ segments

    def _in_content(self, text: str, pos: int) -> tuple[str, int]:
        at = self._content_until(text, pos, PROMPT)
        if at < 0:
            return text, len(text)
        return self._begin_recipient(PROMPT, text, at + len(PROMPT))

    def _in_code(self, text: str, pos: int) -> tuple[str, int]:
        self._arguments(self._index, json_string_body(text[pos:]))
        return text, len(text)

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _START: _at_start,
        _RECIPIENT_NAME: _in_recipient,
        _OBJECT: _at_object,
        _CONTENT: _in_content,
        _ARGS: ArgumentsValueMachine._in_arguments,
        _CODE: _in_code,
        _AFTER_CALL: PieceMachine._layout_then_content,  # llama.cpp: whitespace after the arguments is layout
    }


# -------------------------------------------------------------------- spec


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """``>>>all`` and the content, then one ``>>>NAME`` segment per call (Functionary's template)."""
    text = f"{PROMPT}{ALL}\n{content}" if content else ""
    return text + "".join(f"{PROMPT}{name}\n{dumps(args)}" for name, args in calls)


def segment_call(name: str, args: ArgumentRules) -> str:
    """``>>>NAME\\n`` and the arguments object."""
    if not name or not _RECIPIENT.fullmatch(name) or name in (ALL, PYTHON):
        raise CannotForce("a Functionary recipient is a name of letters, digits and _.- (and not all or python)")
    return f"{lit(PROMPT + name + chr(10))} {args.json()}"


SPEC = FormatSpec(
    id="functionary_v3_2",
    description="Functionary v3.2: >>>name\\n{json} per call, >>>all\\n for text",
    parser=Parser,
    markers=Markers(markup=(r">>>[A-Za-z0-9_.\-]*\n?",)),
    write=write,
    envelopes=(Envelope(segment_call, layout=CallsLayout()),),
    signs=(TemplateSign(907, ">>>all recipient (llama.cpp: Functionary v3.2)", (PROMPT + ALL,)),),
    template="functionary_v3_2.jinja",
)
