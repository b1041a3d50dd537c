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
by :class:`~callscope.engine.formats._kit.json_call_machine.CallObjectScan` (the arguments stream
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

import json
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.gbnf import Envelope, around_arguments
from callscope.engine.formats._kit.json_call_machine import CallObjectMachine, CallObjectScan
from callscope.engine.formats._kit.marker_search import find_first, held_back_from
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import skip_space
from callscope.engine.formats._kit.writing import dumps, newline_between, think

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
THINK = "<think>"
END_THINK = "</think>"
#: What ends plain content: a call block, or the closer of a reasoning block the prompt opened.
_CONTENT_STOPS = (OPEN, END_THINK)

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


class Parser(CallObjectMachine):
    """Incremental Hermes parser (see the module docstring for the rules)."""

    _content_state = _CONTENT
    _opener = OPEN

    def __init__(self, tools: list[dict[str, Any]] | None = None, *, thinking: bool = False) -> None:
        super().__init__(tools, _REASONING if thinking else _START)
        self._reasoning_begun = False  # leading whitespace of the reasoning block skipped

    def _finish(self) -> None:
        self._settle_call()
        pending = self._take_pending()
        if not pending:
            return
        if self._state == _REASONING:
            self._reasoning(pending.rstrip())
        elif self._state in (_START, _AFTER_THINK, _CONTENT):
            self._content(pending)
        # _AFTER_CALL: a half-typed </tool_call>; _SKIP_BLOCK: the broken block. Both dropped.

    # ------------------------------------------------------------ states

    def _at_start(self, text: str, pos: int) -> tuple[str, int]:
        end = skip_space(text, pos)
        self._content(text[pos:end])  # llama.cpp keeps whitespace before <think> as content
        return self._marker_or_content(text, end, THINK, _REASONING)

    def _after_think(self, text: str, pos: int) -> tuple[str, int]:
        return self._marker_or_content(text, skip_space(text, pos), THINK, _REASONING)

    def _marker_or_content(self, text: str, pos: int, marker: str, then: int) -> tuple[str, int]:
        """At ``pos``: ``marker`` (go to ``then`` after it), a prefix of it (wait), or content from here."""
        rest = text[pos:]
        if rest.startswith(marker):
            self._state = then
            return text, pos + len(marker)
        if marker.startswith(rest):  # also an empty rest: the next piece decides
            self._pending = rest
            return text, len(text)
        self._state = _CONTENT
        return text, pos

    def _in_reasoning(self, text: str, pos: int) -> tuple[str, int]:
        if not self._reasoning_begun:
            pos = skip_space(text, pos)
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

    def _in_content(self, text: str, pos: int) -> tuple[str, int]:
        found = find_first(text, _CONTENT_STOPS, pos)
        if found is None:
            hold = held_back_from(text, _CONTENT_STOPS, pos)
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

    def _call_done(self, call: CallObjectScan) -> None:
        self._state = _SKIP_BLOCK if call.scanner.failed else _AFTER_CALL

    def _after_call(self, text: str, pos: int) -> tuple[str, int]:
        # anything but </tool_call> after the object: the closer is missing, content resumes there
        return self._marker_or_content(text, skip_space(text, pos), CLOSE, _AFTER_CLOSE)

    def _skip_block(self, text: str, pos: int) -> tuple[str, int]:
        end = text.find(CLOSE, pos)
        if end >= 0:
            self._state = _AFTER_CLOSE
            return text, end + len(CLOSE)
        self._pending = text[held_back_from(text, (CLOSE,), pos) :]
        return text, len(text)

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {
        _START: _at_start,
        _REASONING: _in_reasoning,
        _AFTER_THINK: _after_think,
        _CONTENT: _in_content,
        _CALL: CallObjectMachine._in_call,
        _AFTER_CALL: _after_call,
        _SKIP_BLOCK: _skip_block,
        _AFTER_CLOSE: CallObjectMachine._layout_then_content,
    }


# -------------------------------------------------------------------- spec


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """``<think>`` reasoning, content, then one ``<tool_call>`` block per call."""
    blocks = "".join(f"<tool_call>\n{dumps({'name': name, 'arguments': args})}\n</tool_call>" for name, args in calls)
    return think(reasoning) + content + newline_between(content, calls) + blocks


SPEC = FormatSpec(
    id="hermes",
    description="Hermes 2 Pro / Qwen2.5: <tool_call>{json}</tool_call> blocks, optional <think> reasoning",
    parser=Parser,
    thinking=True,
    markers=Markers(leak=(OPEN, CLOSE), markup=(r"</?think>",)),
    write=write,
    envelopes=(
        Envelope(
            around_arguments(lambda name: f'<tool_call>\n{{"name": {json.dumps(name)}, "arguments": ', "}\n</tool_call>"),
            content=True,
        ),
    ),
    signs=(TemplateSign(700, "<tool_call> marker (llama.cpp: Hermes 2 Pro / Qwen 2.5)", (OPEN,)),),
    template="hermes.jinja",
)
