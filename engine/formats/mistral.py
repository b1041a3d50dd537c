"""Mistral tool calls: ``[TOOL_CALLS][{...}, ...]`` and ``[TOOL_CALLS]NAME[ARGS]{...}``.

Two generations of the syntax, both accepted, any number of ``[TOOL_CALLS]``
blocks anywhere in the text (text around them is content)::

    [TOOL_CALLS] [ws] [ {"name": ..., "arguments": {...}, "id": ...}, ... ]     (Nemo, v3 tokenizer)
    [TOOL_CALLS] [ws] NAME [ [CALL_ID] ID ] [ARGS] {...}                      (v11+ tokenizer)
    [TOOL_CALLS] [ws] NAME [ [CALL_ID] ID ] {...}                             (v11+, detokenized without [ARGS])

Reasoning (Ministral 3 / Magistral, llama.cpp's ``ministral_3`` handler): an optional
``[THINK] reasoning [/THINK]`` at the very start of the generation, trimmed as
llama.cpp trims it; ``Parser(tools, thinking=True)`` starts inside it (a prompt that
ended with ``[THINK]``). A ``[THINK]`` later in the text is content.

A detokenizer that skips control tokens drops ``[ARGS]`` (vLLM's v11 tests
read ``[TOOL_CALLS]add{"a": 1}``): a name followed directly by ``{`` is the
same call. (A generation that ends on ``[TOOL_CALLS]NAME`` is content: a name
cut off by the end cannot be told from a complete one, and names are only
ever announced complete; vLLM reads it as a call without arguments.)

Array form: the array is read by :class:`~callscope.engine.formats._kit.call_array.CallArrayScan`,
each element a call object read by
:class:`~callscope.engine.formats._kit.json_call_machine.CallReader` (arguments stream verbatim,
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

from callscope.engine.formats._kit.call_array import CLOSED, NOT_A_CALL, RUNNING, CallArrayScan
from callscope.engine.formats._kit.gbnf import ArgumentRules, CallsLayout, CannotForce, Envelope, lit
from callscope.engine.formats._kit.json_call_machine import ArgumentsValueMachine
from callscope.engine.formats._kit.reasoning_text import TrimmedReasoning
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import PieceMachine, skip_space
from callscope.engine.formats._kit.writing import dumps

MARKER = "[TOOL_CALLS]"
ARGS = "[ARGS]"
CALL_ID = "[CALL_ID]"
THINK = ("[THINK]", "[/THINK]")

_NAME = re.compile(r"[A-Za-z0-9_.:\-]*")
_ID = re.compile(r"[A-Za-z0-9_\-]*")

_CONTENT, _MARKER, _ARRAY, _ARGS, _AFTER_BLOCK, _START, _REASONING = range(7)


class Parser(TrimmedReasoning, ArgumentsValueMachine):
    """Incremental Mistral parser, both forms (see the module docstring for the rules)."""

    _content_state = _CONTENT
    _after_arguments = _AFTER_BLOCK
    #: The reasoning block's tags (Ministral 3).
    think = THINK

    def __init__(self, tools: list[dict[str, Any]] | None = None, *, thinking: bool = False) -> None:
        super().__init__(tools, _REASONING if thinking else _START)
        self._block = ""  # [TOOL_CALLS] and what follows, until the form is known
        self._array: CallArrayScan | None = None  # the array form's calls
        self._lead = ""  # the whitespace between the marker and "[" (given back with a block that is not calls)

    def _finish(self) -> None:
        while True:
            if self._state == _MARKER:
                self._run(*self._not_a_call(self._block))
            elif self._state == _ARRAY:
                scan = self._array
                scan.truncate()
                if scan.status == CLOSED:  # a call cut mid-way keeps its arguments so far
                    self._reset_block()
                    break
                self._run(*self._array_given_back(scan))
            else:
                break
        if self._state == _ARGS:
            self._truncate_arguments()
        pending = self._take_pending()
        if self._state in (_CONTENT, _START):
            self._content(pending)
        elif self._state == _REASONING:
            self._say_reasoning(pending)

    # ------------------------------------------------------------ reasoning

    def _at_start(self, text: str, pos: int) -> tuple[str, int]:
        """The generation's start: ``[THINK]`` opens reasoning; anything else is content (and is read as such)."""
        start = skip_space(text, pos)
        rest = text[start:]
        opener = THINK[0]
        if rest.startswith(opener):
            self._state = _REASONING
            self._begin_reasoning()
            return text, start + len(opener)
        if opener.startswith(rest):  # blank, or a half-typed [THINK]
            self._pending = text[pos:]
            return text, len(text)
        self._state = _CONTENT
        return text, pos

    def _in_reasoning(self, text: str, pos: int) -> tuple[str, int]:
        found = self._read_reasoning(text, pos, (THINK[1],))
        if found is None:
            return text, len(text)
        self._end_reasoning()
        self._state = _AFTER_BLOCK  # whitespace after [/THINK] is layout
        return text, found[0] + len(THINK[1])

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
        self._array = None
        self._args = None

    # ------------------------------------------------------------ which form

    def _after_marker(self, text: str, pos: int) -> tuple[str, int]:
        block = self._block + text[pos:]
        self._block = ""
        start = skip_space(block, len(MARKER))
        if start >= len(block):
            return self._hold_block(block, text)
        if block[start] == "[":
            self._state = _ARRAY
            self._array = CallArrayScan(self)
            self._lead = block[len(MARKER) : start]
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
        if rest.startswith("{"):  # v11 detokenized: the [ARGS] control token was skipped
            return self._open_named(name, None, block, name_end)
        if rest.startswith(CALL_ID):
            id_start = name_end + len(CALL_ID)
            id_end = _ID.match(block, id_start).end()
            tail = block[id_end:]
            if tail.startswith(ARGS):
                return self._open_named(name, block[id_start:id_end] or None, block, id_end + len(ARGS))
            if tail.startswith("{") and id_end > id_start:
                return self._open_named(name, block[id_start:id_end], block, id_end)
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
        self._start_arguments(index, _ARGS)
        return block[args_at:], 0

    # ------------------------------------------------------------ array form

    def _in_array(self, text: str, pos: int) -> tuple[str, int]:
        scan = self._array
        stop = scan.feed(text, pos)
        if scan.status == RUNNING:
            return text, len(text)
        if scan.status == CLOSED:
            self._reset_block()
            self._state = _AFTER_BLOCK
            return text, stop
        return self._array_given_back(scan)

    def _array_given_back(self, scan: CallArrayScan) -> tuple[str, int]:
        """The array stopped being calls: without a call yet the whole block is read again after its
        marker (released as content); after a call, the text it gave back is content."""
        if scan.status == NOT_A_CALL:
            return self._not_a_call(MARKER + self._lead + scan.rest)
        self._reset_block()
        return scan.rest, 0

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _START: _at_start,
        _REASONING: _in_reasoning,
        _CONTENT: _in_content,
        _MARKER: _after_marker,
        _ARRAY: _in_array,
        _ARGS: ArgumentsValueMachine._in_arguments,
        _AFTER_BLOCK: PieceMachine._layout_then_content,
    }


# -------------------------------------------------------------------- spec


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """``[THINK]`` reasoning, content, then ``[TOOL_CALLS]`` and the calls as one JSON array (the Nemo form)."""
    thought = f"{THINK[0]}{reasoning}{THINK[1]}" if reasoning else ""
    if not calls:
        return thought + content
    return thought + content + MARKER + dumps([{"name": name, "arguments": args} for name, args in calls])


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
    description="Mistral: [TOOL_CALLS][{json}, ...] or [TOOL_CALLS]name[CALL_ID]id[ARGS]{json}, [THINK] reasoning",
    parser=Parser,
    thinking=True,
    markers=Markers(leak=(MARKER, ARGS, CALL_ID, "[TOOL_RESULTS]", "[/TOOL_RESULTS]", *THINK)),
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
