"""Upstage Solar Open tool calls: ``<|tool_calls|><|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{...}<|tool_call:end|>``.

Solar Open writes its answer in channels, each opened by a special token
(llama.cpp's Solar Open handler; vLLM's and SGLang's Solar Open parsers)::

    [<|think|> reasoning <|end|> <|begin|>assistant]
    ( <|content|> content (<|flush|> | <|end|> <|begin|>assistant) )*
    [<|tool_calls|> ( <|tool_call:begin|> ID <|tool_call:name|> NAME <|tool_call:args|> {...} <|tool_call:end|> )* <|calls|>]

The channel tokens are never content (``<|begin|>``'s role name goes with it);
text outside any channel is content. A call's header is held until
``<|tool_call:args|>``: then the call opens with its name and with the id the
model wrote (``ID``, the call's id from its first delta on), and the JSON
value after it streams verbatim as the arguments
(:class:`~callscope.engine.formats._kit.json_call_machine.ArgumentsValueScan`).
Reasoning is trimmed as llama.cpp does; ``thinking=True`` starts inside it.

Bad input, decided on the text alone: a header without a name (or without
``<|tool_call:args|>`` within 512 characters) is content, verbatim; a syntax error in the arguments ends the call with its arguments so
far and what follows is content; a missing ``<|tool_call:end|>`` lets content
resume after the value. End of generation: a held header is content, a call
cut mid-way keeps its arguments so far.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import ArgumentRules, CallsLayout, Envelope, lit
from callscope.engine.formats._kit.json_call_machine import ArgumentsValueMachine
from callscope.engine.formats._kit.reasoning_text import TrimmedReasoning
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.writing import dumps

THINK = "<|think|>"
END = "<|end|>"
BEGIN = "<|begin|>"
CONTENT = "<|content|>"
FLUSH = "<|flush|>"
TOOL_CALLS = "<|tool_calls|>"
CALL_BEGIN = "<|tool_call:begin|>"
CALL_NAME = "<|tool_call:name|>"
CALL_ARGS = "<|tool_call:args|>"
CALL_END = "<|tool_call:end|>"
CALLS = "<|calls|>"
ASSISTANT = "assistant"

#: Channel tokens that are simply removed from the text.
_SILENT = (END, CONTENT, FLUSH, TOOL_CALLS, CALLS, CALL_END)
_TEXT_MARKERS = (THINK, BEGIN, CALL_BEGIN, *_SILENT)
_REASONING_END = (END,)
_ROLE = re.compile(r"[a-z]*")
_LONGEST_ROLE = 16  # a role name longer than this is text after the token
_LONGEST_HEADER = 512  # an id and a name; longer without <|tool_call:args|>: not a call header

_TEXT, _REASONING, _ROLE_NAME, _HEADER, _ARGS, _AFTER_ARGS = range(6)


class Parser(TrimmedReasoning, ArgumentsValueMachine):
    """Incremental Solar Open parser (see the module docstring for the rules)."""

    _content_state = _TEXT
    _after_arguments = _AFTER_ARGS
    #: The reasoning block's tags (``--thinking auto`` decides on the closer).
    think = (THINK, END)

    def __init__(self, tools: list[dict[str, Any]] | None = None, *, thinking: bool = False) -> None:
        super().__init__(tools, _REASONING if thinking else _TEXT)
        self._header = ""  # a call's header after <|tool_call:begin|>, until <|tool_call:args|>

    def _finish(self) -> None:
        pending = self._take_pending()
        if self._state == _ARGS:
            self._truncate_arguments()
        elif self._state == _HEADER:
            self._content(CALL_BEGIN + self._header + pending)
        elif self._state == _TEXT:
            self._content(pending)
        elif self._state == _REASONING:
            self._say_reasoning(pending)

    # ------------------------------------------------------------ channels

    def _in_text(self, text: str, pos: int) -> tuple[str, int]:
        found = self._content_until_first(text, pos, _TEXT_MARKERS)
        if found is None:
            return text, len(text)
        at, marker = found
        if marker == THINK:
            self._state = _REASONING
            self._begin_reasoning()
        elif marker == BEGIN:
            self._state = _ROLE_NAME
        elif marker == CALL_BEGIN:
            self._state = _HEADER
            self._header = ""
        return text, at + len(marker)

    def _in_role(self, text: str, pos: int) -> tuple[str, int]:
        """``<|begin|>assistant``: the role's name is part of the channel token."""
        end = _ROLE.match(text, pos).end()
        if end >= len(text) and end - pos < _LONGEST_ROLE:  # the name may go on in the next piece
            self._pending = text[pos:]
            return text, len(text)
        self._state = _TEXT
        return text, end

    def _in_reasoning(self, text: str, pos: int) -> tuple[str, int]:
        found = self._read_reasoning(text, pos, _REASONING_END)
        if found is None:
            return text, len(text)
        self._end_reasoning()
        self._state = _TEXT
        return text, found[0] + len(END)

    # ------------------------------------------------------------ calls

    def _in_header(self, text: str, pos: int) -> tuple[str, int]:
        header = self._header + text[pos:]
        end = header.find(CALL_ARGS)
        if end < 0 and len(header) <= _LONGEST_HEADER:
            self._header = header
            return text, len(text)
        call_id, _, name = header[:end].rpartition(CALL_NAME)
        name = name.strip()
        if end < 0 or end > _LONGEST_HEADER or not name:  # no call: the header is content, scanning resumes after it
            self._state = _TEXT
            self._content(CALL_BEGIN)
            self._header = ""
            return header, 0
        index = self._open_call(call_id.strip() or None)
        self._name_call(index, name)
        self._start_arguments(index, _ARGS)
        self._header = ""
        return header, end + len(CALL_ARGS)

    def _after_args(self, text: str, pos: int) -> tuple[str, int]:
        return self._closer_or_content(text, pos, CALL_END, _TEXT)

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _TEXT: _in_text,
        _REASONING: _in_reasoning,
        _ROLE_NAME: _in_role,
        _HEADER: _in_header,
        _ARGS: ArgumentsValueMachine._in_arguments,
        _AFTER_ARGS: _after_args,
    }


