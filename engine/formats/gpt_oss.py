"""OpenAI harmony (gpt-oss): channels of messages; a tool call is a message to ``functions.NAME``.

A generation is a run of messages. It usually starts right after the prompt's
``<|start|>assistant``, so the first message has no ``<|start|>``::

    <|channel|>analysis<|message|>REASONING<|end|>
    <|start|>assistant<|channel|>commentary<|message|>PREAMBLE<|end|>
    <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{"json": 1}<|call|>
    <|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>{...}<|call|>
    <|start|>assistant<|channel|>final<|message|>CONTENT<|return|>

Rules (llama.cpp ``common_chat_parse_gpt_oss`` and vLLM's harmony parser agree on the routing):

* A header is everything from the message start (after ``<|start|>``) to ``<|message|>``; it is held
  until complete, so the name is final when the call appears. A recipient ``to=functions.NAME``
  (before or after ``<|channel|>``, any channel) makes the message a call named NAME; otherwise
  ``analysis`` is reasoning and every other channel (``final``, ``commentary`` preambles, none)
  is content. A recipient that is not ``functions.*`` (a built-in tool) follows its channel.
* A body ends at ``<|end|>``, ``<|call|>`` or ``<|return|>``; a ``<|start|>`` or ``<|channel|>``
  also ends it and begins the next message (the model skipped the end marker). Call arguments
  are the raw body text, streamed append-only; a half-typed marker is held back and never enters
  them. The first ``<|call|>`` ends the arguments even inside a JSON string: a text-level parser
  cannot tell the special token from the same characters, and the model writes it as one
  special token, never inside a string.
* Text that cannot be a header (it must begin with ``<|channel|>``, ``assistant``, ``to=`` or
  be empty; no newline; only ``<|channel|>``/``<|constrain|>`` markers inside) is content up to
  the fault; a header longer than :data:`HEADER_LIMIT` is content from its start. Text between
  messages is content too (leading whitespace dropped). Stray ``<|end|>``/``<|call|>``/``<|return|>``/``<|message|>``
  between messages are dropped.
* Terminal parse: held-back text that is not a marker is released to content or reasoning; a
  call truncated mid-arguments keeps the arguments so far; a truncated header produces nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import Envelope, around_arguments
from callscope.engine.formats._kit.marker_search import held_back_from
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import BufferMachine
from callscope.engine.formats._kit.writing import dumps

START = "<|start|>"
CHANNEL = "<|channel|>"
CONSTRAIN = "<|constrain|>"
MESSAGE = "<|message|>"
END = "<|end|>"
CALL = "<|call|>"
RETURN = "<|return|>"

#: Longest header accepted (role, recipient, channel, constraint); longer text is content.
HEADER_LIMIT = 512

_BODY_ENDS = (END, CALL, RETURN, START, CHANNEL)
_BETWEEN_MARKERS = (START, CHANNEL, END, CALL, RETURN, MESSAGE)
_HEADER_STARTS = (CHANNEL, MESSAGE, "assistant", " to=", "to=")
_HEADER_MARKERS = (CHANNEL, CONSTRAIN)
_RECIPIENT = re.compile(r"to=([^\s<]+)")
_CHANNEL_NAME = re.compile(r"<\|channel\|>\s*([^\s<]*)")
_FUNCTIONS = "functions."

_HEADER = "header"
_BODY = "body"
_BETWEEN = "between"

_CONTENT = "content"
_REASONING = "reasoning"
_ARGUMENTS = "arguments"


def _header_fault(header: str, complete: bool) -> int:
    """Index of the first character that cannot belong to a header, or -1 (none yet).

    A fault, once reported for a prefix, is reported at the same index for every extension
    of it (the parse must not depend on how the text was split): a half-typed marker at the
    end of an incomplete header is not a fault yet, and a header over the limit is a fault
    at its start.
    """
    if not complete and START.startswith(header):
        return -1
    start = len(START) if header.startswith(START) else 0
    first = header[start:]
    if first and not any(first.startswith(s) or (not complete and s.startswith(first)) for s in _HEADER_STARTS):
        return start
    measured = header if complete else header[: held_back_from(header, (MESSAGE,))]
    if len(measured) > HEADER_LIMIT:
        return start
    fault = -1
    for pos in (header.find("\n", start), header.find("\r", start)):
        if 0 <= pos and (fault < 0 or pos < fault):
            fault = pos
    pos = header.find("<", start)
    while 0 <= pos and (fault < 0 or pos < fault):
        tail = header[pos:]
        if not any(tail.startswith(m) for m in _HEADER_MARKERS) and not (
            not complete and any(m.startswith(tail) for m in _HEADER_MARKERS + (MESSAGE,))
        ):
            return pos
        pos = header.find("<", pos + 1)
    return fault


def _route(header: str) -> tuple[str, str | None]:
    """Where a message's body goes (content/reasoning/arguments) and, for a call, the function name."""
    recipient = _RECIPIENT.search(header)
    channel = _CHANNEL_NAME.search(header)
    target = recipient.group(1) if recipient else ""
    if target.startswith(_FUNCTIONS) and len(target) > len(_FUNCTIONS):
        return _ARGUMENTS, target[len(_FUNCTIONS) :]
    if channel is not None and channel.group(1) == "analysis":
        return _REASONING, None
    return _CONTENT, None


