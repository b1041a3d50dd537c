"""Server-sent events as the WHATWG spec reads them, from lines a reader already split and stamped.

The capture client (:mod:`callscope.engine.capture.client`) only splits bytes
into lines (CR, LF and CRLF all end a line) and stamps each with its receive
time; it keeps the blank lines, so a recording keeps every event boundary.
This module turns those lines into events, the way every real client does
(the spec's "interpret an event stream"; httpx-sse and the SDKs' decoders
follow it): a blank line dispatches the event; ``data:`` lines are joined with
``\\n``; one space after the colon is dropped; ``event:``, ``id:`` and ``retry:``
are kept (the last event id carries over to later events); comment lines
(``:``) and unknown fields are ignored; one leading byte-order mark is
stripped; an event with no data is not dispatched. An event still open when
the stream ends is, per the spec, never dispatched by a client: it is handed
over flagged ``terminated=False`` (callscope still shows what arrived, and
client profiles skip it, as the clients do).

Whoever recorded the lines (this capture client, a proxy, a HAR reader)
judges them the same: a protocol module sees :class:`SseEvent` only.

Recordings made before blank lines were kept (``framing="lines"``) had one
event per ``data:`` line; they are still read that way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: Framing of a recording: WHATWG events ended by blank lines, or (old recordings) one event per data line.
EVENTS = "events"
LINES = "lines"
FRAMINGS = (EVENTS, LINES)
BOM = "\ufeff"


@dataclass(slots=True)
class SseEvent:
    """One dispatched event: its fields, when it was dispatched, and the raw lines it was made of."""

    data: str
    event: str = ""  # the ``event:`` field ("" means the default type, ``message``)
    id: str = ""  # the last event id in force
    retry: int | None = None
    ms: float | None = None  # receive time of the line that dispatched it
    lines: tuple[str, ...] = ()  # its raw field lines, as received
    terminated: bool = True  # False: the stream ended before the blank line that would dispatch it

    @property
    def type(self) -> str:
        return self.event or "message"


class EventReader:
    """Lines in (``feed``), events out; ``finish`` hands over an event the stream left open.

    ``framing="lines"`` reads an old recording (no blank lines kept): each
    ``data:`` line is an event of its own.
    """

    __slots__ = ("framing", "_data", "_event", "_id", "_retry", "_lines", "_first", "_last_ms")

    def __init__(self, framing: str = EVENTS) -> None:
        if framing not in FRAMINGS:
            raise ValueError(f"unknown SSE framing {framing!r}")
        self.framing = framing
        self._data: list[str] = []
        self._event = ""
        self._id = ""
        self._retry: int | None = None
        self._lines: list[str] = []
        self._first = True
        self._last_ms: float | None = None

    def feed(self, ms: float | None, line: str) -> SseEvent | None:
        """One line (without its line end); the event it dispatches, if any."""
        if self._first:
            self._first = False
            if line.startswith(BOM):
                line = line[1:]
        if not line:
            return self._dispatch(ms, True)
        if line[0] == ":":
            return None
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        self._lines.append(line)
        self._last_ms = ms
        if name == "data":
            self._data.append(value)
            if self.framing == LINES:
                return self._dispatch(ms, True)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self._retry = int(value)
        return None

    def finish(self) -> SseEvent | None:
        """An event whose blank line never came (the stream was cut, or ended sloppily), flagged unterminated."""
        return self._dispatch(self._last_ms, False)

    @property
    def pending(self) -> bool:
        """Whether field lines have arrived since the last dispatched event."""
        return bool(self._lines)

    def _dispatch(self, ms: float | None, terminated: bool) -> SseEvent | None:
        lines, self._lines = self._lines, []
        if not self._data:  # the spec: an event without data is not dispatched (its type is reset)
            self._event = ""
            self._retry = None
            return None
        data = self._data[0] if len(self._data) == 1 else "\n".join(self._data)
        event = SseEvent(data, self._event, self._id, self._retry, ms, tuple(lines), terminated)
        self._data = []
        self._event = ""
        self._retry = None
        return event


def read_events(lines: Iterable[tuple[float | None, str]], framing: str = EVENTS) -> list[SseEvent]:
    """Every event of recorded lines, the unterminated last one included (flagged)."""
    reader = EventReader(framing)
    events = [event for ms, line in lines if (event := reader.feed(ms, line)) is not None]
    last = reader.finish()
    if last is not None:
        events.append(last)
    return events
