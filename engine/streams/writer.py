"""What a server of a protocol sends: one response written as its events, from protocol-neutral chunks.

The reverse of a :class:`~callscope.engine.streams.reader.ProtocolReader`. A
response is a list of :class:`~callscope.engine.core.wire.WireChunk` (role,
content, reasoning, a call's header, its argument fragments, the finish), what
a streaming policy emits or what a recorded stream meant. Each protocol's
:class:`ProtocolWriter` (``ProtocolSpec.writer``) turns them into the events a
server of that protocol sends (:meth:`~ProtocolWriter.start`,
:meth:`~ProtocolWriter.write`, :meth:`~ProtocolWriter.end`), and into the one
JSON body it answers a request that did not ask for a stream
(:meth:`~ProtocolWriter.message`). ``callscope serve`` uses them to serve a
recording of one protocol to a client of another.

Calls are keyed by the chunk's ``index`` (a recording's wire index: an
Anthropic block number, a Responses output position) and numbered 0, 1, 2...
in the order they open. Every event is one SSE event, its text ending in the
blank line that dispatches it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from callscope.engine.core.wire import ARGUMENTS, CONTENT, FINISH, HEADER, REASONING, ROLE, StreamIdentity, WireChunk

#: A finish in any protocol's words, in the chat vocabulary the writers start from.
_FINISHES = {"tool_calls": "tool_calls", "function_call": "tool_calls", "tool_use": "tool_calls",
             "length": "length", "max_tokens": "length", "incomplete": "length", "max_output_tokens": "length",
             "content_filter": "content_filter", "refusal": "content_filter"}


def sse(data: Any, event: str | None = None) -> str:
    """One SSE event: its ``event:`` line when named, its ``data:`` line (compact JSON), the blank line."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return (f"event: {event}\n" if event else "") + f"data: {text}\n\n"


@dataclass(slots=True)
class WrittenCall:
    """One call as written so far: its number in the response, id, name and arguments."""

    number: int
    id: str
    name: str
    arguments: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.arguments)

    def parsed(self) -> Any:
        """The arguments as a JSON value (Anthropic's ``input``); the text itself when they do not parse."""
        try:
            return json.loads(self.text or "{}")
        except ValueError:
            return self.text


class ProtocolWriter:
    """Base of one protocol's writer: it keeps the response written so far; subclasses say it in their events."""

    def __init__(self, identity: StreamIdentity, model: str | None = None) -> None:
        self.identity = identity
        self.model = model or identity.model
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[WrittenCall] = []
        self._by_index: dict[Any, WrittenCall] = {}
        self.finish: str | None = None  # in the chat vocabulary (see :func:`finish_of`)

    # ------------------------------------------------------------ what subclasses write

    def start(self) -> list[str]:
        """The events before the first chunk (a ``message_start``, a ``response.created``); none by default."""
        return []

    def events(self, chunk: WireChunk, call: WrittenCall | None) -> list[str]:
        """The events one chunk becomes (after :meth:`take` recorded it; ``call``: the call it belongs to)."""
        raise NotImplementedError

    def end(self) -> list[str]:
        """The events that end the response (``[DONE]``, ``response.completed``, ``message_stop``)."""
        raise NotImplementedError

    def message(self) -> dict[str, Any]:
        """The whole response as the protocol answers a request without ``stream`` (after every chunk)."""
        raise NotImplementedError

    # ------------------------------------------------------------ driving

    def write(self, chunk: WireChunk) -> list[str]:
        """Record ``chunk`` in the response and return its events."""
        return self.events(chunk, self.take(chunk))

    def take(self, chunk: WireChunk) -> WrittenCall | None:
        """Keep what ``chunk`` adds (content, reasoning, a call, arguments, the finish); the call it touches."""
        kind = chunk.kind
        if kind == CONTENT:
            self.content.append(chunk.text)
        elif kind == REASONING:
            self.reasoning.append(chunk.text)
        elif kind == HEADER:
            call = self._by_index.get(chunk.index)
            if call is None:
                call = WrittenCall(len(self.calls), chunk.call_id or self.mint_id(len(self.calls)), chunk.name or "")
                self.calls.append(call)
                self._by_index[chunk.index] = call
            if chunk.text:
                call.arguments.append(chunk.text)
            return call
        elif kind == ARGUMENTS:
            call = self._by_index.get(chunk.index)
            if call is None:  # arguments for a call never opened: open it, nameless (the recording had it so)
                return self.take(WireChunk(chunk.step, chunk.ms, HEADER, chunk.text, chunk.index, chunk.call_id,
                                           chunk.name))
            if chunk.text:
                call.arguments.append(chunk.text)
            return call
        elif kind == FINISH:
            self.finish = finish_of(chunk.finish_reason, bool(self.calls))
        return None

    def write_all(self, chunks: list[WireChunk]) -> list[str]:
        """Every event of a whole response: start, each chunk's, end."""
        events = self.start()
        for chunk in chunks:
            events += self.write(chunk)
        return events + self.end()

    def mint_id(self, number: int) -> str:
        """An id for a call that came without one (deterministic for a stream)."""
        return f"call_{self.identity.completion_id[-12:]}_{number}"

    @property
    def text(self) -> str:
        return "".join(self.content)

    @property
    def final_finish(self) -> str:
        """The finish to report: the one sent, else ``tool_calls`` after calls, else ``stop``."""
        return self.finish or ("tool_calls" if self.calls else "stop")


def finish_of(reason: str | None, has_calls: bool) -> str:
    """Any protocol's finish in the chat vocabulary (``tool_use`` -> ``tool_calls``, ``max_tokens`` -> ``length``...);
    an unknown or ordinary end is ``tool_calls`` after calls, else ``stop``."""
    known = _FINISHES.get(reason or "")
    if known is not None and not (known == "tool_calls" and not has_calls):
        return known
    return "tool_calls" if has_calls else "stop"


def write_response(writer: ProtocolWriter, chunks: list[WireChunk]) -> str:
    """A whole streamed response as one text (tests, exports)."""
    return "".join(writer.write_all(chunks))


def final_message(writer: ProtocolWriter, chunks: list[WireChunk]) -> dict[str, Any]:
    """The non-streamed answer to a request: every chunk taken, then the protocol's message body."""
    for chunk in chunks:
        writer.take(chunk)
    return writer.message()


def neutral_chunks(chunks: list[WireChunk]) -> list[WireChunk]:
    """The chunks that carry the response (no ``role`` chunk: every writer announces the message itself)."""
    return [c for c in chunks if c.kind != ROLE]
