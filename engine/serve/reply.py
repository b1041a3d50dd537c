"""One request's answer, before it goes on the wire: timed pieces of SSE text, or the final message.

:func:`reply_for` decides how a :class:`~.sources.Stream` is said to a client of
a protocol: a captured stream asked in its own protocol is its received lines,
byte for byte, at their recorded times (:class:`RecordedReply`); anything else
is written by the protocol's writer from the chunks (:class:`WrittenReply`):
a generated stream as ``--policy`` emitted it, a captured one in another
protocol (converted) or, with ``--policy atomic``, with each call sent whole.
A quirk is never converted: said in another protocol it would not be the quirk.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from callscope.engine.core.wire import StreamIdentity, WireChunk
from callscope.engine.serve.errors import ServeError
from callscope.engine.serve.sources import Source, Stream
from callscope.engine.streams.protocols import get_protocol
from callscope.engine.streams.writer import ProtocolWriter, final_message, neutral_chunks

#: One piece of the answer: when to send it (ms after the request, as recorded; None: at once), and its text.
Piece = tuple[float | None, str]


class Reply:
    """What one request is answered with: its pieces (streamed) or its message (not streamed)."""

    #: The served stream's name (the turn line says what was served).
    name: str = ""
    identity: StreamIdentity

    async def prepare(self) -> None:
        """Get ready to answer (a live generation renders its prompt); a :class:`ServeError` if it cannot."""

    def pieces(self) -> AsyncIterator[Piece]:
        raise NotImplementedError

    async def message(self) -> dict[str, Any]:
        raise NotImplementedError

    def cancel(self) -> None:
        """The client left: stop producing (a live generation stops between tokens)."""


class WrittenReply(Reply):
    """Chunks said by a protocol's writer, each at its chunk's time."""

    def __init__(self, name: str, chunks: list[WireChunk], writer: ProtocolWriter) -> None:
        self.name = name
        self.chunks = neutral_chunks(chunks)
        self.writer = writer
        self.identity = writer.identity

    def timed(self) -> Iterator[Piece]:
        """Every piece: the writer's opening at the first chunk's time, each chunk's events, the end at the last."""
        times = [c.ms for c in self.chunks if c.ms is not None]
        first, last = (times[0], times[-1]) if times else (None, None)
        opening = self.writer.start()
        if opening:
            yield first, "".join(opening)
        for chunk in self.chunks:
            events = self.writer.write(chunk)
            if events:
                yield chunk.ms, "".join(events)
        yield last, "".join(self.writer.end())

    async def pieces(self) -> AsyncIterator[Piece]:
        for piece in self.timed():
            yield piece

    async def message(self) -> dict[str, Any]:
        return final_message(self.writer, self.chunks)


class RecordedReply(Reply):
    """A captured stream's received lines, as received: those that arrived together go out together."""

    def __init__(self, stream: Stream, message_writer: ProtocolWriter) -> None:
        assert stream.lines is not None
        self.name = stream.name
        self.identity = stream.identity
        self.lines = stream.lines
        self.stream = stream
        self.message_writer = message_writer

    async def pieces(self) -> AsyncIterator[Piece]:
        group: list[str] = []
        at: float | None = None
        for ms, line in self.lines:
            if group and ms != at:
                yield at, "\n".join(group) + "\n"
                group = []
            at = ms
            group.append(line)
        if group:
            yield at, "\n".join(group) + "\n"

    async def message(self) -> dict[str, Any]:
        return final_message(self.message_writer, neutral_chunks(self.stream.chunks))


def reply_for(stream: Stream, protocol: str, *, atomic: bool = False, model: str | None = None) -> Reply:
    """How ``stream`` is said to a client of ``protocol`` (see the module's docstring); a :class:`ServeError`
    when it cannot be (a quirk asked in another protocol)."""
    spec = get_protocol(protocol)
    if stream.captured and not atomic and stream.protocol in (protocol, None):
        return RecordedReply(stream, spec.writer(stream.identity, model))
    if stream.quirk:
        recorded = get_protocol(stream.protocol).label if stream.protocol else "a protocol callscope does not know"
        where = get_protocol(stream.protocol).path if stream.protocol else "its own endpoint"
        raise ServeError(400, f"the quirk {stream.name!r} was recorded in {recorded} and is served only as recorded "
                         f"(said in {spec.label} it would not be the quirk any more): ask {where}",
                         code="protocol_mismatch")
    chunks = stream.atomic if atomic and stream.captured else stream.chunks
    return WrittenReply(stream.name, chunks, spec.writer(stream.identity, model))


class RecordingReplier:
    """A source's streams: the one the request's ``model`` names, else the next."""

    def __init__(self, source: Source, atomic: bool = False) -> None:
        self.source = source
        self.atomic = atomic
        self.label = source.label

    def names(self) -> list[str]:
        return self.source.names()

    def reply(self, protocol: str, body: dict[str, Any]) -> Reply:
        model = body.get("model") if isinstance(body.get("model"), str) else None
        return reply_for(self.source.pick(model), protocol, atomic=self.atomic, model=model)
