"""Mistral tool calls: ``[TOOL_CALLS][{...}, ...]`` and ``[TOOL_CALLS]NAME[ARGS]{...}``.

Two generations of the syntax, both accepted, any number of ``[TOOL_CALLS]``
blocks anywhere in the text (text around them is content)::

    [TOOL_CALLS] [ws] [ {"name": ..., "arguments": {...}, "id": ...}, ... ]     (Nemo, v3 tokenizer)
    [TOOL_CALLS] [ws] NAME [ [CALL_ID] ID ] [ARGS] {...}                      (v11+ tokenizer)

Array form: each element is a call object read by
:class:`~engine.formats._kit.json_call_machine.CallReader` (arguments stream verbatim,
``"id"`` is the model's id only if written before the name and arguments;
Mistral writes it last, so it is normally not used: the id of a call goes out
with its first delta and never changes). Named form: ``NAME`` is
``[A-Za-z0-9_.:-]+``; the call opens at ``[ARGS]`` with its name complete and
its ``[CALL_ID]`` (if any) as the model's id, and the JSON value after
``[ARGS]`` streams verbatim as the arguments. Whitespace after a block is
skipped.

Bad input, decided on the text alone:

* A ``[TOOL_CALLS]`` block is held back until its first call opens. If it
  stops looking like a call first (neither ``[`` nor a name follows, the name
  is not followed by ``[ARGS]``/``[CALL_ID]``, an element is not a call
  object, a JSON syntax error), the marker is released as content and
  scanning resumes right after it.
* After a block produced a call, a later element that is not a call, or a
  syntax error between elements, ends the block: the text from that element
  (or the error) on is read as content.
* A syntax error inside an open call ends it with its arguments so far;
  content resumes at the error. (``[ARGS]`` followed by something that is not
  JSON gives the raw text up to the first character that cannot be JSON, or
  empty arguments: the engine reports them invalid.)
* End of generation: a held block that never produced a call is content; a
  call cut mid-way keeps its arguments so far; a trailing ``[TOOL_CA`` is
  content.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import ArgumentRules, CallsLayout, CannotForce, Envelope, lit
from callscope.engine.formats._kit.json_call_machine import ArgumentsValueScan, CallReader
from callscope.engine.formats._kit.json_scanner import VALUE_END, VALUE_START, JsonScanner
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import PieceMachine, skip_space
from callscope.engine.formats._kit.writing import dumps

MARKER = "[TOOL_CALLS]"
ARGS = "[ARGS]"
CALL_ID = "[CALL_ID]"

_NAME = re.compile(r"[A-Za-z0-9_.:\-]*")
_ID = re.compile(r"[A-Za-z0-9_\-]*")

_CONTENT, _MARKER, _ARRAY, _ARGS, _AFTER_BLOCK = range(5)


class Parser(PieceMachine):
    """Incremental Mistral parser, both forms (see the module docstring for the rules)."""

    _content_state = _CONTENT

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        super().__init__(tools, _CONTENT)
        self._block = ""  # [TOOL_CALLS] and what follows, until the form is known
        # array form
        self._scanner: JsonScanner | None = None
        self._reader: CallReader | None = None
        self._held: list[str] = []  # text of the block / element not yet shown to be a call
        self._holding = False
        self._block_has_call = False
        # named form
        self._args: ArgumentsValueScan | None = None

    def _finish(self) -> None:
        while True:
            if self._state == _MARKER:
                self._run(*self._not_a_call(self._block))
            elif self._state == _ARRAY and self._holding:
                self._run(*self._give_up_held(""))
            else:
                break
        if self._state == _ARRAY and self._reader is not None:
            self._reader.truncate()
        elif self._state == _ARGS and self._args is not None:
            self._args.truncate()
        pending = self._take_pending()
        if self._state == _CONTENT:
            self._content(pending)

    # ------------------------------------------------------------ content

    def _in_content(self, text: str, pos: int) -> tuple[str, int]:
        at = self._content_until(text, pos, MARKER)
        if at < 0:
            return text, len(text)
        self._state = _MARKER
        self._block = ""
        return text, at

    def _not_a_call(self, block: str) -> tuple[str, int]:
        """The block is not a call: the marker is content, scanning resumes after it."""
        self._reset_block()
        self._content(MARKER)
        return block[len(MARKER) :], 0

    def _reset_block(self) -> None:
        self._state = _CONTENT
        self._block = ""
        self._scanner = None
        self._reader = None
        self._args = None
        self._held = []
        self._holding = False
        self._block_has_call = False

    # ------------------------------------------------------------ which form

    def _after_marker(self, text: str, pos: int) -> tuple[str, int]:
        block = self._block + text[pos:]
        self._block = ""
        start = skip_space(block, len(MARKER))
        if start >= len(block):
            return self._hold_block(block, text)
        if block[start] == "[":
            self._state = _ARRAY
            self._scanner = JsonScanner(report_depth=2)
            self._held = [block[:start]]
            self._holding = True
            return block[start:], 0
        name_end = _NAME.match(block, start).end()
        if name_end == start:
            return self._not_a_call(block)
        if name_end == len(block):
            return self._hold_block(block, text)
        name = block[start:name_end]
        rest = block[name_end:]
        if rest.startswith(ARGS):
            return self._open_named(name, None, block, name_end + len(ARGS))
        if rest.startswith(CALL_ID):
            id_start = name_end + len(CALL_ID)
            id_end = _ID.match(block, id_start).end()
            tail = block[id_end:]
            if tail.startswith(ARGS):
                return self._open_named(name, block[id_start:id_end] or None, block, id_end + len(ARGS))
            if ARGS.startswith(tail):
                return self._hold_block(block, text)
            return self._not_a_call(block)
        if ARGS.startswith(rest) or CALL_ID.startswith(rest):
            return self._hold_block(block, text)
        return self._not_a_call(block)

    def _hold_block(self, block: str, text: str) -> tuple[str, int]:
        self._block = block
        return text, len(text)

    def _open_named(self, name: str, call_id: str | None, block: str, args_at: int) -> tuple[str, int]:
        index = self._open_call(call_id)
        self._name_call(index, name)
        self._state = _ARGS
        self._args = ArgumentsValueScan(self, index)
        return block[args_at:], 0

    # ------------------------------------------------------------ named form

    def _in_args(self, text: str, pos: int) -> tuple[str, int]:
        args = self._args
        stop = args.feed(text, pos)
        if args.done:
            broken = args.broken
            self._reset_block()
            self._state = _CONTENT if broken else _AFTER_BLOCK
            return text, stop
        return text, len(text)

    # ------------------------------------------------------------ array form

    def _in_array(self, text: str, pos: int) -> tuple[str, int]:
        events, stop = self._scanner.feed(text, pos)
        hold_from = pos
        for event in events:
            kind, depth = event[0], event[1]
            reader = self._reader
            if kind == VALUE_START:
                if depth == 1:
                    if event[3] != "{":
                        return self._element_not_a_call(text, hold_from if self._holding else event[2])
                    reader = self._reader = CallReader(self)
                    if not self._holding:
                        self._holding = True
                        self._held = []
                        hold_from = event[2]
                elif depth == 2 and reader is not None:
                    reader.value_start(event[4], event[2], event[3])
            elif kind == VALUE_END:
                if depth == 2 and reader is not None:
                    reader.value_end(text, event[2])
                elif depth == 1 and reader is not None:
                    reader.close()
                    if not reader.failed:
                        self._reader = None
                elif depth == 0:
                    self._reset_block()
                    self._state = _AFTER_BLOCK
                    return text, event[2]
            else:  # a syntax error
                if reader is not None and reader.opened:
                    reader.abort(text, event[2])
                    self._reset_block()
                    return text, event[2]
                if self._holding:
                    return self._element_not_a_call(text, hold_from)
                self._reset_block()
                return text, event[2]
            if reader is not None:
                if reader.failed:
                    return self._element_not_a_call(text, hold_from)
                if reader.opened and self._holding:
                    self._holding = False
                    self._held = []
                    self._block_has_call = True
        if self._reader is not None:
            self._reader.flush(text, stop)
        if self._holding:
            self._held.append(text[hold_from:stop])
        return text, len(text)

    def _element_not_a_call(self, text: str, hold_from: int) -> tuple[str, int]:
        return self._give_up_held(text[hold_from:])

    def _give_up_held(self, rest: str) -> tuple[str, int]:
        """What was held is not a call: the whole block (no call yet) or the element is content."""
        held = "".join(self._held) + rest
        if self._block_has_call:
            self._reset_block()
            return held, 0
        return self._not_a_call(held)

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _CONTENT: _in_content,
        _MARKER: _after_marker,
        _ARRAY: _in_array,
        _ARGS: _in_args,
        _AFTER_BLOCK: PieceMachine._layout_then_content,
    }


# -------------------------------------------------------------------- spec


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Content, then ``[TOOL_CALLS]`` and the calls as one JSON array (the Nemo form)."""
    if not calls:
        return content
    return content + MARKER + dumps([{"name": name, "arguments": args} for name, args in calls])


