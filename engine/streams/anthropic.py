"""Anthropic Messages streams (``/v1/messages``): ``message_*`` and ``content_block_*`` events, judged.

A tool call is a content block: ``content_block_start`` with a ``tool_use``
block announces it (its ``id`` and ``name``), ``content_block_delta`` events
with an ``input_json_delta`` carry ``partial_json`` pieces of its input,
``content_block_stop`` closes it; ``message_delta`` gives the ``stop_reason``
and ``message_stop`` ends the stream. The contract, each rule with its id:
``delta-unannounced`` (a delta for a block never started),
``delta-after-done`` (after its ``content_block_stop``), ``header-incomplete``
(a ``tool_use`` block without ``id`` or ``name``), ``index-not-sequential``
(blocks not 0, 1, 2...), ``index-reused`` (a block started twice),
``invalid-json-arguments`` (``partial_json`` pieces that do not build valid
JSON), ``finish-reason-mismatch`` (a ``stop_reason`` that disagrees with the
blocks), ``malformed-chunk``, ``stream-error`` (an ``error`` event) and
``stream-truncated`` (no ``message_stop``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from callscope.engine.core import rules
from callscope.engine.core.json_text import dumps
from callscope.engine.core.wire import Violation
from callscope.engine.streams.assembly import Call, StreamBuilder, clip, is_json
from callscope.engine.streams.reader import ProtocolReader, good_index
from callscope.engine.streams.sse import SseEvent

PROTOCOL = "anthropic"
STOP_REASONS = ("end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal")


class AnthropicReader(ProtocolReader):
    protocol = PROTOCOL
    label = "Anthropic Messages"
    path = "/v1/messages"
    #: Event types only this protocol sends (how a recorded stream is recognised).
    EVENTS: ClassVar[frozenset[str]] = frozenset({
        "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
        "message_stop", "ping",
    })

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._blocks: dict[int, str] = {}  # index -> block type
        self._calls: dict[int, Call] = {}
        self._stopped: set[int] = set()
        self._initial: dict[int, str] = {}  # a tool_use block's start input, used when no input_json_delta came
        self.stopped = False

    def chunk(self, step: int, ms: float | None, silence: float, event: SseEvent, obj: dict[str, Any]) -> None:
        builder = self.primary
        kind = self.typed(builder, step, event, obj)
        if kind == "message_start":
            message = obj.get("message")
            if isinstance(message, dict):
                self.take_identity(message.get("id"), 0, message.get("model"))
                builder.role(step, ms)
            else:
                self.wrong_type(builder, step, "message", message, "an object")
        elif kind == "content_block_start":
            self._start(builder, step, ms, silence, obj)
        elif kind == "content_block_delta":
            self._delta(builder, step, ms, silence, obj)
        elif kind == "content_block_stop":
            self._stop(builder, step, ms, silence, obj)
        elif kind == "message_delta":
            delta = obj.get("delta")
            reason = delta.get("stop_reason") if isinstance(delta, dict) else None
            if isinstance(reason, str) and reason:
                if reason not in STOP_REASONS:
                    self.malformed(builder, step, "stop_reason",
                                   f"stop_reason {clip(reason, 40)} is not one of {', '.join(STOP_REASONS)}")
                builder.finish_reason_at(step, ms, reason)
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            error = obj.get("error")
            message = error.get("message", error) if isinstance(error, dict) else error
            builder.violate(rules.STREAM_ERROR, step, f"server sent an error event: {clip(str(message))}")

    def _index(self, builder: StreamBuilder, step: int, obj: dict[str, Any]) -> int | None:
        index = obj.get("index")
        if not good_index(index):
            self.wrong_type(builder, step, "index", index, "a block number 0, 1, 2...")
            return None
        return index

    def _start(self, builder: StreamBuilder, step: int, ms: float | None, silence: float, obj: dict[str, Any]) -> None:
        index = self._index(builder, step, obj)
        block = obj.get("content_block")
        if index is None:
            return
        if not isinstance(block, dict):
            self.wrong_type(builder, step, "content_block", block, "an object")
            return
        if index in self._blocks:
            builder.violate(rules.INDEX_REUSED, step, f"content block {index} started a second time", index)
            return
        if index != len(self._blocks):
            builder.once(None, rules.INDEX_NOT_SEQUENTIAL, step,
                         f"content block {len(self._blocks)} of the message came with index {index}: blocks are "
                         "numbered 0, 1, 2... in order")
        kind = block.get("type")
        self._blocks[index] = kind if isinstance(kind, str) else ""
        if kind != "tool_use":
            text = block.get("text")
            if kind == "text" and isinstance(text, str) and text:
                builder.content(step, ms, text)
            return
        call_id = block.get("id") if isinstance(block.get("id"), str) and block.get("id") else None
        name = block.get("name") if isinstance(block.get("name"), str) and block.get("name") else None
        call = builder.open_call(step, ms, silence, index, call_id, name)
        self._calls[index] = call
        start_input = block.get("input")
        self._initial[index] = dumps(start_input if start_input is not None else {}, ensure_ascii=False)
        missing = [what for what, ok in (("id", call_id is not None), ("name", name is not None)) if not ok]
        if missing:
            builder.once(call, rules.HEADER_INCOMPLETE, step,
                         f"tool_use block {index} started without {' and '.join(missing)}")

    def _delta(self, builder: StreamBuilder, step: int, ms: float | None, silence: float, obj: dict[str, Any]) -> None:
        index = self._index(builder, step, obj)
        delta = obj.get("delta")
        if index is None:
            return
        if not isinstance(delta, dict):
            self.wrong_type(builder, step, "delta", delta, "an object")
            return
        kind = delta.get("type")
        if index not in self._blocks:
            builder.violate(rules.DELTA_UNANNOUNCED, step,
                            f"a {kind} for content block {index}, which no content_block_start announced", index)
            self._blocks[index] = "tool_use" if kind == "input_json_delta" else "text"
            if kind == "input_json_delta":
                self._calls[index] = builder.open_call(step, ms, silence, index, None, None)
                self._initial[index] = "{}"
        elif index in self._stopped:
            call = self._calls.get(index)
            if call is not None:
                call.corrupted = True
            builder.once(call, rules.DELTA_AFTER_DONE, step,
                         f"a {kind} for content block {index} after its content_block_stop")
        if kind == "text_delta":
            text = delta.get("text")
            if isinstance(text, str) and text:
                builder.content(step, ms, text)
        elif kind == "thinking_delta":
            text = delta.get("thinking")
            if isinstance(text, str) and text:
                builder.reasoning(step, ms, text)
        elif kind == "input_json_delta":
            call = self._calls.get(index)
            if call is None:
                self.malformed(builder, step, "input_json_delta",
                               f"an input_json_delta for content block {index}, a {self._blocks[index]!r} block")
                return
            piece = delta.get("partial_json")
            if not isinstance(piece, str):
                self.wrong_type(builder, step, "delta.partial_json", piece, "a string")
                return
            builder.fragment(step, ms, silence, call, piece)

    def _stop(self, builder: StreamBuilder, step: int, ms: float | None, silence: float, obj: dict[str, Any]) -> None:
        index = self._index(builder, step, obj)
        if index is None:
            return
        if index not in self._blocks:
            builder.violate(rules.DELTA_UNANNOUNCED, step, f"content_block_stop for block {index}, never started", index)
            return
        self._stopped.add(index)
        call = self._calls.get(index)
        if call is not None:
            call.done = True
            if not call.length:  # no input_json_delta: the input is the start block's (``{}``)
                builder.add_arguments(step, ms, silence, call, self._initial.get(index, "{}"))

    # ------------------------------------------------------------ the end

    def finished_properly(self) -> bool:
        return self.stopped

    def missing_end(self) -> list[str]:
        return [what for what, ok in (("stop_reason", self.primary.finish_reason is not None),
                                      ("message_stop", self.stopped)) if not ok]

    def truncated(self, builder: StreamBuilder) -> bool:
        return not self.stopped or builder.finish_reason is None

    def finish_cause(self, builder: StreamBuilder) -> str:
        return "length" if builder.finish_reason == "max_tokens" else "stop"

    def end(self, builder: StreamBuilder, choice: int, truncated: bool) -> list[Violation]:
        reason = builder.finish_reason
        calls = builder.calls
        at = builder.finish_step.step
        if reason == "tool_use" and not calls:
            return [Violation(rules.FINISH_REASON_MISMATCH, at, "stop_reason is tool_use but no tool_use block came")]
        if calls and reason in ("end_turn", "stop_sequence"):
            return [Violation(rules.FINISH_REASON_MISMATCH, at,
                              f"{len(calls)} tool_use block(s) came but stop_reason is {reason}; clients that "
                              "dispatch on stop_reason ignore them")]
        cut = [c for c in calls if not c.corrupted and not is_json(c.arguments())]
        if reason == "tool_use" and cut:
            return [Violation(rules.FINISH_REASON_MISMATCH, at,
                              f"stop_reason is tool_use but the input of block {cut[0].index} does not parse "
                              "(cut off?): that stop is max_tokens", cut[0].index)]
        return []
