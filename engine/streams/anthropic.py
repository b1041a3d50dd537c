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
from callscope.engine.core.wire import CONTENT, REASONING, Violation, WireChunk
from callscope.engine.streams.assembly import Call, StreamBuilder, clip, is_json
from callscope.engine.streams.reader import ProtocolReader, good_index
from callscope.engine.streams.spec import NaiveCalls, ProtocolSpec, described, function_of, schema_of
from callscope.engine.streams.sse import SseEvent
from callscope.engine.streams.writer import ProtocolWriter, WrittenCall, sse

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


# ---------------------------------------------------------------- the declaration

API_KEY_ENV = "ANTHROPIC_API_KEY"
VERSION = "2023-06-01"
#: Anthropic requires max_tokens; this is sent when the request does not say.
DEFAULT_MAX_TOKENS = 1024


def _recognise(event: SseEvent, data: Any) -> bool:
    """An event only Anthropic sends (``message_start``, ``content_block_delta``...), by name or data type."""
    kind = data.get("type") if isinstance(data, dict) else None
    return bool({n for n in (event.event, kind) if isinstance(n, str)} & AnthropicReader.EVENTS)


def auth(key: str) -> dict[str, str]:
    """``x-api-key`` (when a key is set) and the ``anthropic-version`` it requires, always."""
    return {"anthropic-version": VERSION, **({"x-api-key": key} if key else {})}


def request_body(body: dict[str, Any]) -> dict[str, Any]:
    """A chat-shaped body as a Messages request: ``system`` apart, ``{name, description, input_schema}`` tools,
    ``tool_choice`` as ``{type: auto|any|tool}``, a required ``max_tokens``."""
    body = dict(body)
    messages = body.get("messages") or []
    system = [m.get("content") for m in messages if m.get("role") == "system" and isinstance(m.get("content"), str)]
    if system and "system" not in body:
        body["system"] = "\n\n".join(system)
    body["messages"] = [m for m in messages if m.get("role") != "system"]
    if isinstance(body.get("tools"), list):
        body["tools"] = [
            {"name": f.get("name"), **described(f), "input_schema": schema_of(f)}
            if (f := function_of(t)) is not None else t
            for t in body["tools"]
        ]
    choice = body.get("tool_choice")
    if isinstance(choice, str):
        body["tool_choice"] = {"type": {"required": "any"}.get(choice, choice)}
    elif isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        body["tool_choice"] = {"type": "tool", "name": choice["function"].get("name")}
    body.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
    return body


def naive_read(obj: dict[str, Any], calls: NaiveCalls, content: dict[int, str]) -> None:
    """The naive client: a call per ``tool_use`` block, ``+=`` on its ``partial_json``, text deltas appended."""
    mine = calls.setdefault(0, {})
    kind = obj.get("type")
    if kind == "content_block_start" and obj["content_block"].get("type") == "tool_use":
        block = obj["content_block"]
        mine[obj["index"]] = {"id": block.get("id") or "", "name": block.get("name") or "", "arguments": ""}
    elif kind == "content_block_delta":
        delta = obj["delta"]
        if delta.get("type") == "input_json_delta":
            mine[obj["index"]]["arguments"] += delta["partial_json"]
        elif delta.get("type") == "text_delta":
            content[0] = content.get(0, "") + delta["text"]
    elif kind == "content_block_stop" and obj["index"] in mine and not mine[obj["index"]]["arguments"]:
        mine[obj["index"]]["arguments"] = "{}"


_STOP_REASONS = {"tool_calls": "tool_use", "length": "max_tokens", "content_filter": "refusal", "stop": "end_turn"}


