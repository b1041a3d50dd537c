"""The machine under every format that writes a call as tags around typed parameter values.

Qwen3-Coder and Seed-OSS (``<function=...><parameter=...>``), GLM (``<arg_key>`` /
``<arg_value>``), MiniMax-M2 and DeepSeek V3.2 (``<invoke name=...><parameter name=...>``)
differ in their tags, not in how a call is read: a name, then parameters whose raw-text
values become JSON arguments as they arrive (:class:`~callscope.engine.formats._kit.xml_values.TypedArguments`),
a value's closer that counts only when the call goes on after it
(:class:`~callscope.engine.formats._kit.xml_values.ValueEnd`), stray text between parameters shown as
content. :class:`TaggedCallMachine` holds those steps; the format machines are tables of
states that call them.
"""

from __future__ import annotations

from typing import Any, ClassVar

from callscope.engine.formats._kit.marker_search import find_first, held_back_from
from callscope.engine.formats._kit.text_machine import TEXT, ThinkTextMachine
from callscope.engine.formats._kit.xml_values import TypedArguments, ValueEnd


def strip_layout_newline(text: str) -> str:
    """``text`` without one trailing ``\\n`` or ``\\r\\n`` (the newline before a closer that is layout)."""
    if text.endswith("\r\n"):
        return text[:-2]
    if text.endswith("\n"):
        return text[:-1]
    return text


def _keep(text: str) -> str:
    return text


#: States every tagged-call machine has (besides ThinkTextMachine's start / reasoning / text).
BODY = "body"  # inside a call, between parameters
PARAM_START = "param_start"  # right after a parameter's opening tag: its layout newline?
VALUE = "value"  # inside a parameter's value


