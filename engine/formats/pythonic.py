"""Pythonic tool calls: a Python list of calls, ``[get_weather(city='Paris'), get_time()]``.

Llama 3.2 and Llama 4 answer a tool request with the list alone (Llama 4 may
wrap it in ``<|python_start|>``/``<|python_end|>``); LFM2 wraps it in
``<|tool_call_start|>``/``<|tool_call_end|>`` and writes content around it::

    [ws] [ NAME(args), ... ] content          (the list at the start of the generation)
    content [ NAME(args), ... ] content       (after leading text, as SGLang's pythonic detector reads it)
    content <|python_start|> [ ... ] <|python_end|> content
    content <|tool_call_start|> [ ... ] <|tool_call_end|> content

``NAME`` is a Python name, dots allowed (``grocery.order``). Keyword
arguments are Python literals, read by
:class:`~callscope.engine.formats._kit.python_args.PythonArgsScan` and streamed as
their JSON (strings as they are written, numbers and constants once complete,
see that module). A call opens with its complete name once its first argument
value has begun validly (or at ``)`` for a call without arguments), so a call
whose first argument is not a literal (``f(x=b'z')``) is never announced; the
LFM2 wrapper reads strings with LFM2's quote leniency (``'sed -n '1,2p' f'``).

Bad input, decided on the text alone:

* Until its first call opens, the list (with its wrapper marker) is held back.
  If it stops looking like a list of calls first (``[Note]``, ``[1, 2]``, a
  marker without ``[``) it is content, verbatim. An element that breaks before
  its call opened is skipped to its closing ``)`` and the next one is read; a
  list that never opens a call is content, verbatim.
* A syntax error inside an open call ends it with its arguments so far (the
  engine reports them invalid); the rest of the element is skipped, the list
  goes on.
* After a call, anything but ``,`` or ``]`` ends the list: content resumes
  there. After the list, whitespace and the wrapper's end marker are consumed
  (a missing end marker lets content resume).
* End of generation: a held list is content; a call cut mid-way keeps its
  arguments so far; a half-typed end marker is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import ArgumentRules, CallsLayout, CannotForce, Envelope, lit
from callscope.engine.formats._kit.python_args import PythonCall
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import PieceMachine, skip_space

PYTHON_START, PYTHON_END = "<|python_start|>", "<|python_end|>"
TOOL_CALL_START, TOOL_CALL_END = "<|tool_call_start|>", "<|tool_call_end|>"
_WRAPPERS = {PYTHON_START: PYTHON_END, TOOL_CALL_START: TOOL_CALL_END}
_OPENERS = (PYTHON_START, TOOL_CALL_START)
#: What may open a list in content: a wrapper marker, or a bare "[" (held while it looks like ``[NAME(``).
_CONTENT_OPENERS = (*_OPENERS, "[")

_NAME_START = re.compile(r"[A-Za-z_]")
_NAME_RUN = re.compile(r"[A-Za-z0-9_.]*")
#: Inside an element being skipped: the next bracket, quote or backslash.
_SKIP_STOP = re.compile(r"[()\[\]{}'\"\\]")

_START, _CONTENT, _WRAP, _ITEM, _NAME, _ARGS, _SKIP, _AFTER_CALL, _AFTER_LIST, _LAYOUT = range(10)


class Parser(PieceMachine):
    """Incremental pythonic parser (see the module docstring for the rules)."""

    _content_state = _CONTENT

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        super().__init__(tools, _START)
        self._held: list[str] = []  # the list so far, while no call of it has opened
        self._committed = False  # a call of this list opened
        self._opener = ""  # the wrapper marker of this list ("" for a bare one)
        self._name = ""
        self._call: PythonCall | None = None
        self._depth = 0  # bracket depth inside a skipped element
        self._quote = ""  # the quote of a string inside a skipped element

    def _finish(self) -> None:
        if self._state == _ARGS:
            self._call.finish()
            if self._call.opened:
                self._commit()
        if not self._committed and self._state not in (_START, _CONTENT, _LAYOUT):
            self._state = _CONTENT
            self._content("".join(self._held) + self._take_pending())
            self._held = []
            return
        pending = self._take_pending()
        if self._state in (_START, _CONTENT):
            self._content(pending)
        # _AFTER_LIST: a half-typed end marker; in a committed list: what is left of it. Both dropped.

    # ------------------------------------------------------------ content

    def _at_start(self, text: str, pos: int) -> tuple[str, int]:
        start = skip_space(text, pos)
        if start >= len(text):
            self._pending = text[pos:]
            return text, len(text)
        if text[start] == "[":
            self._begin_list("", text[pos : start + 1])
            return text, start + 1
        self._state = _CONTENT
        return text, pos

    def _in_content(self, text: str, pos: int) -> tuple[str, int]:
        found = self._content_until_first(text, pos, _CONTENT_OPENERS)
        if found is None:
            return text, len(text)
        at, marker = found
        if marker == "[":  # a bare list after leading text: held while it looks like [NAME(
            self._begin_list("", "[")
            return text, at + 1
        self._begin_list(marker, marker)
        self._state = _WRAP
        return text, at + len(marker)

    def _begin_list(self, opener: str, held: str) -> None:
        self._state = _ITEM
        self._opener = opener
        self._committed = False
        self._held = [held]

    def _hold(self, text: str) -> None:
        if not self._committed and text:
            self._held.append(text)

    def _not_a_list(self, text: str, pos: int) -> tuple[str, int]:
        """The held list is not calls: a bare one is content verbatim; a wrapper marker is released, scanning resumes after it."""
        held = "".join(self._held)
        self._held = []
        self._state = _CONTENT
        if self._opener:
            self._content(self._opener)
            return held[len(self._opener) :] + text[pos:], 0
        self._content(held)
        return text, pos

    # ------------------------------------------------------------ the list

    def _after_wrapper(self, text: str, pos: int) -> tuple[str, int]:
        start = skip_space(text, pos)
        self._hold(text[pos:start])
        if start >= len(text):
            return text, start
        if text[start] != "[":
            return self._not_a_list(text, start)
        self._hold("[")
        self._state = _ITEM
        return text, start + 1

    def _at_item(self, text: str, pos: int) -> tuple[str, int]:
        start = skip_space(text, pos)
        self._hold(text[pos:start])
        if start >= len(text):
            return text, start
        c = text[start]
        if c == "]":
            self._hold(c)
            return self._list_closed(text, start + 1)
        if _NAME_START.match(c):
            self._state = _NAME
            self._name = ""
            return text, start
        return self._list_broken(text, start)

    def _in_name(self, text: str, pos: int) -> tuple[str, int]:
        end = _NAME_RUN.match(text, pos).end()
        self._name += text[pos:end]
        self._hold(text[pos:end])
        if end >= len(text):
            return text, end
        if text[end] != "(":
            return self._list_broken(text, end)
        self._hold("(")
        self._state = _ARGS
        self._call = PythonCall(self, self._name, lenient=self._opener == TOOL_CALL_START)
        return text, end + 1

    def _commit(self) -> None:
        """A call of the list opened: the list is calls, nothing of it is held any more."""
        self._committed = True
        self._held = []

    def _in_args(self, text: str, pos: int) -> tuple[str, int]:
        call = self._call
        stop = call.feed(text, pos)
        if not self._committed:
            if call.opened:
                self._commit()
            else:
                self._hold(text[pos:stop])
        if not call.done:
            return text, len(text)
        self._call = None
        if call.broken:  # skip the rest of this element: its closing parenthesis
            self._state = _SKIP
            self._depth = 1
            self._quote = ""
        else:
            self._state = _AFTER_CALL
        return text, stop

    def _in_skip(self, text: str, pos: int) -> tuple[str, int]:
        """A broken element: skip to the parenthesis that closes it (strings and brackets respected, roughly)."""
        n = len(text)
        while pos < n:
            m = _SKIP_STOP.search(text, pos)
            if m is None:
                self._hold(text[pos:])
                return text, n
            i = m.start()
            c = text[i]
            if c == "\\" and i + 1 >= n:  # the escaped character is in the next piece
                self._hold(text[pos:i])
                self._pending = text[i:]
                return text, n
            self._hold(text[pos : i + 1])
            pos = i + 1
            if c == "\\":
                self._hold(text[pos])
                pos += 1
            elif self._quote:
                if c == self._quote:
                    self._quote = ""
            elif c in "'\"":
                self._quote = c
            elif c in "([{":
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth == 0:
                    self._state = _AFTER_CALL
                    return text, pos
        return text, pos

    def _after_call(self, text: str, pos: int) -> tuple[str, int]:
        start = skip_space(text, pos)
        self._hold(text[pos:start])
        if start >= len(text):
            return text, start
        c = text[start]
        if c == ",":
            self._hold(c)
            self._state = _ITEM
            return text, start + 1
        if c == "]":
            self._hold(c)
            return self._list_closed(text, start + 1)
        return self._list_broken(text, start)

    def _list_broken(self, text: str, pos: int) -> tuple[str, int]:
        """Not a list element: an uncommitted list is content; after a call, content resumes here."""
        if not self._committed:
            return self._not_a_list(text, pos)
        self._state = _CONTENT
        return text, pos

    def _list_closed(self, text: str, pos: int) -> tuple[str, int]:
        if not self._committed and not self._opener:
            return self._not_a_list(text, pos)  # a bare list without a call: prose such as "[]"
        self._held = []
        self._state = _AFTER_LIST if self._opener else _LAYOUT
        return text, pos

    def _after_list(self, text: str, pos: int) -> tuple[str, int]:
        return self._closer_or_content(text, pos, _WRAPPERS[self._opener], _LAYOUT)

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _START: _at_start,
        _CONTENT: _in_content,
        _WRAP: _after_wrapper,
        _ITEM: _at_item,
        _NAME: _in_name,
        _ARGS: _in_args,
        _SKIP: _in_skip,
        _AFTER_CALL: _after_call,
        _AFTER_LIST: _after_list,
        _LAYOUT: PieceMachine._layout_then_content,
    }


# -------------------------------------------------------------------- spec


def call_text(name: str, args: dict[str, Any]) -> str:
    """One call as Python source: ``name(key=value, ...)``, values as Python literals (``repr``)."""
    return f"{name}(" + ", ".join(f"{key}={value!r}" for key, value in args.items()) + ")"


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Content, then the calls as one list in LFM2's ``<|tool_call_start|>`` markers (the built-in template's form)."""
    if not calls:
        return content
    return content + TOOL_CALL_START + "[" + ", ".join(call_text(n, a) for n, a in calls) + "]" + TOOL_CALL_END