# -------------------------------------------------------------------- spec

_TURN = END + BEGIN + ASSISTANT  # a channel ends, the assistant's next one begins


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Reasoning, content and the calls, each in its channel (Solar Open's template)."""
    parts = [f"{THINK}{reasoning}{_TURN}"] if reasoning else []
    if content:
        parts.append(f"{CONTENT}{content}" + (_TURN if calls else FLUSH))
    if calls:
        parts.append(TOOL_CALLS)
        for i, (name, args) in enumerate(calls):
            parts.append(f"{CALL_BEGIN}{i}{CALL_NAME}{name}{CALL_ARGS}{dumps(args)}{CALL_END}")
        parts.append(CALLS)
    return "".join(parts)


def channel_call(name: str, args: ArgumentRules) -> str:
    """One call: its header (the model numbers it) and its arguments."""
    return f"{lit(CALL_BEGIN)} [0-9] {lit(CALL_NAME + name + CALL_ARGS)} {args.json()} {lit(CALL_END)}"


SPEC = FormatSpec(
    id="solar_open",
    description="Solar Open: <|tool_calls|><|tool_call:begin|>id<|tool_call:name|>name<|tool_call:args|>{json}",
    parser=Parser,
    thinking=True,
    markers=Markers(
        leak=(THINK, BEGIN, CONTENT, FLUSH, TOOL_CALLS, CALL_BEGIN, CALL_NAME, CALL_ARGS, CALL_END, CALLS),
        markup=(re.escape(END),),
    ),
    write=write,
    envelopes=(Envelope(channel_call, layout=CallsLayout(open=lit(TOOL_CALLS), close=lit(CALLS)), content=True),),
    signs=(
        TemplateSign(
            1057,
            "<|tool_response:begin|>, <|tool_response:name|> and <|tool_response:result|> (llama.cpp: Solar Open)",
            ("<|tool_response:begin|>", "<|tool_response:name|>", "<|tool_response:result|>"),
        ),
    ),
    template="solar_open.jinja",
)