class Parser(BufferMachine):
    """Incremental harmony parser (see the module docstring for the rules)."""

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        super().__init__(tools, _HEADER)  # _buf also holds a header of at most HEADER_LIMIT
        self._kind = _CONTENT  # where the current body goes

    def _finish(self) -> None:
        state, buf = self._state, self._take_buf()
        if state == _BODY and self._kind != _ARGUMENTS:
            self._say(buf)
        elif state == _BETWEEN:
            self._say_content(buf)
        # _HEADER: a truncated header names nothing; _BODY of a call: a half-typed marker is dropped.

    def _say(self, text: str) -> None:
        """The current message's body text, to where its header routed it."""
        if self._kind == _ARGUMENTS:
            self._arguments(self._call, text)
        elif self._kind == _REASONING:
            self._reasoning(text)
        else:
            self._content(text)

    # ---------------------------------------------------------------- states

    def _on_header(self) -> bool:
        buf = self._buf
        end = buf.find(MESSAGE)
        header = buf if end < 0 else buf[:end]
        fault = _header_fault(header, complete=end >= 0)
        if fault >= 0:  # not a header: content up to the fault, then between messages
            if buf.startswith(CHANNEL, fault):  # a header over the limit: its marker is content too
                fault += len(CHANNEL)
            self._skip_ws = False
            self._say_content(buf[:fault].removeprefix(START))
            self._buf = buf[fault:]
            self._state = _BETWEEN
            return True
        if end < 0:
            return False
        self._kind, name = _route(header)
        if self._kind == _ARGUMENTS:
            self._call = self._open_call()
            self._name_call(self._call, name or "")
        self._buf = buf[end + len(MESSAGE) :]
        self._state = _BODY
        return True

    def _on_body(self) -> bool:
        marker = self._scan(_BODY_ENDS, self._say)
        if marker is None:
            return False
        if not self._message_starts(marker):
            self._state = _BETWEEN
            self._skip_ws = True
        return True

    def _on_between(self) -> bool:
        marker = self._scan(_BETWEEN_MARKERS, self._say_content)
        if marker is not None:
            self._message_starts(marker)  # or a stray end marker, dropped
        return marker is not None

    def _message_starts(self, marker: str) -> bool:
        """Does ``marker`` (just consumed) begin the next message? Then read its header."""
        if marker == CHANNEL:  # the header starts with it (the body's end marker was skipped)
            self._buf = CHANNEL + self._buf
        elif marker != START:
            return False
        self._state = _HEADER
        return True

    _handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        _HEADER: _on_header,
        _BODY: _on_body,
        _BETWEEN: _on_between,
    }


# -------------------------------------------------------------------- spec

_NEXT = f"{END}{START}assistant"  # ends a message and starts the next one


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Messages: ``analysis`` reasoning, a ``commentary`` preamble (or ``final`` content), one per call."""
    out = f"{CHANNEL}analysis{MESSAGE}{reasoning}{_NEXT}" if reasoning else ""
    if content and not calls:
        return out + f"{CHANNEL}final{MESSAGE}{content}{RETURN}"
    if content:
        out += f"{CHANNEL}commentary{MESSAGE}{content}{_NEXT}"
    for i, (name, args) in enumerate(calls):
        if i:
            out += f"{START}assistant"
        out += f"{CHANNEL}commentary to={_FUNCTIONS}{name} {CONSTRAIN}json{MESSAGE}{dumps(args)}{CALL}"
    return out


SPEC = FormatSpec(
    id="gpt_oss",
    description=(
        "OpenAI harmony (gpt-oss): <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{json}<|call|>"
    ),
    parser=Parser,
    markers=Markers(leak=(START, CHANNEL, CONSTRAIN, MESSAGE, END, CALL, RETURN)),
    write=write,
    envelopes=(
        Envelope(
            around_arguments(lambda name: f"{CHANNEL}commentary to={_FUNCTIONS}{name} {CONSTRAIN}json{MESSAGE}", CALL),
            single_call=True,
        ),
    ),
    signs=(TemplateSign(800, f"{CHANNEL} marker (llama.cpp: GPT-OSS harmony)", (CHANNEL,)),),
    template="gpt_oss.jinja",
)