class AnthropicWriter(ProtocolWriter):
    """An Anthropic Messages server: ``message_start``, one content block per text, thinking or ``tool_use`` (started,
    its deltas, stopped), ``message_delta`` with the ``stop_reason``, ``message_stop``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._blocks = 0
        self._open: tuple[str, int] | None = None  # the block being written: its kind and index
        self._call_blocks: dict[int, int] = {}  # call number -> its block index
        self._stopped = False
        self._message_id = "msg_" + self.identity.completion_id.rsplit("-", 1)[-1]

    def _message(self, content: list[dict[str, Any]], stop_reason: str | None) -> dict[str, Any]:
        return {"id": self._message_id, "type": "message", "role": "assistant", "model": self.model,
                "content": content, "stop_reason": stop_reason, "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0}}

    @staticmethod
    def _event(kind: str, **fields: Any) -> str:
        return sse({"type": kind, **fields}, kind)

    def start(self) -> list[str]:
        return [self._event("message_start", message=self._message([], None))]

    def _begin(self, kind: str, block: dict[str, Any]) -> list[str]:
        events = self._close()
        self._open = (kind, self._blocks)
        self._blocks += 1
        return events + [self._event("content_block_start", index=self._open[1], content_block=block)]

    def _close(self) -> list[str]:
        open_, self._open = self._open, None
        return [] if open_ is None else [self._event("content_block_stop", index=open_[1])]

    def events(self, chunk: WireChunk, call: WrittenCall | None) -> list[str]:
        kind = chunk.kind
        if kind in (CONTENT, REASONING) and chunk.text:
            block, delta = (("text", {"type": "text_delta", "text": chunk.text}) if kind == CONTENT else
                            ("thinking", {"type": "thinking_delta", "thinking": chunk.text}))
            events = [] if self._open is not None and self._open[0] == block else self._begin(
                block, {"type": "text", "text": ""} if block == "text" else {"type": "thinking", "thinking": ""})
            assert self._open is not None
            return events + [self._event("content_block_delta", index=self._open[1], delta=delta)]
        if call is None:
            return []
        events = []
        index = self._call_blocks.get(call.number)
        if index is None:
            events += self._begin("tool_use", {"type": "tool_use", "id": call.id, "name": call.name, "input": {}})
            index = self._call_blocks[call.number] = self._open[1]  # type: ignore[index]
        if chunk.text:
            events.append(self._event("content_block_delta", index=index,
                                      delta={"type": "input_json_delta", "partial_json": chunk.text}))
        return events

    def end(self) -> list[str]:
        events = self._close()
        reason = _STOP_REASONS.get(self.final_finish, "end_turn")
        return events + [self._event("message_delta", delta={"stop_reason": reason, "stop_sequence": None},
                                     usage={"output_tokens": 0}),
                         self._event("message_stop")]

    def message(self) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if self.reasoning:
            content.append({"type": "thinking", "thinking": "".join(self.reasoning), "signature": ""})
        if self.content:
            content.append({"type": "text", "text": self.text})
        content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.parsed()} for c in self.calls]
        return self._message(content, _STOP_REASONS.get(self.final_finish, "end_turn"))


def _text_of(content: Any) -> str:
    """A message's text: a string as it is, text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """A Messages request in the chat shape (``callscope serve --model`` renders that): ``system`` first, text
    blocks as content, ``tool_use`` blocks as ``tool_calls``, ``tool_result`` blocks as tool messages, tools as the
    OpenAI array, ``tool_choice`` ``auto|any|tool|none`` as ``auto|required|{function}|none``."""
    chat = {k: v for k, v in body.items() if k not in ("system", "messages", "tools", "tool_choice")}
    messages: list[dict[str, Any]] = []
    system = _text_of(body.get("system"))
    if system:
        messages.append({"role": "system", "content": system})
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        for result in (b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"):
            messages.append({"role": "tool", "tool_call_id": result.get("tool_use_id") or "",
                             "content": _text_of(result.get("content"))})
        text = _text_of(content)
        calls = [{"id": b.get("id") or "", "type": "function",
                  "function": {"name": b.get("name") or "", "arguments": dumps(b.get("input") or {})}}
                 for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        if text or calls or not blocks:
            messages.append({"role": message.get("role"), "content": text or None,
                             **({"tool_calls": calls} if calls else {})})
    chat["messages"] = messages
    if isinstance(body.get("tools"), list):
        chat["tools"] = [{"type": "function", "function": {"name": t.get("name"), **described(t),
                                                           "parameters": schema_of(t)}}
                         if isinstance(t, dict) and "name" in t else t for t in body["tools"]]
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        kind = choice.get("type")
        chat["tool_choice"] = ({"type": "function", "function": {"name": choice.get("name")}} if kind == "tool"
                               else {"any": "required"}.get(str(kind), kind))
    return chat


SPEC = ProtocolSpec(
    id=PROTOCOL,
    label=AnthropicReader.label,
    path=AnthropicReader.path,
    reader=AnthropicReader,
    end_events=("message_stop",),
    end_text="message_stop",
    recognise=_recognise,
    naive=naive_read,
    api_key_env=API_KEY_ENV,
    auth=auth,
    body=request_body,
    writer=AnthropicWriter,
    chat_request=chat_request,
)
