"""Hermes 2 Pro / Qwen 2.5 tool calls: ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``.

Grammar, as llama.cpp's Hermes 2 Pro handler reads it (several blocks allowed)::

    [ws] [<think> reasoning </think> [ws]]*  content  (<tool_call> ws {call} ws </tool_call> ws  content)*

Reasoning (llama.cpp ``try_parse_reasoning``): a ``<think>`` at the very start
(leading whitespace before it stays content) opens reasoning until
``</think>``; whitespace after ``</think>`` is skipped and another
``<think>`` block may follow. Reasoning is stripped like llama.cpp does:
leading whitespace is dropped, trailing whitespace is held back until
something else follows, and dropped at ``</think>``. With
``thinking=True`` (the prompt itself ended with ``<think>``, as
Qwen3 templates do) the generation starts inside reasoning and only a bare
``</think>`` closes it. Without it a bare ``</think>`` in content is taken as
that same closer of a reasoning block the prompt opened: the tag itself is
dropped (it is a control marker, never prose), whitespace after it is
skipped, and the text before it, already streamed, stays content.

Tool calls: ``<tool_call>`` opens a block; the JSON call object inside is read
by :class:`~engine.formats.json_calls.CallObjectScan` (the arguments stream
verbatim, see that module for the exact rules). After the object, whitespace
and ``</tool_call>`` are consumed, then whitespace. Text inside reasoning is
never a call.

Bad input, decided on the text alone so that every prefix parses the same
whether fed at once or piece by piece:

* Until the call opens (its name is complete or its arguments start) the
  ``<tool_call>`` tag and what follows are held back. If the text stops
  looking like a call first (not an object, a JSON syntax error, a non-string
  name, an object that closes without name or arguments), the tag is released
  as content and scanning resumes right after it, in content: so
  ``<tool_call>not json</tool_call>`` is content, verbatim.
* Once the call has opened it stays a call. A JSON syntax error after that
  (a half-written object followed by ``</tool_call>``, say) ends the call
  with the arguments written so far (the engine reports invalid JSON), and
  the rest of the block up to ``</tool_call>`` is dropped.
* A non-space character after the object where ``</tool_call>`` should be
  means the closer is missing: content resumes there.
* End of generation: held-back text that turned out not to be a marker is
  released (a trailing ``<tool_c`` becomes content, an unopened
  ``<tool_call>{"name": "ge`` is content); a half-typed closer after a call is
  dropped; a call cut mid-way keeps its arguments so far.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from engine.formats.base import FormatParser
from engine.formats.json_calls import CallObjectScan
from engine.formats.markers import find_first, held_back_from

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
THINK = "<think>"
END_THINK = "</think>"
CONTENT_MARKERS = (OPEN, END_THINK)

(
    _START,
    _REASONING,
    _AFTER_THINK,
    _CONTENT,
    _CALL,
    _AFTER_CALL,
    _SKIP_BLOCK,
    _AFTER_CLOSE,
) = range(8)


def _skip_space(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos].isspace():
        pos += 1
    return pos


class Parser(FormatParser):
    format_id = "hermes"
    description = "Hermes 2 Pro / Qwen2.5: <tool_call>{json}</tool_call> blocks, optional <think> reasoning"

    def __init__(self, tools: list[dict[str, Any]] | None = None, *, thinking: bool = False) -> None:
        super().__init__(tools)
        self._state = _REASONING if thinking else _START
        self._pending = ""  # text to re-examine with the next piece (a possible marker, held whitespace)
        self._reasoning_begun = False  # leading whitespace of the reasoning block skipped
        self._call: CallObjectScan | None = None
        self._held: list[str] = []  # the <tool_call> block so far, while the call has not opened

    # ------------------------------------------------------------ driving

    def _feed(self, text: str) -> None:
        if self._pending:
            text = self._pending + text
            self._pending = ""
        self._run(text, 0)

    def _run(self, text: str, pos: int) -> None:
        handlers = self._handlers
        while pos < len(text):
            text, pos = handlers[self._state](self, text, pos)

    def _finish(self) -> None:
        while True:
            if self._state == _CALL and self._call is not None:
                if not self._call.opened:
                    self._run(*self._not_a_call(""))
                    continue
                self._call.truncate()
                self._call = None
            break
        pending, self._pending = self._pending, ""
        self._settle(pending)

    def _settle(self, pending: str) -> None:
        """End of generation: what to do with held-back text in the current state."""
        if not pending:
            return
        if self._state == _REASONING:
            self._reasoning(pending.rstrip())
        elif self._state in (_START, _AFTER_THINK, _CONTENT):
            self._content(pending)
        # _AFTER_CALL: a half-typed </tool_call>; _SKIP_BLOCK: the broken block. Both dropped.

    # ------------------------------------------------------------ states

    def _at_start(self, text: str, pos: int) -> tuple[str, int]:
        end = _skip_space(text, pos)
        self._content(text[pos:end])  # llama.cpp keeps whitespace before <think> as content
        rest = text[end:]
        if not rest:
            return text, len(text)
        if rest.startswith(THINK):
            self._state = _REASONING
            return text, end + len(THINK)
        if THINK.startswith(rest):
            self._pending = rest
            return text, len(text)
        self._state = _CONTENT
        return text, end

    def _in_reasoning(self, text: str, pos: int) -> tuple[str, int]:
        if not self._reasoning_begun:
            pos = _skip_space(text, pos)
            if pos >= len(text):
                return text, pos
            self._reasoning_begun = True
        end = text.find(END_THINK, pos)
        if end >= 0:
            self._reasoning(text[pos:end].rstrip())
            self._reasoning_begun = False
            self._state = _AFTER_THINK
            return text, end + len(END_THINK)
        hold = held_back_from(text, (END_THINK,), pos)
        body = text[pos:hold].rstrip()
        self._reasoning(body)
        self._pending = text[pos + len(body) :]
        return text, len(text)

    def _after_think(self, text: str, pos: int) -> tuple[str, int]:
        pos = _skip_space(text, pos)
        rest = text[pos:]
        if not rest:
            return text, pos
        if rest.startswith(THINK):
            self._state = _REASONING
            return text, pos + len(THINK)
        if THINK.startswith(rest):
            self._pending = rest
            return text, len(text)
        self._state = _CONTENT
        return text, pos

    def _in_content(self, text: str, pos: int) -> tuple[str, int]:
        found = find_first(text, CONTENT_MARKERS, pos)
        if found is None:
            hold = held_back_from(text, CONTENT_MARKERS, pos)
            self._content(text[pos:hold])
            self._pending = text[hold:]
            return text, len(text)
        at, marker = found
        self._content(text[pos:at])
        if marker == END_THINK:
            self._state = _AFTER_THINK
        else:
            self._state = _CALL
            self._call = CallObjectScan(self)
            self._held = [OPEN]
        return text, at + len(marker)

    def _in_call(self, text: str, pos: int) -> tuple[str, int]:
        call = self._call
        stop = call.feed(text, pos)
        if call.failed:
            return self._not_a_call(text[pos:])
        if call.done:
            self._state = _SKIP_BLOCK if call.scanner.failed else _AFTER_CALL
            self._call = None
            self._held = []
            return text, stop
        if call.opened:
            self._held = []
        else:
            self._held.append(text[pos:])
        return text, len(text)

    def _not_a_call(self, rest: str) -> tuple[str, int]:
        """The held block is not a call: its tag becomes content, scanning resumes after it."""
        held = "".join(self._held) + rest
        self._held = []
        self._call = None
        self._content(OPEN)
        self._state = _CONTENT
        return held[len(OPEN) :], 0

    def _after_call(self, text: str, pos: int) -> tuple[str, int]:
        pos = _skip_space(text, pos)
        rest = text[pos:]
        if not rest:
            return text, pos
        if rest.startswith(CLOSE):
            self._state = _AFTER_CLOSE
            return text, pos + len(CLOSE)
        if CLOSE.startswith(rest):
            self._pending = rest
            return text, len(text)
        self._state = _CONTENT  # the closer is missing: content resumes here
        return text, pos

    def _skip_block(self, text: str, pos: int) -> tuple[str, int]:
        end = text.find(CLOSE, pos)
        if end >= 0:
            self._state = _AFTER_CLOSE
            return text, end + len(CLOSE)
        self._pending = text[held_back_from(text, (CLOSE,), pos) :]
        return text, len(text)

    def _after_close(self, text: str, pos: int) -> tuple[str, int]:
        pos = _skip_space(text, pos)
        if pos < len(text):
            self._state = _CONTENT
        return text, pos

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _START: _at_start,
        _REASONING: _in_reasoning,
        _AFTER_THINK: _after_think,
        _CONTENT: _in_content,
        _CALL: _in_call,
        _AFTER_CALL: _after_call,
        _SKIP_BLOCK: _skip_block,
        _AFTER_CLOSE: _after_close,
    }
