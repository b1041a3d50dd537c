"""A streaming protocol defined outside callscope, for the tests: ``tinyproto`` at ``/v1/tiny/stream``.

It proves that a protocol is one declaration: this file holds the reader and
the spec, and registering the spec (``register_protocol(SPEC)``) is all it takes
for capture (CLI and window), the proxy, the client profiles and ``serve`` to
speak it. Nothing in callscope is edited for it.

Wire format: one JSON object per event, each with a ``type``::

    data: {"type": "tiny.text", "text": "Let me check."}
    data: {"type": "tiny.call", "slot": 0, "id": "t1", "name": "get_weather"}
    data: {"type": "tiny.args", "slot": 0, "part": "{\\"city\\": "}
    data: {"type": "tiny.args", "slot": 0, "part": "\\"Paris\\"}"}
    data: {"type": "tiny.end", "why": "calls"}

The request carries ``prompt`` (the chat messages' text, joined) instead of
``messages``, and the key goes in ``x-tiny-key`` (from ``$TINY_API_KEY``).
"""

from __future__ import annotations

from typing import Any

from callscope.engine.core import rules
from callscope.engine.core.wire import CONTENT, HEADER, WireChunk
from callscope.engine.streams.assembly import Call, StreamBuilder
from callscope.engine.streams.reader import ProtocolReader, good_index
from callscope.engine.streams.spec import NaiveCalls, ProtocolSpec
from callscope.engine.streams.sse import SseEvent
from callscope.engine.streams.writer import ProtocolWriter, WrittenCall, sse

PROTOCOL_ID = "tinyproto"
PATH = "/v1/tiny/stream"
KEY_ENV = "TINY_API_KEY"
END = "tiny.end"


class TinyReader(ProtocolReader):
    protocol = PROTOCOL_ID
    label = "Tiny test protocol"
    path = PATH

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ended = False
        self._slots: dict[int, Call] = {}

    def chunk(self, step: int, ms: float | None, silence: float, event: SseEvent, obj: dict[str, Any]) -> None:
        builder = self.primary
        kind = self.typed(builder, step, event, obj)
        if kind == "tiny.text" and isinstance(obj.get("text"), str):
            builder.content(step, ms, obj["text"])
        elif kind == "tiny.call":
            slot = obj.get("slot")
            if not good_index(slot):
                self.wrong_type(builder, step, "slot", slot, "a call number")
                return
            self._slots[slot] = builder.open_call(step, ms, silence, slot, obj.get("id"), obj.get("name"))
        elif kind == "tiny.args":
            call = self._slots.get(obj.get("slot"))  # type: ignore[arg-type]
            if call is None:
                builder.violate(rules.DELTA_UNANNOUNCED, step, f"arguments for slot {obj.get('slot')}, never opened")
                return
            builder.fragment(step, ms, silence, call, str(obj.get("part", "")))
        elif kind == END:
            self.ended = True
            builder.finish_reason_at(step, ms, "tool_calls" if obj.get("why") == "calls" else "stop")

    def finished_properly(self) -> bool:
        return self.ended

    def missing_end(self) -> list[str]:
        return [] if self.ended else [END]

    def truncated(self, builder: StreamBuilder) -> bool:
        return not self.ended


def _recognise(event: SseEvent, data: Any) -> bool:
    return isinstance(data, dict) and str(data.get("type", "")).startswith("tiny.")


def _auth(key: str) -> dict[str, str]:
    return {"x-tiny-key": key} if key else {}


def _body(body: dict[str, Any]) -> dict[str, Any]:
    """Chat-shaped in, ``prompt`` out: the messages' text joined (tools kept as given)."""
    body = dict(body)
    messages = body.pop("messages", None) or []
    body.setdefault("prompt", "\n".join(str(m.get("content") or "") for m in messages))
    return body


def _has_input(body: dict[str, Any]) -> bool:
    return bool(body.get("messages") or body.get("prompt"))


def _naive(obj: dict[str, Any], calls: NaiveCalls, content: dict[int, str]) -> None:
    mine = calls.setdefault(0, {})
    kind = obj.get("type")
    if kind == "tiny.text":
        content[0] = content.get(0, "") + obj["text"]
    elif kind == "tiny.call":
        mine[obj["slot"]] = {"id": obj.get("id") or "", "name": obj.get("name") or "", "arguments": ""}
    elif kind == "tiny.args":
        mine[obj["slot"]]["arguments"] += obj["part"]


class TinyWriter(ProtocolWriter):
    """A tinyproto server: text, a call's header, its argument parts, the end (with why)."""

    def events(self, chunk: WireChunk, call: WrittenCall | None) -> list[str]:
        if chunk.kind == CONTENT and chunk.text:
            return [sse({"type": "tiny.text", "text": chunk.text})]
        if call is None:
            return []
        events = []
        if chunk.kind == HEADER:
            events.append(sse({"type": "tiny.call", "slot": call.number, "id": call.id, "name": call.name}))
        if chunk.text:
            events.append(sse({"type": "tiny.args", "slot": call.number, "part": chunk.text}))
        return events

    def end(self) -> list[str]:
        return [sse({"type": END, "why": "calls" if self.final_finish == "tool_calls" else "stop"})]

    def message(self) -> dict[str, Any]:
        return {"text": self.text, "calls": [{"id": c.id, "name": c.name, "arguments": c.text} for c in self.calls]}


SPEC = ProtocolSpec(
    id=PROTOCOL_ID,
    label=TinyReader.label,
    path=PATH,
    reader=TinyReader,
    end_events=(END,),
    end_text=END,
    recognise=_recognise,
    naive=_naive,
    writer=TinyWriter,
    api_key_env=KEY_ENV,
    auth=_auth,
    body=_body,
    has_input=_has_input,
)


# ---------------------------------------------------------------- what a tinyproto server sends


def event(kind: str, **fields: Any) -> str:
    import json

    return "data: " + json.dumps({"type": f"tiny.{kind}", **fields})


def call_stream(name: str = "get_weather", parts: tuple[str, ...] = ('{"city": ', '"Paris"}')) -> list[str]:
    """A clean stream: a content line, one call in fragments, the end."""
    return [event("text", text="Let me check."), event("call", slot=0, id="t1", name=name),
            *(event("args", slot=0, part=p) for p in parts), event("end", why="calls")]
