"""A wire format defined outside callscope, for the tests: ``<<CALL name {json}>>``.

It proves that a format is one module: this file holds the parser and the spec,
and registering the spec (``register_format(SPEC)``) is all it takes for
``replay-text``, ``run``'s forced calls, template detection, samples and the
capture checker to know it. Nothing in callscope is edited for it.

Wire format: content, then any number of ``<<CALL NAME ARGS>>`` blocks (one
space after the name, the JSON arguments verbatim up to ``>>``)::

    Let me check.
    <<CALL get_weather {"city": "Paris"}>>

The name is final at the space after it; the arguments stream as written; a
half-typed ``<<CAL`` or ``>`` is held back. An opener whose name is empty, too
long or followed by anything but a space is content. (``>>`` inside a JSON
string would end the arguments: a test format can afford that.)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats import FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.gbnf import CallsLayout, Envelope, around_arguments, lit
from callscope.engine.formats._kit.spec import Call
from callscope.engine.formats._kit.text_machine import BufferMachine
from callscope.engine.formats._kit.writing import dumps
from tests.support.paths import DATA

FORMAT_ID = "testfmt"
OPEN = "<<CALL "
CLOSE = ">>"
NAME_LIMIT = 64
TEMPLATE = DATA / "testfmt.jinja"

_NAME = re.compile(r"[A-Za-z0-9_.\-]*")
_TEXT, _CALL_NAME, _ARGS = "text", "name", "args"


class Parser(BufferMachine):
    """Incremental ``<<CALL name {json}>>`` parser (see the module docstring)."""

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        super().__init__(tools, _TEXT)

    def _finish(self) -> None:
        rest = self._take_buf()
        if self._state == _TEXT:
            self._content(rest)
        elif self._state == _CALL_NAME:
            self._content(OPEN + rest)  # the name never completed: it was text
        # _ARGS: a half-typed closer, dropped

    def _on_text(self) -> bool:
        if self._scan((OPEN,), self._content) is None:
            return False
        self._state = _CALL_NAME
        return True

    def _on_name(self) -> bool:
        buf = self._buf
        end = _NAME.match(buf).end()  # type: ignore[union-attr]
        if end == len(buf) and end <= NAME_LIMIT:
            return False  # the name goes on
        if 0 < end <= NAME_LIMIT and buf[end] == " ":
            self._call = self._open_call()
            self._name_call(self._call, buf[:end])
            self._buf = buf[end + 1 :]
            self._state = _ARGS
            return True
        self._content(OPEN)  # not a call: the opener is text, what follows is read again as text
        self._state = _TEXT
        return True

    def _on_args(self) -> bool:
        if self._scan((CLOSE,), self._append_arguments) is None:
            return False
        self._state = _TEXT
        return True

    def _append_arguments(self, text: str) -> None:
        self._arguments(self._call, text)

    _handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        _TEXT: _on_text,
        _CALL_NAME: _on_name,
        _ARGS: _on_args,
    }


def write(calls: list[Call], content: str, reasoning: str) -> str:
    blocks = "".join(f"{OPEN}{name} {dumps(args)}{CLOSE}" for name, args in calls)
    return content + ("\n" if content and calls else "") + blocks


SPEC = FormatSpec(
    id=FORMAT_ID,
    description="test-only: <<CALL name {json}>> blocks",
    parser=Parser,
    markers=Markers(leak=(OPEN.strip(),), markup=(r"<<CALL [A-Za-z0-9_.\-]*",)),
    write=write,
    envelopes=(
        Envelope(around_arguments(lambda name: f"{OPEN}{name} ", CLOSE), layout=CallsLayout(sep=lit(" ")), content=True),
    ),
    signs=(TemplateSign(650, "<<CALL marker (a test-only format)", (OPEN.strip(),)),),
    template=TEMPLATE,
)