def python_call(name: str, args: ArgumentRules) -> str:
    """``NAME(key=value, ...)`` with the values as Python literals."""
    if not _NAME_START.match(name) or _NAME_RUN.fullmatch(name) is None:
        raise CannotForce("a pythonic call needs a tool name that is a Python name (letters, digits, _ and .)")
    return f"{lit(name + '(')} {args.python()} {lit(')')}"


SPEC = FormatSpec(
    id="pythonic",
    description="Pythonic calls: [name(key=value, ...)] (Llama 3.2/4), LFM2's <|tool_call_start|>[...]",
    parser=Parser,
    markers=Markers(leak=(PYTHON_START, PYTHON_END, TOOL_CALL_START, TOOL_CALL_END)),
    write=write,
    envelopes=(
        Envelope(
            python_call,
            layout=CallsLayout(open=lit(TOOL_CALL_START + "["), sep=lit(", "), close=lit("]" + TOOL_CALL_END)),
            content=True,
        ),
    ),
    signs=(
        TemplateSign(
            867,
            "List of tools: <|tool_list_start|>[...]<|tool_list_end|> (llama.cpp: LFM2 pythonic calls)",
            ("List of tools: <|tool_list_start|>[", "]<|tool_list_end|>"),
        ),
        TemplateSign(
            868,
            "<|tool_call_start|> and <|tool_call_end|> markers (llama.cpp: LFM2.5 pythonic calls)",
            (TOOL_CALL_START, TOOL_CALL_END),
        ),
        TemplateSign(997, "<|python_start|> marker (vLLM: Llama 4 pythonic calls)", (PYTHON_START,)),
    ),
    template="pythonic.jinja",
)
