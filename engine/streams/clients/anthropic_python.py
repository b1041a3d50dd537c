"""anthropic (PyPI) 2.17.0: ``messages.stream()`` and ``get_final_message()``.

``anthropic/_streaming.py`` hands on only events with an ``event:`` field (``ping`` is
skipped, ``error`` raises); ``anthropic/lib/streaming/_messages.py`` (``accumulate_event``)
ignores events before ``message_start``, appends a block on ``content_block_start`` and
reads the block of every delta and stop by its ``index`` as a list position (a block
never started raises ``IndexError``). A tool_use block's input is its ``partial_json``
fragments parsed after each one (jiter, partial mode: a document cut short is closed,
anything malformed raises ``ValueError``); ``message_delta`` needs its ``usage``.
``stop_reason`` is kept but never checked: a tool_use block ending in ``end_turn``
is still a tool call.
"""

from __future__ import annotations

import json
from typing import Any

from callscope.engine.streams.clients._partial_json import completed
from callscope.engine.streams.clients.base import NOT_JSON, AssembledCall, Assembler, ClientProfile, Raised, fresh
from callscope.engine.streams.sse import SseEvent

_TRACKS_INPUT = ("tool_use", "server_tool_use")


class MessagesAssembler(Assembler):
    __slots__ = ("blocks", "buffers", "started")

    def __init__(self, protocol: str, tools: frozenset[str] | None = None) -> None:
        super().__init__(protocol, tools)
        self.blocks: list[dict[str, Any]] = []
        self.buffers: dict[Any, str] = {}
        self.started = False

    def event(self, event: SseEvent, obj: Any) -> None:
        if event.event in ("", "ping"):
            return
        if event.event == "error":
            raise Raised("APIStatusError", event.data[:120])
        if obj is NOT_JSON:
            raise Raised("JSONDecodeError", "Expecting value: line 1 column 1 (char 0)")
        if not isinstance(obj, dict):
            raise Raised("TypeError", "Unexpected event runtime type, after deserialising twice")
        kind = obj.get("type")
        if not self.started:
            if kind == "message_start":
                message = obj.get("message")
                self.blocks = [fresh(b) for b in message.get("content") or []] if isinstance(message, dict) else []
                self.started = True
            return
        if kind == "content_block_start":
            block = obj.get("content_block")
            self.blocks.append(fresh(block) if isinstance(block, dict) else {})
        elif kind == "content_block_delta":
            self._delta(obj)
        elif kind == "content_block_stop":
            self.blocks[obj.get("index")]
        elif kind == "message_delta":
            usage = obj.get("usage")
            if not isinstance(usage, dict):
                raise AttributeError("'NoneType' object has no attribute 'output_tokens'")

    def _delta(self, obj: dict[str, Any]) -> None:
        index = obj.get("index")
        block = self.blocks[index]
        delta = obj.get("delta") if isinstance(obj.get("delta"), dict) else {}
        kind = delta.get("type")
        if kind == "text_delta" and block.get("type") == "text":
            block["text"] = (block.get("text") or "") + delta.get("text")
        elif kind == "input_json_delta" and block.get("type") in _TRACKS_INPUT:
            self.buffers[index] = self.buffers.get(index, "") + delta.get("partial_json")

    def finish(self) -> tuple[dict[int, list[AssembledCall]], dict[int, str]]:
        if not self.started:
            raise AssertionError("no message_start was received")
        for index, buffer in self.buffers.items():
            # The SDK parses the buffer after every fragment; a prefix that does not parse never starts to, so
            # parsing the whole once gives the same input, or the same ValueError (here, at the end).
            if buffer:
                try:
                    self.blocks[index]["input"] = completed(buffer)
                except ValueError as exc:
                    raise ValueError(f"Unable to parse tool parameter JSON from model. Error: {exc}") from None
        calls, texts = [], []
        for block in self.blocks:
            if block.get("type") == "tool_use":
                calls.append(AssembledCall(block.get("id"), block.get("name"), json.dumps(block.get("input")),
                                           parsed=True))
            elif block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
        return {0: calls}, {0: "".join(texts)}


PROFILE = ClientProfile(
    id="anthropic-python", library="anthropic (PyPI)", version="2.17.0",
    assemblers={"anthropic": MessagesAssembler}, default=True,
    about="messages.stream(): blocks by index, input parsed from partial_json, stop_reason not checked")
