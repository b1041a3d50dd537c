"""@anthropic-ai/sdk (npm) 1.17.0: ``messages.stream()`` and ``finalMessage()``.

``src/core/streaming.ts`` hands on only events with an ``event:`` field (``ping``
skipped, ``error`` throws); ``src/lib/MessageStream.ts`` (``#accumulateMessage``)
ignores events before ``message_start``, appends a block on ``content_block_start``,
adds ``partial_json`` to the block at ``content.at(index)`` (nothing when there is
none), then reads ``content.at(-1).type``: with no block at all that throws
``TypeError``. The input is parsed from the whole buffer when the block stops
(a malformed one throws). The message counts only once ``message_stop`` arrives:
without it ``finalMessage()`` throws. ``stop_reason`` is not checked.
"""

from __future__ import annotations

import json
from typing import Any

from callscope.engine.streams.clients import _js
from callscope.engine.streams.clients._js import UNDEFINED, get
from callscope.engine.streams.clients._partial_json import completed
from callscope.engine.streams.clients.base import NOT_JSON, AssembledCall, Assembler, ClientProfile, Raised, fresh
from callscope.engine.streams.sse import SseEvent

_TRACKS_INPUT = ("tool_use", "server_tool_use")


def _at(items: list[Any], key: Any) -> Any:
    """``Array.prototype.at(key)`` (a missing or non-integer key reads as 0; negative counts from the end)."""
    position = 0 if key is UNDEFINED or key is None or isinstance(key, bool) else key
    if isinstance(position, float):
        position = int(position)
    if not isinstance(position, int):
        return UNDEFINED
    if position < 0:
        position += len(items)
    return items[position] if 0 <= position < len(items) else UNDEFINED


class MessagesAssembler(Assembler):
    __slots__ = ("blocks", "started", "final")

    def __init__(self, protocol: str, tools: frozenset[str] | None = None) -> None:
        super().__init__(protocol, tools)
        self.blocks: list[dict[str, Any]] = []
        self.started = False
        self.final: list[dict[str, Any]] | None = None

    def event(self, event: SseEvent, obj: Any) -> None:
        if event.event in ("", "ping"):
            return
        if event.event == "error":
            raise Raised("APIError", event.data[:120])
        if obj is NOT_JSON:
            raise Raised("SyntaxError", "Unexpected token in JSON")
        kind = get(obj, "type")
        if kind == "message_start":
            if self.started:
                raise Raised("AnthropicError", 'Unexpected event order, got message_start before receiving '
                                               '"message_stop"')
            message = get(obj, "message")
            content = get(message, "content")
            self.blocks = [fresh(b) for b in content] if isinstance(content, list) else []
            self.started = True
            return
        if not self.started:
            return
        if kind == "content_block_start":
            block = get(obj, "content_block")
            self.blocks.append(dict(block) if isinstance(block, dict) else {})
        elif kind == "content_block_delta":
            self._delta(obj)
        elif kind == "content_block_stop":
            block = _at(self.blocks, get(obj, "index"))
            if isinstance(block, dict) and "_buffer" in block:
                block["input"] = self._input(block.pop("_buffer"))
        elif kind == "message_stop":
            self.final = [dict(b) for b in self.blocks]
            for block in self.final:
                if "_buffer" in block:
                    block["input"] = self._input(block.pop("_buffer"))

    def _delta(self, obj: Any) -> None:
        delta = get(obj, "delta")
        kind = get(delta, "type")
        block = _at(self.blocks, get(obj, "index"))
        if kind == "input_json_delta" and isinstance(block, dict) and block.get("type") in _TRACKS_INPUT:
            block["_buffer"] = block.get("_buffer", "") + _js.string(get(delta, "partial_json"))
        elif kind == "text_delta" and isinstance(block, dict) and block.get("type") == "text":
            block["text"] = _js.string(block.get("text") or "") + _js.string(get(delta, "text"))
        last = self.blocks[-1] if self.blocks else UNDEFINED
        if last is UNDEFINED:
            raise Raised("TypeError", "Cannot read properties of undefined (reading 'type')")

    @staticmethod
    def _input(buffer: str) -> Any:
        if not buffer:
            return {}
        try:
            return completed(buffer)
        except ValueError as exc:
            raise Raised("SyntaxError", str(exc)) from None

    def finish(self) -> tuple[dict[int, list[AssembledCall]], dict[int, str]]:
        if self.final is None:
            raise Raised("AnthropicError", "stream ended without producing a Message with role=assistant")
        calls, texts = [], []
        for block in self.final:
            if block.get("type") == "tool_use":
                calls.append(AssembledCall(block.get("id"), block.get("name"), json.dumps(block.get("input")),
                                           parsed=True))
            elif block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
        return {0: calls}, {0: "".join(texts)}


PROFILE = ClientProfile(
    id="anthropic-ts", library="@anthropic-ai/sdk (npm)", version="1.17.0",
    assemblers={"anthropic": MessagesAssembler}, default=True,
    about="messages.stream(): the message counts at message_stop, input parsed when a block stops")