class TaggedCallMachine(ThinkTextMachine):
    """:class:`ThinkTextMachine` plus the steps of reading a call made of tagged, typed parameters.

    ``_layout_newlines``: one newline right after a parameter's opening tag and
    one right before its closer are layout, not value (Qwen3-Coder, MiniMax);
    False keeps the value exactly as written (GLM, DSML).
    """

    _layout_newlines = False
    #: Where a value ends (set by each format machine).
    _value_end: ClassVar[ValueEnd]
    #: What opens a call inside a block (``<function=``, ``<invoke name="``) and what closes the block
    #: (set by each machine family for :meth:`_on_open`).
    _call_opener: ClassVar[str]
    _block_closes: ClassVar[tuple[str, ...]]

    def __init__(self, tools: list[dict[str, Any]] | None, thinking: bool) -> None:
        super().__init__(tools, thinking)
        self._args: TypedArguments | None = None  # the open call's arguments
        self._in_junk = False  # the last thing inside the call's body was stray text

    def _open_typed_call(self, name: str, call_id: str | None = None) -> None:
        """The call's name is complete: open it, name it, start its arguments (``{``)."""
        self._pending = ""
        self._call = self._open_call(call_id)
        self._name_call(self._call, name)
        self._args = TypedArguments(self, self._call, name)
        self._ws = ""
        self._in_junk = False

    def _on_open(self) -> bool:
        """Right after a block opener: a call begins, the block is empty, or it was no tool call after all.

        Layout after the opener is held with it; an opener followed by anything but a call or
        the block's closer is released as content (the text is read again after it).
        """
        buf = self._buf
        rest = buf.lstrip()
        self._pending += buf[: len(buf) - len(rest)]
        self._buf = rest
        if not rest:
            return False
        if rest.startswith(self._call_opener):
            self._begin_call(rest)
            return True
        for close in self._block_closes:
            if rest.startswith(close):  # an empty block
                self._pending = ""
                self._buf = rest[len(close) :]
                return self._back_to_text()
        if any(marker.startswith(rest) for marker in (self._call_opener, *self._block_closes)):
            return False
        return self._release_opener(TEXT)  # not a tool call after all

    def _on_block_next(self) -> bool:
        """After a call's end tag: another call in the same block, the block's closer, or (never closed) content."""
        rest = self._take_layout()
        if not rest:
            return False
        if rest.startswith(self._call_opener):  # several calls in one block
            self._ws = ""
            self._pending = ""
            self._begin_call(rest)
            return True
        for close in self._block_closes:
            if rest.startswith(close):
                self._ws = ""
                self._buf = rest[len(close) :]
                return self._back_to_text()
        if any(marker.startswith(rest) for marker in (self._call_opener, *self._block_closes)):
            return False
        self._ws = ""  # the block was never closed: what follows is content
        return self._back_to_text()

    def _begin_call(self, rest: str) -> None:
        """``rest`` starts with :attr:`_call_opener`: read the call's name next."""
        raise NotImplementedError

    def _take_layout(self) -> str:
        """Move leading whitespace of the buffer to ``_ws``; return the rest."""
        buf = self._buf
        rest = buf.lstrip()
        if len(rest) != len(buf):
            self._ws += buf[: len(buf) - len(rest)]
            self._buf = rest
        return rest

    def _marker_seen(self) -> None:
        """A marker of the call's body was read: the whitespace before it was layout."""
        self._ws = ""
        self._in_junk = False

    def _body_junk(self, rest: str, markers: tuple[str, ...]) -> bool:
        """``rest`` (the buffer, no leading space) starts with text that is none of the body's ``markers``: content.

        Its trailing whitespace is held; whitespace between two pieces of junk is
        theirs, after a marker it is layout.
        """
        hit = find_first(rest, markers)
        cut = hit[0] if hit is not None else held_back_from(rest, markers)
        junk = rest[:cut]
        body = junk.rstrip()
        self._say_content((self._ws if self._in_junk else "") + body)
        self._in_junk = True
        self._ws = junk[len(body) :]
        self._buf = rest[cut:]
        return True

    def _value_starts(self) -> bool:
        """Right after a parameter's opening tag: drop its layout newline, if the format has one.

        False: the buffer is empty or ends in a lone ``\\r``, the next piece decides.
        """
        if not self._layout_newlines:
            return True
        buf = self._buf
        if not buf:
            return False
        if buf[0] == "\n":
            self._buf = buf[1:]
        elif buf[0] == "\r":
            if len(buf) < 2:
                return False
            if buf[1] == "\n":
                self._buf = buf[2:]
        return True

    def _read_value(self, value_end: ValueEnd) -> bool:
        """Stream the current value from the buffer; True once its closer counted (the buffer is after it).

        False: the buffer ran out (what cannot be the closer went into the value,
        a possible closer and what follows it wait for the next piece).
        """
        buf = self._buf
        args = self._args
        closer = value_end.closer
        layout = strip_layout_newline if self._layout_newlines else _keep
        start = 0
        while True:
            pos = buf.find(closer, start)
            if pos < 0:
                break
            after = buf[pos + len(closer) :]
            closes = value_end.closes(after, args, buf[:pos] if self._layout_newlines else "")
            if closes is False:  # the closer's text inside the value
                start = pos + 1
                continue
            head = layout(buf[:pos])
            args.text(head)
            if closes is None:  # hold the closer (and its layout newline) until the next piece decides
                self._buf = buf[len(head) :]
                return False
            args.close_value()
            self._buf = after
            self._marker_seen()
            return True
        cut = held_back_from(buf, value_end.hold)
        args.text(buf[:cut])
        self._buf = buf[cut:]
        return False

    def _finish_in(self, state: str, buf: str) -> None:
        """End of generation: a value closes (or stays as far as it got); any other state holds no text."""
        if state == VALUE:
            self._finish_value(buf)

    def _on_param_start(self) -> bool:
        if not self._value_starts():
            return False
        self._state = VALUE
        return True

    def _on_value(self) -> bool:
        if not self._read_value(self._value_end):
            return False
        self._state = BODY
        return True

    def _finish_value(self, buf: str) -> None:
        """End of generation inside a value: a held closer closes it; else it stays as far as it got."""
        at = buf.find(self._value_end.closer)
        if at >= 0:  # complete only at the end: the end of the generation decides it
            self._args.text((strip_layout_newline if self._layout_newlines else _keep)(buf[:at]))
            self._args.close_value()
        else:  # truncated: a held value is written as far as it got; a half-typed closer never enters
            self._args.truncate()


__all__ = ["BODY", "PARAM_START", "VALUE", "TaggedCallMachine", "strip_layout_newline"]