def array_call(name: str, args: ArgumentRules) -> str:
    """One element of ``[TOOL_CALLS][...]``; Nemo calls carry a 9-character alphanumeric id the model writes."""
    head = lit(f'{{"name": {json.dumps(name)}, "arguments": ')
    id_open, id_close = lit(', "id": "'), lit('"}')
    return f"{head} {args.json()} {id_open} [a-zA-Z0-9]{{9}} {id_close}"


def args_call(name: str, args: ArgumentRules) -> str:
    """``[TOOL_CALLS]NAME[ARGS]{...}``, one marker per call (no ``[CALL_ID]``: the engine mints the id)."""
    if not name or not _NAME.fullmatch(name):
        raise CannotForce(
            "the [TOOL_CALLS]NAME[ARGS] form needs a name of letters, digits and _.:- (use --mistral-form array)"
        )
    return f"{lit(MARKER + name + ARGS)} {args.json()}"


SPEC = FormatSpec(
    id="mistral",
    description="Mistral: [TOOL_CALLS][{json}, ...] or [TOOL_CALLS]name[CALL_ID]id[ARGS]{json}",
    parser=Parser,
    markers=Markers(leak=(MARKER, ARGS, CALL_ID, "[TOOL_RESULTS]", "[/TOOL_RESULTS]")),
    write=write,
    envelopes=(
        Envelope(
            array_call,
            layout=CallsLayout(open=lit(MARKER + "["), sep='"," space', close=lit("]")),
            content=True,
            form="array",
            label="[TOOL_CALLS][...] array form",
        ),
        Envelope(args_call, layout=CallsLayout(), content=True, form="args", label="[TOOL_CALLS]NAME[ARGS] form"),
    ),
    signs=(TemplateSign(1100, "[TOOL_CALLS] marker (llama.cpp: Mistral Nemo)", (MARKER,)),),
    template="mistral.jinja",
)
